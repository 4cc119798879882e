"""The HTML report as a person sees it, in headless Chromium at a phone's width (390 px, emulated as
a mobile device) and at a desktop's (1280 px), measured in the page: nothing scrolls sideways, no
copy button covers code, every chart label lies inside its chart and none covers another, axes
step by 1, 2 or 5, every arm drawn. The page is the report of a recorded measurement of the
misconfigured CNN (tests/fixtures/reports/), rendered without Paddle."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from browser import chromium, png_colours  # noqa: F401 (a fixture)
from conftest import FIXTURES, run_doctor

MEASURED_FACTS = FIXTURES / "reports" / "measured-cnn-facts.json"
VIEWPORTS = {"phone": (390, 844, True), "desktop": (1280, 900, False)}
SMALLEST_TEXT_PX = 9.5  # a chart's tick labels, scaled to a phone's width, stay readable

# What the page's layout gives, as plain data; the checks are in Python, where a failure can say what.
LAYOUT = """JSON.stringify((() => {
  const rect = r => ({left: r.left, top: r.top, right: r.right, bottom: r.bottom});
  const blocks = [...document.querySelectorAll('div.code')].map(block => {
    const range = document.createRange();
    range.selectNodeContents(block.querySelector('code'));
    return {button: rect(block.querySelector('button.copy').getBoundingClientRect()),
            lines: [...range.getClientRects()].map(rect)};
  });
  const charts = [...document.querySelectorAll('svg')].map(svg => {
    const box = svg.viewBox.baseVal, scale = svg.getBoundingClientRect().width / box.width;
    const texts = [...svg.querySelectorAll(':scope > text')].map(text => {
      const b = text.getBBox();
      return {text: text.textContent, anchor: text.getAttribute('text-anchor') || 'start',
              size: parseFloat(text.getAttribute('font-size')) * scale,
              x: text.getAttribute('x'), y: text.getAttribute('y'),
              box: {left: b.x, top: b.y, right: b.x + b.width, bottom: b.y + b.height}};
    });
    return {title: svg.querySelector('title').textContent, width: box.width, height: box.height, texts: texts};
  });
  const cells = [...document.querySelectorAll('td, th')].filter(cell => cell.scrollWidth > cell.clientWidth + 1)
                  .map(cell => cell.textContent);
  return {innerWidth: innerWidth, scrollWidth: document.documentElement.scrollWidth, blocks: blocks,
          charts: charts, overflowingCells: cells, text: document.body.innerText};
})())"""


def overlaps(a: dict, b: dict, slack: float = 0.5) -> bool:
    return (a["left"] + slack < b["right"] and b["left"] + slack < a["right"]
            and a["top"] + slack < b["bottom"] and b["top"] + slack < a["bottom"])


def is_round_step(step: float) -> bool:
    mantissa = step / 10 ** math.floor(math.log10(step))
    return any(math.isclose(mantissa, m, rel_tol=1e-6) for m in (1, 2, 5, 10))


def axis_steps(texts: list[dict], anchor: str, along: str) -> list[list[float]]:
    """The numbers of each axis of a chart: tick labels with ``anchor`` sharing one ``along`` coordinate."""
    axes: dict[str, list[float]] = {}
    for text in texts:
        try:
            value = float(text["text"])
        except ValueError:
            continue
        if text["anchor"] == anchor:
            axes.setdefault(text[along], []).append(value)
    return [values for values in axes.values() if len(values) > 1]


@pytest.fixture(scope="module")
def report_page(tmp_path_factory) -> tuple[Path, dict]:
    folder = tmp_path_factory.mktemp("report")
    page = folder / "report.html"
    assert run_doctor("--facts", str(MEASURED_FACTS), "--format", "html", "--output", str(page)).returncode == 1
    report = json.loads(run_doctor("--facts", str(MEASURED_FACTS), "--json").stdout)
    return page, report


def layout_of(browser, page: Path, viewport: str) -> dict:
    """The page's layout at ``viewport``; its full-page screenshot is written beside the page."""
    width, height, mobile = VIEWPORTS[viewport]
    session = browser.open(page.as_uri(), width, height, mobile)
    layout = json.loads(browser.evaluate(session, LAYOUT))
    shot = page.with_name(f"{page.stem}-{viewport}.png")
    browser.screenshot(session, shot)
    assert png_colours(shot.read_bytes()) > 16, f"{shot} is blank"
    assert layout["innerWidth"] == width  # on the phone: the page asks for the device's width, not a zoomed-out 980 px
    return layout


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_nothing_scrolls_sideways_and_no_copy_button_covers_code(chromium, report_page, viewport):
    page, _ = report_page
    layout = layout_of(chromium, page, viewport)
    assert layout["scrollWidth"] <= layout["innerWidth"], f"the page is {layout['scrollWidth']} px wide"
    assert layout["overflowingCells"] == []
    assert len(layout["blocks"]) >= 3  # the recommendation and the fixes
    for block in layout["blocks"]:
        assert block["lines"] and not any(overlaps(block["button"], line) for line in block["lines"]), block


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_every_chart_label_is_inside_its_chart_readable_and_uncovered(chromium, report_page, viewport):
    page, _ = report_page
    charts = layout_of(chromium, page, viewport)["charts"]
    assert len(charts) >= 10
    for chart in charts:
        inside = {"left": 0, "top": 0, "right": chart["width"], "bottom": chart["height"]}
        for text in chart["texts"]:
            box = text["box"]
            assert (box["left"] >= inside["left"] and box["top"] >= inside["top"] and box["right"] <= inside["right"]
                    and box["bottom"] <= inside["bottom"]), (chart["title"], text)
            assert text["size"] >= SMALLEST_TEXT_PX, (chart["title"], text)
        for index, text in enumerate(chart["texts"]):
            for other in chart["texts"][index + 1:]:
                assert not overlaps(text["box"], other["box"]), (chart["title"], text["text"], other["text"])


