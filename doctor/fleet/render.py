"""The fleet report as text, JSON, Markdown or a self-contained HTML page; every format shows the same
tables, built once here. Renderers decide nothing."""

from __future__ import annotations

import dataclasses
import html
import json

from ..render.escape import escaped, markdown_line, terminal_line
from ..render.page import html_page, html_table, markdown_table
from ..serde import to_data
from .grouping import FleetReport, Group
from .reports import PodFacts

FLEET_FORMATS = ("text", "json", "markdown", "html")
GROUP_COLUMNS = ("group", "pods", "count", "differs from the usual group", "problems")
FACT_COLUMNS = ("fact", "usual group")
UNREACHED_COLUMNS = ("pod", "node", "why", "detail")


def headline(report: FleetReport) -> str:
    outliers = sum(len(group.pods) for group in report.outliers)
    return (f"{_count(report.pods, 'pod')} in {_count(len(report.groups), 'group')}; "
            f"{_count(outliers, 'pod')} differ{'s' if outliers == 1 else ''} from the usual group; "
            f"{len(report.unreached)} not diagnosed")


def verdict(report: FleetReport) -> str:
    named = f" ({', '.join(report.problem_pods)})" if report.problem_pods else ""
    return (f"{_count(len(report.problem_pods), 'pod')} with problems at or above '{report.fail_on}'{named}, "
            f"{len(report.unreached)} not diagnosed (exit {report.exit_code})")


def group_rows(report: FleetReport) -> list[tuple[str, ...]]:
    return [(_group_name(index, group), _pods(group), str(len(group.pods)),
             "; ".join(f"{d.what}: {d.usual} → {d.here}" for d in group.differences) or "-",
             "; ".join(f"{f.rule_id} {f.status} ({f.severity}): {f.title}" for f in group.findings) or "none")
            for index, group in enumerate(report.groups, 1)]


def fact_rows(report: FleetReport) -> list[tuple[str, ...]]:
    if not report.groups:
        return []
    usual = report.groups[0].facts
    return [(item.metadata["label"], getattr(usual, item.name)) for item in dataclasses.fields(PodFacts)]


def unreached_rows(report: FleetReport) -> list[tuple[str, ...]]:
    return [(u.pod, u.node or "-", u.reason.value.replace("_", " "), u.detail) for u in report.unreached]


def tables(report: FleetReport) -> list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]]:
    """(title, columns, rows) of every table the report shows, empty tables left out."""
    found = [("Groups", GROUP_COLUMNS, group_rows(report)), ("The usual group", FACT_COLUMNS, fact_rows(report)),
             ("Not diagnosed", UNREACHED_COLUMNS, unreached_rows(report))]
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
    for title, columns, rows in tables(report):
        body += [f"<h2>{html.escape(title)}</h2>", html_table(columns, rows)]
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


def _group_name(index: int, group: Group) -> str:
    return f"{index} (usual)" if group.usual else str(index)


def _pods(group: Group) -> str:
    nodes = f" (on {', '.join(group.nodes)})" if group.nodes else ""
    return ", ".join(group.pods) + nodes


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"
