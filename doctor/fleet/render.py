"""The fleet report as text, JSON, Markdown or a self-contained HTML page; every format shows the same
tables, built once here, the pods x findings matrix among them (in HTML each cell coloured by its
status). Renderers decide nothing."""

from __future__ import annotations

import dataclasses
import html
import json

from ..base.escape import escaped, markdown_line, terminal_line
from ..base.serde import to_data
from ..base.vocabulary import Status
from ..base.words import counted
from ..render.page import html_page, html_table, markdown_table
from .grouping import FleetReport, Group, Reference
from .reports import PodFacts

FLEET_FORMATS = ("text", "json", "markdown", "html")
REFERENCE_NAME = {Reference.MAJORITY: "usual group", Reference.HEALTHIEST: "healthiest group"}
UNREACHED_COLUMNS = ("pod", "node", "why", "detail")
NO_PROBLEM = "-"
MATRIX_TITLE = "Findings by pod"
MATRIX_KEY = (f"Each pod's problems by rule: the status (severity) where the rule found a problem, "
              f"{NO_PROBLEM} where it found none (passed, skipped or not run).")
Table = tuple[str, tuple[str, ...], list[tuple[str, ...]]]


def headline(report: FleetReport) -> str:
    outliers = sum(len(group.pods) for group in report.outliers)
    if report.compared_with == Reference.MAJORITY:
        compared = f"{counted(outliers, 'pod')} differ{'s' if outliers == 1 else ''} from the usual group"
    elif report.compared_with == Reference.HEALTHIEST:
        compared = (f"no majority: {counted(outliers, 'pod')} differ{'s' if outliers == 1 else ''} from the healthiest "
                    f"group (group 1, fewest problems)")
    elif report.groups:
        compared = "no majority and no group healthier than the others: the groups are not compared"
    else:
        compared = "no report to compare"
    return f"{counted(report.pods, 'pod')} in {counted(len(report.groups), 'group')}; {compared}; {len(report.unreached)} not diagnosed"


def verdict(report: FleetReport) -> str:
    named = f" ({', '.join(report.problem_pods)})" if report.problem_pods else ""
    return (f"{counted(len(report.problem_pods), 'pod')} with problems at or above '{report.fail_on}'{named}, "
            f"{len(report.unreached)} not diagnosed (exit {report.exit_code})")


def group_table(report: FleetReport) -> Table:
    """Each group's pods, what differs from the group they are compared with (when there is one), its problems."""
    compared = report.reference is not None
    columns = ("group", "pods", "count", *([f"differs from the {REFERENCE_NAME[report.compared_with]}"] if compared else []),
               "problems")
    rows = [(_group_name(index, group, report), _pods(group), str(len(group.pods)),
             *(["; ".join(f"{d.what}: {d.usual} → {d.here}" for d in group.differences) or "-"] if compared else []),
             "; ".join(f"{f.rule_id} {f.status} ({f.severity}): {f.title}" for f in group.findings) or "none")
            for index, group in enumerate(report.groups, 1)]
    return "Groups", columns, rows


def fact_table(report: FleetReport) -> Table:
    """The facts of the group the others are compared with; with none, every group's side by side."""
    shown = [report.reference] if report.reference else report.groups
    names = [f"{REFERENCE_NAME[report.compared_with]}"] if report.reference else [f"group {i}" for i in range(1, len(shown) + 1)]
    rows = [(item.metadata["label"], *(getattr(group.facts, item.name) for group in shown)) for item in dataclasses.fields(PodFacts)]
    title = f"The {REFERENCE_NAME[report.compared_with]}" if report.reference else "Facts by group"
    return title, ("fact", *names), rows if shown else []


def matrix(report: FleetReport) -> tuple[Table, list[list[str]]]:
    """Pods x the rules that found a problem in any of them, and each cell's class (its status, or ok)."""
    rules = sorted({finding.rule_id for group in report.groups for finding in group.findings})
    rows, classes = [], []
    for index, group in enumerate(report.groups, 1):
        found = {finding.rule_id: finding for finding in group.findings}
        cells = [(f"{found[rule].status} ({found[rule].severity})", Status(found[rule].status).value) if rule in found
                 else (NO_PROBLEM, "ok") for rule in rules]
        for pod in group.pods:
            rows.append((pod, str(index), *(text for text, _ in cells)))
            classes.append(["", "", *(css for _, css in cells)])
    return (MATRIX_TITLE, ("pod", "group", *rules), rows if rules else []), classes


def unreached_rows(report: FleetReport) -> list[tuple[str, ...]]:
    return [(u.pod, u.node or "-", u.reason.value.replace("_", " "), u.detail) for u in report.unreached]


def tables(report: FleetReport) -> list[Table]:
    """(title, columns, rows) of every table the report shows, empty tables left out."""
    found = [group_table(report), matrix(report)[0], fact_table(report), ("Not diagnosed", UNREACHED_COLUMNS, unreached_rows(report))]
    return [table for table in found if table[2]]


def render_fleet_json(report: FleetReport) -> str:
    return json.dumps(to_data(report), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def render_fleet_markdown(report: FleetReport) -> str:
    lines = ["# paddle-doctor fleet", "", headline(report), ""]
    for title, columns, rows in tables(report):
        lines += [f"## {title}", "", *markdown_table(columns, rows), ""]
    return "\n".join(lines + [markdown_line(verdict(report)), ""])


def render_fleet_html(report: FleetReport) -> str:
    body = ["<h1>paddle-doctor fleet</h1>", f"<p>{html.escape(headline(report))}</p>"]
    _, classes = matrix(report)
    for title, columns, rows in tables(report):
        body.append(f"<h2>{html.escape(title)}</h2>")
        if title == MATRIX_TITLE:
            body += [f"<p>{html.escape(MATRIX_KEY)}</p>", html_table(columns, rows, classes)]
        else:
            body.append(html_table(columns, rows))
    return html_page("paddle-doctor fleet", [*body, f"<p>{html.escape(verdict(report))}</p>"])


def render_fleet_text(report: FleetReport, console) -> None:
    """For people, on a rich Console: the same tables as rich tables, their text shown as it is (no markup)."""
    from rich.table import Table
    from rich.text import Text

    report = escaped(report, terminal_line)
    console.print(Text(f"paddle-doctor fleet: {headline(report)}"))
    for title, columns, rows in tables(report):
        table = Table(title=title, title_justify="left", show_lines=True)
        for column in columns:
            table.add_column(column)
        for row in rows:
            table.add_row(*map(Text, row))
        console.print(table)
    console.print(Text(verdict(report)))


def render_fleet(fmt: str, report: FleetReport) -> str:
    """A machine or page format (json, markdown, html) as text."""
    renderers = {"json": render_fleet_json, "markdown": render_fleet_markdown, "html": render_fleet_html}
    return renderers[fmt](report)


def _group_name(index: int, group: Group, report: FleetReport) -> str:
    if group is report.reference:
        return f"{index} ({REFERENCE_NAME[report.compared_with].split()[0]})"
    return str(index)


def _pods(group: Group) -> str:
    nodes = f" (on {', '.join(group.nodes)})" if group.nodes else ""
    return ", ".join(group.pods) + nodes