def test_axes_step_by_one_two_or_five_and_every_arm_is_drawn(chromium, report_page):
    page, report = report_page
    layout = layout_of(chromium, page, "desktop")
    charts = {chart["title"]: " ".join(text["text"] for text in chart["texts"]) for chart in layout["charts"]}
    for chart in layout["charts"]:
        axes = axis_steps(chart["texts"], "middle", "y") + axis_steps(chart["texts"], "end", "x")
        assert axes, chart["title"]
        for values in axes:
            steps = {round(b - a, 9) for a, b in zip(values, values[1:])}
            assert len(steps) == 1 and is_round_step(steps.pop()) and values[0] <= 0, (chart["title"], values)
    recorded = json.loads(MEASURED_FACTS.read_text())["verification"]["experiments"]
    experiments = {e["name"]: e for e in recorded if e["status"] == "measured"}
    for name in ("onednn", "threads", "ir_optim", "feed_fetch", "bf16"):
        drawn = charts[f"{name} latency"]
        assert all(arm["label"] in drawn for arm in experiments[name]["arms"]), (name, drawn)
    assert all(_wrapped(arm["label"], charts["serving layouts"]) for arm in experiments["layouts"]["arms"])
    assert "first request" in charts["warm-up"] and "steady-state p50" in charts["warm-up"]
    assert "rebuilding the optimised graph" in charts["cold start"] and "loading it from the cache" in charts["cold start"]
    assert "1 thread (threads=1)" in charts["threads sweep"] and "1 threads" not in layout["text"]
    for row in report["graph"]["coverage"]:
        assert _wrapped(row["title"], charts["fusion coverage"]), row["title"]


def _wrapped(label: str, drawn: str) -> bool:
    """``label`` drawn in full, on one line or wrapped over several."""
    return " ".join(label.split()) in " ".join(drawn.split())


@pytest.mark.parametrize("high", [0.004, 0.62, 1.163, 7.2, 20.6, 27.4, 100.0, 172.0, 1234.0])
def test_axis_ticks_are_round_and_cover_the_values(high):
    from paddle_doctor.render.svg import nice_ticks, tick_text

    ticks, step = nice_ticks(0.0, high)
    assert is_round_step(step) and ticks[0] == 0 and ticks[-1] >= high and ticks[-2] < high and 3 <= len(ticks) <= 7
    labels = [tick_text(tick, step) for tick in ticks]
    assert all(math.isclose(float(label), index * step) for index, label in enumerate(labels)), labels
    assert len({len(label.split(".")[-1]) for label in labels if "." in label}) <= 1  # one number of decimals


def test_a_long_label_is_wrapped_whole():
    from paddle_doctor.render.svg import LABEL_FONT, text_width, wrap

    label = "matmul + elementwise_add (+ activation) fused as fc, with a_name_longer_than_any_line_can_hold_at_all"
    lines = wrap(label, 160, LABEL_FONT)
    assert "".join(lines).replace(" ", "") == label.replace(" ", "") and len(lines) > 2
    assert all(text_width(line, LABEL_FONT) <= 160 for line in lines)


def test_the_threads_sweep_says_one_thread_and_the_warm_up_both_requests():
    page = run_doctor("--facts", str(MEASURED_FACTS), "--format", "html").stdout
    assert "1 thread (threads=1)" in page and "1 threads" not in page
    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    warm_up = page[page.index("<title>warm-up</title>"):]
    assert "first request" in warm_up[:warm_up.index("</svg>")] and "steady-state p50" in warm_up[:warm_up.index("</svg>")]
