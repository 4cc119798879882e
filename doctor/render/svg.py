"""Charts as inline SVG, drawn here from the measurements: the HTML report needs nothing from the
network, nor a plotting library, when it is viewed.

Every chart is WIDTH user units wide and scales to the width of its column (a phone's or a
desktop's): each row's label sits on its own line above the row, in full (wrapped where it is long),
with the row's value at the right; axes step by 1, 2 or 5 times a power of ten."""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

WIDTH, PAD = 420, 8
LABEL_FONT, TICK_FONT = 14, 12
LINE_H, MARK_H, AXIS_H, PLOT_H = 18, 16, 30, 160
CHAR_EM = 0.62  # a generous average advance of a sans-serif character: estimated text stays inside its room
COLOURS = ("#1f6fb2", "#d9730d", "#2e8b57", "#b23a48", "#6a4c93", "#8a8a00")


@dataclass
class RangeRow:
    """One row of a range chart: a whisker from ``low`` to ``high``, a dot at ``mark``, small ticks at
    ``ticks``; ``value`` is written beside the label, ``note`` shows on hover."""

    label: str
    low: float
    mark: float
    high: float
    ticks: list[float] = field(default_factory=list)
    note: str = ""
    value: str = ""


@dataclass
class Bar:
    label: str
    value: float
    note: str = ""


@dataclass
class Point:
    label: str
    x: float
    y: float


@dataclass
class Axis:
    """Round ticks over a range, laid out between ``left`` and ``right``."""

    ticks: list[float]
    labels: list[str]
    left: float
    right: float

    def at(self, value: float) -> float:
        low, high = self.ticks[0], self.ticks[-1]
        return self.left + (value - low) / ((high - low) or 1.0) * (self.right - self.left)


def text_width(text: str, font: float) -> float:
    return len(text) * font * CHAR_EM


def nice_ticks(low: float, high: float, steps: int = 5) -> tuple[list[float], float]:
    """Ticks covering ``low``..``high`` at a step of 1, 2 or 5 x 10^k, at most about ``steps`` steps; and the step."""
    if high <= low:
        high = low + (abs(low) or 1.0)
    rough = (high - low) / steps
    power = 10 ** math.floor(math.log10(rough))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= rough * (1 - 1e-9))
    first, last = math.floor(low / step + 1e-9), math.ceil(high / step - 1e-9)
    digits = _digits(step)
    return [round(index * step, digits + 2) for index in range(first, last + 1)], step


def tick_text(value: float, step: float) -> str:
    text = f"{value:.{_digits(step)}f}"
    return "0" if float(text) == 0 else text


def _digits(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-9))


def wrap(text: str, width: float, font: float) -> list[str]:
    """``text`` in lines no wider than ``width``, broken at spaces (a word too long for a line is cut)."""
    per_line = max(1, int(width / (font * CHAR_EM)))
    lines: list[str] = []
    for word in text.split():
        for piece in (word[start:start + per_line] for start in range(0, len(word), per_line)):
            if lines and len(lines[-1]) + 1 + len(piece) <= per_line:
                lines[-1] += " " + piece
            else:
                lines.append(piece)
    return lines or [""]


def horizontal_axis(low: float, high: float, unit: str, left: float = PAD, right: float = WIDTH - PAD) -> Axis:
    """Round ticks from ``low`` to ``high``; the first and last labels and the unit stay inside ``left``..``right``."""
    ticks, step = nice_ticks(low, high)
    labels = [tick_text(tick, step) for tick in ticks]
    inner_right = right - text_width(unit, TICK_FONT) - 6 - text_width(labels[-1], TICK_FONT) / 2
    return Axis(ticks, labels, left + text_width(labels[0], TICK_FONT) / 2, inner_right)


def range_chart(title: str, rows: list[RangeRow], unit: str, reference: float | None = None) -> str:
    values = [value for row in rows for value in (row.low, row.high, *row.ticks)] + [0.0]
    if reference is not None:
        values.append(reference)
    axis = horizontal_axis(min(values), max(values), unit)
    parts, y = [], 0.0
    for index, row in enumerate(rows):
        colour = COLOURS[index % len(COLOURS)]
        labels, y = _row_label(row.label, row.value, y)
        mark_y = y + MARK_H / 2
        parts += [*labels,
                  f'<line x1="{axis.at(row.low):.1f}" y1="{mark_y}" x2="{axis.at(row.high):.1f}" y2="{mark_y}" stroke="{colour}" stroke-width="2"/>']
        for value in (row.low, row.high, *row.ticks):
            parts.append(f'<line x1="{axis.at(value):.1f}" y1="{mark_y - 5}" x2="{axis.at(value):.1f}" y2="{mark_y + 5}" stroke="{colour}"/>')
        if reference is not None:  # across the row's marks only: the labels stay clear of it
            x = axis.at(reference)
            parts.append(f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + MARK_H + 4}" stroke="#888" stroke-dasharray="4 3"/>')
        parts.append(f'<circle cx="{axis.at(row.mark):.1f}" cy="{mark_y}" r="4" fill="{colour}"><title>{html.escape(row.note)}</title></circle>')
        y += MARK_H + 4
    parts.append(_axis_line(axis, y, unit))
    return _svg(title, y + AXIS_H, parts)


