"""Charts as inline SVG, drawn here from the measurements: the HTML report needs nothing from the
network, nor a plotting library, when it is viewed."""

from __future__ import annotations

import html
from dataclasses import dataclass, field

WIDTH, LABEL_W, ROW_H, PAD = 640, 190, 24, 12
PLOT_W = WIDTH - LABEL_W - 2 * PAD
COLOURS = ("#1f6fb2", "#d9730d", "#2e8b57", "#b23a48", "#6a4c93", "#8a8a00")


@dataclass
class RangeRow:
    """One row of a range chart: a whisker from ``low`` to ``high``, a dot at ``mark``, small ticks at ``ticks``."""

    label: str
    low: float
    mark: float
    high: float
    ticks: list[float] = field(default_factory=list)
    note: str = ""


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


def range_chart(title: str, rows: list[RangeRow], unit: str, reference: float | None = None) -> str:
    top = max([r.high for r in rows] + [reference or 0.0]) * 1.08 or 1.0
    bottom = min([r.low for r in rows] + [reference if reference is not None else 0.0, 0.0])
    scale = _scale(bottom, top)
    parts = []
    for index, row in enumerate(rows):
        y = PAD + index * ROW_H + ROW_H / 2
        colour = COLOURS[index % len(COLOURS)]
        parts.append(_label(row.label, y))
        parts.append(f'<line x1="{scale(row.low):.1f}" y1="{y}" x2="{scale(row.high):.1f}" y2="{y}" stroke="{colour}" stroke-width="2"/>')
        for value in (row.low, row.high, *row.ticks):
            parts.append(f'<line x1="{scale(value):.1f}" y1="{y - 5}" x2="{scale(value):.1f}" y2="{y + 5}" stroke="{colour}"/>')
        parts.append(f'<circle cx="{scale(row.mark):.1f}" cy="{y}" r="4" fill="{colour}"><title>{html.escape(row.note)}</title></circle>')
    height = PAD * 2 + len(rows) * ROW_H + 20
    if reference is not None:
        x = scale(reference)
        parts.append(f'<line x1="{x:.1f}" y1="{PAD}" x2="{x:.1f}" y2="{height - 20}" stroke="#888" stroke-dasharray="4 3"/>')
    parts.append(_axis(bottom, top, scale, height - 20, unit))
    return _svg(title, height, parts)


def bar_chart(title: str, bars: list[Bar], unit: str, top: float | None = None) -> str:
    top = top or max((bar.value for bar in bars), default=1.0) * 1.1 or 1.0
    scale = _scale(0.0, top)
    parts = []
    for index, bar in enumerate(bars):
        y = PAD + index * ROW_H
        parts.append(_label(bar.label, y + ROW_H / 2))
        width = max(scale(bar.value) - LABEL_W, 1.0)
        parts.append(f'<rect x="{LABEL_W}" y="{y + 4}" width="{width:.1f}" height="{ROW_H - 8}" fill="{COLOURS[0]}">'
                     f'<title>{html.escape(bar.note)}</title></rect>')
        parts.append(f'<text x="{LABEL_W + width + 4:.1f}" y="{y + ROW_H / 2 + 4}" font-size="11">{html.escape(bar.note)}</text>')
    height = PAD * 2 + len(bars) * ROW_H + 20
    parts.append(_axis(0.0, top, scale, height - 20, unit))
    return _svg(title, height, parts)


def scatter_chart(title: str, points: list[Point], x_unit: str, y_unit: str) -> str:
    height, plot_h = 300, 240
    x_top = max((p.x for p in points), default=1.0) * 1.15 or 1.0
    y_top = max((p.y for p in points), default=1.0) * 1.15 or 1.0
    x_scale = _scale(0.0, x_top)
    parts = [f'<line x1="{LABEL_W}" y1="{PAD}" x2="{LABEL_W}" y2="{PAD + plot_h}" stroke="#444"/>',
             f'<text x="{LABEL_W - 6}" y="{PAD + 10}" font-size="11" text-anchor="end">{y_top:.3g} {html.escape(y_unit)}</text>',
             f'<text x="{LABEL_W - 6}" y="{PAD + plot_h}" font-size="11" text-anchor="end">0</text>']
    for index, point in enumerate(points):
        colour = COLOURS[index % len(COLOURS)]
        x, y = x_scale(point.x), PAD + plot_h - point.y / y_top * plot_h
        parts.append(f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{colour}"><title>{html.escape(point.label)}</title></circle>')
        parts.append(f'<text x="{x + 7:.1f}" y="{y + 4:.1f}" font-size="11">{html.escape(point.label)}</text>')
    parts.append(_axis(0.0, x_top, x_scale, PAD + plot_h, x_unit))
    return _svg(title, height, parts)


def _scale(bottom: float, top: float):
    span = (top - bottom) or 1.0
    return lambda value: LABEL_W + (value - bottom) / span * PLOT_W


def _label(text: str, y: float) -> str:
    return f'<text x="{LABEL_W - 8}" y="{y + 4}" font-size="12" text-anchor="end">{html.escape(text)}</text>'


def _axis(bottom: float, top: float, scale, y: float, unit: str) -> str:
    ticks = [bottom + (top - bottom) * step / 4 for step in range(5)]
    parts = [f'<line x1="{LABEL_W}" y1="{y}" x2="{LABEL_W + PLOT_W}" y2="{y}" stroke="#444"/>']
    for value in ticks:
        parts.append(f'<text x="{scale(value):.1f}" y="{y + 14}" font-size="10" text-anchor="middle">{value:.3g}</text>')
    parts.append(f'<text x="{LABEL_W + PLOT_W}" y="{y + 14}" font-size="10" text-anchor="start" dx="14">{html.escape(unit)}</text>')
    return "".join(parts)


def _svg(title: str, height: float, parts: list[str]) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" role="img" width="{WIDTH + 40}" height="{height:.0f}" '
            f'viewBox="0 0 {WIDTH + 40} {height:.0f}"><title>{html.escape(title)}</title>{"".join(parts)}</svg>')
