"""The report as one self-contained HTML page: the summary, the problems with their fix code and
copy buttons, and charts drawn from the measurements (inline SVG: nothing is fetched when viewed)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from ..base.vocabulary import Status
from ..base.words import counted
from ..judge.verdict_words import effect_words, says_something, speed_words
from ..report.report import Report, ReportFinding
from .digest import ENFORCED_WHY, STATUS_LABEL, Table, collapsed_areas, digest, input_tables, measured_experiments, problem_table
from .page import html_page, html_table
from .service_lines import service_lines
from .svg import Bar, Point, RangeRow, bar_chart, range_chart, scatter_chart
from .text import measurement_lines

if TYPE_CHECKING:
    from ..facts.verification import ArmResult, ExperimentResult

# The copy button sits above its code, never over it; charts fill their column, two columns where there is room.
STYLE = ("pre{background:#f4f4f4;padding:.6em;overflow-x:auto;white-space:pre;margin-top:0}.code{margin:.6em 0}"
         ".copy{display:block;margin:0 0 .2em auto}h3.fail{color:#b00}h3.warn{color:#a60}h3.error{color:#909}"
         ".charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,28em),1fr));gap:0 2.5em}"
         "figure{margin:1em 0;min-width:0}figure svg{display:block;width:100%;height:auto}"
         "figcaption{font-size:.9em;color:#444}")
COPY_SCRIPT = ("document.querySelectorAll('button.copy').forEach(function(button){button.addEventListener('click',function(){"
               "var code=button.parentNode.querySelector('code').textContent;"
               "if(navigator.clipboard){navigator.clipboard.writeText(code).then(function(){button.textContent='copied';},"
               "function(){button.textContent='select and copy';});}});});")


def render_html(report: Report) -> str:
    summary = digest(report)
    title = f"paddle-doctor {report.tool.version}"
    body = [f"<h1>{html.escape(title)}</h1>", f"<p><strong>{html.escape(summary.verdict)}</strong></p>"]
    if summary.problems:
        body += _table(problem_table(summary))
    recommendation = summary.recommendation
    if recommendation:
        body += [f"<h2>{html.escape(recommendation.title)}</h2>", f"<p>{html.escape(recommendation.headline)}</p>"]
        body += [f"<p>{html.escape(recommendation.noise)}</p>"] if recommendation.noise else []
        if recommendation.enforced:
            body.append(f"<p>Enforced: {html.escape(', '.join(recommendation.enforced))} ({ENFORCED_WHY}).</p>")
        if recommendation.wrapper:
            body += [f"<p>{html.escape(recommendation.wrapper.words)}</p>", code_block(recommendation.wrapper.code)]
        body += [code_block(recommendation.snippet)] if recommendation.snippet else []
        body.append("<ul>" + "".join(f"<li>{html.escape(step)}</li>" for step in recommendation.steps) + "</ul>")
    for table in input_tables(summary):
        body += _table(table)
    service = service_lines(report.service)
    if service:
        body += ["<h2>Service</h2>", "<ul>" + "".join(f"<li>{html.escape(line)}</li>" for line in service) + "</ul>"]
    body += _charts(report)
    if summary.problems:
        body.append("<h2>Problems</h2>")
        body += [_finding(problem.finding) for problem in summary.problems]
    areas = collapsed_areas(report)
    if areas:
        body.append("<h2>Passed and skipped</h2><ul>")
        body += [f"<li><strong>{html.escape(title)}</strong>: "
                 + html.escape("; ".join(f"{STATUS_LABEL[status]} {' '.join(ids)}" for status, ids in ids.items() if ids)) + "</li>"
                 for title, ids in areas]
        body.append("</ul>")
    return html_page(title, body, STYLE, COPY_SCRIPT)


def code_block(code: str) -> str:
    """Code with a button that copies exactly its text."""
    return (f'<div class="code"><button class="copy" type="button">copy</button>'
            f"<pre><code>{html.escape(code.rstrip(chr(10)))}</code></pre></div>")


def _table(table: Table) -> list[str]:
    title, columns, rows = table
    return [f"<h2>{html.escape(title)}</h2>", html_table(columns, rows)]


def _finding(finding: ReportFinding) -> str:
    label = STATUS_LABEL[finding.status]
    verdict = f" [{finding.verdict}]" if finding.verdict else ""
    parts = [f'<h3 class="{finding.status}">{html.escape(f"{label} {finding.rule_id}: {finding.title}{verdict}")}</h3>',
             f"<p>{html.escape(finding.message)}</p>"]
    if finding.status != Status.ERROR:
        parts.append(f"<p><strong>Fix:</strong> {html.escape(finding.fix.text)}</p>")
        for change in finding.fix.changes:
            parts += [f"<p>{html.escape(change.kind)}:</p>", code_block(change.code)]
    if finding.experiment_result:
        parts += [f"<p>{html.escape(line.plain)}</p>" for line in measurement_lines(finding.experiment_result)]
    if finding.docs_link:
        parts.append(f'<p>More: <code>{html.escape(finding.explain)}</code> · '
                     f'<a href="{html.escape(finding.docs_link)}">{html.escape(finding.docs_link)}</a></p>')
    return "\n".join(parts)


def _figure(svg: str, caption: str) -> str:
    return f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption></figure>"


def _charts(report: Report) -> list[str]:
    """Latency (p50 dot, p90 tick, whisker to p99) and speed-ratio CIs of every measured experiment and
    the recommendation; the threads sweep; the fusion coverage; the serving layouts."""
    figures = []
    recommendation = report.verification.recommendation if report.verification else None
    if recommendation:
        arms = [recommendation.baseline, recommendation.recommended]
        figures.append(_figure(range_chart("recommendation latency", _latency_rows(arms), "ms"),
                               "Latency of the service's configuration and the recommended one: dot p50, tick p90, whisker to p99"))
    for experiment in measured_experiments(report):
        if experiment.name == "layouts":
            figures.append(_layouts_figure(experiment))
            continue
        special = _result_figure(experiment)
        if special:
            figures.append(special)
            continue
        rows = _latency_rows(experiment.arms)
        if rows:
            figures.append(_figure(range_chart(f"{experiment.name} latency", rows, "ms"),
                                   f"{experiment.name}: latency per arm over the runs of its race, measured in "
                                   f"interleaved rounds (dot p50, tick p90, whisker to p99)"))
        # an interval that says nothing is no bar to draw: its words say so in the findings
        ratios = [RangeRow(c.candidate, c.ci_low, c.ratio, c.ci_high, note=f"{effect_words(c)}, {c.rounds} rounds",
                           value=speed_words(c.ratio)) for c in experiment.comparisons if says_something(c)]
        if ratios:
            figures.append(_figure(range_chart(f"{experiment.name} speed ratio", ratios, "x", reference=1.0),
                                   f"{experiment.name}: speed ratio over the baseline with its confidence interval "
                                   f"(right of the dashed line is faster)"))
        if experiment.name == "threads":
            bars = [Bar(f"{counted(arm.config.threads, 'thread')} ({arm.label})", arm.p50, f"{arm.p50:.2f} ms")
                    for arm in experiment.arms if arm.p50]
            figures.append(_figure(bar_chart("threads sweep", bars, "ms"), "Threads sweep: p50 latency per thread count"))
    graph = report.graph
    if graph and graph.coverage:
        bars = [Bar(row.title, (row.coverage or 0.0) * 100, f"{row.fused}/{row.fusible} fused") for row in graph.coverage]
        figures.append(_figure(bar_chart("fusion coverage", bars, "%", top=100.0), "Fusion coverage per pattern"))
    return ["<h2>Measurements</h2>", '<div class="charts">', *figures, "</div>"] if figures else []


def _latency_rows(arms: list[ArmResult]) -> list[RangeRow]:
    """A row for each arm with a p50 measured."""
    rows = []
    for arm in arms:
        if not arm.p50:
            continue
        p50 = arm.p50
        p90, p99 = arm.p90 or p50, arm.p99 or p50
        rows.append(RangeRow(arm.label, p50, p50, p99, [p90],
                             note=f"p50 {p50:.2f} ms, p90 {p90:.2f} ms, p99 {p99:.2f} ms over {arm.runs} runs",
                             value=f"p50 {p50:.2f} ms"))
    return rows


def _layouts_figure(experiment: ExperimentResult) -> str:
    points = [Point(arm.label, arm.throughput_rps, arm.p99) for arm in experiment.arms
              if arm.throughput_rps is not None and arm.p99 is not None]
    return _figure(scatter_chart("serving layouts", points, "req/s", "p99 ms"),
                   "Serving layouts under load: throughput (right is better) against p99 latency (lower is better)")


def _result_figure(experiment: ExperimentResult) -> str | None:
    """The experiments that measure more than latency arms, each with what it compares: the first
    request against the steady state, a cold start rebuilding the graph against one from the cache."""
    if experiment.warmup:
        warmup = experiment.warmup
        bars = [Bar("first request", warmup.first_ms, f"{warmup.first_ms:.2f} ms"),
                Bar("steady-state p50", warmup.steady_p50_ms, f"{warmup.steady_p50_ms:.2f} ms")]
        return _figure(bar_chart("warm-up", bars, "ms"), "Warm-up: the first request after the predictor is created "
                                                         "against the warmed-up p50")
    if experiment.optim_cache:
        cold = experiment.optim_cache
        bars = [Bar("rebuilding the optimised graph", cold.rebuild_graph_ms, f"{cold.rebuild_graph_ms:.0f} ms"),
                Bar("loading it from the cache", cold.optimised_cache_ms, f"{cold.optimised_cache_ms:.0f} ms")]
        return _figure(bar_chart("cold start", bars, "ms"), "Cold start (creating the predictor and its first request), median")
    return None