def bar_chart(title: str, bars: list[Bar], unit: str, top: float | None = None) -> str:
    axis = horizontal_axis(0.0, top or max((bar.value for bar in bars), default=1.0), unit)
    parts, y = [], 0.0
    for bar in bars:
        labels, y = _row_label(bar.label, bar.note, y)
        width = max(axis.at(bar.value) - axis.left, 1.0)
        parts += [*labels, (f'<rect x="{axis.left:.1f}" y="{y + 3}" width="{width:.1f}" height="{MARK_H - 6}" fill="{COLOURS[0]}">'
                           f'<title>{html.escape(bar.note)}</title></rect>')]
        y += MARK_H + 4
    parts.append(_axis_line(axis, y, unit))
    return _svg(title, y + AXIS_H, parts)


def scatter_chart(title: str, points: list[Point], x_unit: str, y_unit: str) -> str:
    """The points in their colours, and below the plot a legend naming each (labels next to points
    that lie close together would cover each other)."""
    y_ticks, y_step = nice_ticks(0.0, max((p.y for p in points), default=1.0))
    y_labels = [tick_text(tick, y_step) for tick in y_ticks]
    left = PAD + max(text_width(label, TICK_FONT) for label in y_labels) + 6
    axis = horizontal_axis(0.0, max((p.x for p in points), default=1.0), x_unit, left=left)
    top, bottom = LINE_H + 6, LINE_H + 6 + PLOT_H

    def y_at(value: float) -> float:
        return bottom - value / y_ticks[-1] * PLOT_H

    parts = [f'<text x="{PAD}" y="{LINE_H - 4}" font-size="{TICK_FONT}">{html.escape(y_unit)}</text>',
             f'<line x1="{axis.left:.1f}" y1="{top}" x2="{axis.left:.1f}" y2="{bottom}" stroke="#444"/>']
    for tick, label in zip(y_ticks, y_labels):
        parts.append(f'<text x="{axis.left - 6:.1f}" y="{y_at(tick) + 4:.1f}" font-size="{TICK_FONT}" text-anchor="end">{label}</text>')
    parts.append(_axis_line(axis, bottom, x_unit))
    y: float = bottom + AXIS_H
    for index, point in enumerate(points):
        colour = COLOURS[index % len(COLOURS)]
        parts.append(f'<circle cx="{axis.at(point.x):.1f}" cy="{y_at(point.y):.1f}" r="5" fill="{colour}">'
                     f'<title>{html.escape(point.label)}</title></circle>')
        value = f"{point.x:.3g} {x_unit}, {point.y:.3g} {y_unit}"
        labels, below = _row_label(point.label, value, y, indent=16)
        parts += [f'<circle cx="{PAD + 5}" cy="{y + LINE_H / 2:.1f}" r="5" fill="{colour}"/>', *labels]
        y = below + 4
    return _svg(title, y, parts)


def _row_label(label: str, value: str, y: float, indent: float = 0) -> tuple[list[str], float]:
    """A row's label, wrapped to leave room for its value on the first line; and the y below it."""
    room = WIDTH - 2 * PAD - indent - (text_width(value, LABEL_FONT) + 12 if value else 0)
    lines = wrap(label, room, LABEL_FONT)
    parts = [f'<text x="{PAD + indent}" y="{y + (index + 1) * LINE_H - 4}" font-size="{LABEL_FONT}">{html.escape(line)}</text>'
             for index, line in enumerate(lines)]
    if value:
        parts.append(f'<text x="{WIDTH - PAD}" y="{y + LINE_H - 4}" font-size="{LABEL_FONT}" text-anchor="end" '
                     f'fill="#333">{html.escape(value)}</text>')
    return parts, y + len(lines) * LINE_H


def _axis_line(axis: Axis, y: float, unit: str) -> str:
    parts = [f'<line x1="{axis.left:.1f}" y1="{y}" x2="{axis.right:.1f}" y2="{y}" stroke="#444"/>']
    for tick, label in zip(axis.ticks, axis.labels):
        x = axis.at(tick)
        parts += [f'<line x1="{x:.1f}" y1="{y}" x2="{x:.1f}" y2="{y + 4}" stroke="#444"/>',
                  f'<text x="{x:.1f}" y="{y + 17}" font-size="{TICK_FONT}" text-anchor="middle">{label}</text>']
    parts.append(f'<text x="{WIDTH - PAD}" y="{y + 17}" font-size="{TICK_FONT}" text-anchor="end">{html.escape(unit)}</text>')
    return "".join(parts)


def _svg(title: str, height: float, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH}" height="{height:.0f}" '
            f'viewBox="0 0 {WIDTH} {height:.0f}" font-family="sans-serif"><title>{html.escape(title)}</title>{"".join(parts)}</svg>')

