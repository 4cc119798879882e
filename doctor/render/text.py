"""The report for people: host summary, findings grouped by area, problems expanded with cause and fix."""

from __future__ import annotations

from rich.console import Console, Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from ..report import Report, ReportFinding

STATUS_STYLE = {
    "fail": ("✗ FAIL", "bold red"),
    "warn": ("! WARN", "bold yellow"),
    "error": ("? ERROR", "bold magenta"),
    "pass": ("✓ pass", "green"),
    "skip": ("- skip", "dim"),
}
SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}


def render_text(report: Report, console: Console, show_passed: bool = True) -> None:
    console.print(Text(f"paddle-doctor {report.tool['version']}", style="bold"))
    console.print(_host_table(report))
    current_area = None
    for finding in report.findings:
        if not show_passed and finding.status in ("pass", "skip"):
            continue
        if finding.area != current_area:
            current_area = finding.area
            console.print()
            console.print(Text(report.areas.get(current_area, current_area), style="bold underline"))
        console.print(_finding_line(finding))
        if finding.status in ("fail", "warn", "error"):
            console.print(Padding(_details(finding), (0, 0, 0, 10)))
    for failure in report.check_errors:
        console.print(Text(f"check could not be loaded: {failure['entry_point']}: {failure['reason']}", style="bold magenta"))
    console.print()
    console.print(_summary(report))


def _host_table(report: Report) -> Table:
    host = report.host
    table = Table.grid(padding=(0, 2))
    table.add_column(style="bold")
    table.add_column()
    flags = ", ".join(host["cpu_flags"]) or "none of avx/avx2/avx512"
    table.add_row("CPU", f"{host['cpu_model'] or 'unknown'} ({host['cpu_arch'] or '?'}); {flags}")
    if host["cpu_budget"] is not None:
        table.add_row("CPU budget", f"{host['cpu_budget']:g} CPUs, from {host['cpu_budget_source']}")
    table.add_row("Memory", f"limit {_bytes(host['memory_limit_bytes'])}; /dev/shm {_bytes(host['shm_bytes'])}")
    table.add_row("Container", str(host["container"]))
    if host["paddle_version"]:
        paddle = f"{host['paddle_distribution']} {host['paddle_version']} ({host['paddle_status']})"
    else:
        paddle = host["paddle_status"]
    table.add_row("Paddle", f"{paddle}; python {host['python'] or '?'}")
    return table


def _finding_line(finding: ReportFinding) -> Text:
    label, style = STATUS_STYLE[finding.status]
    line = Text()
    line.append(f"{label:<8} ", style=style)
    line.append(f"{finding.rule_id:<14}", style="bold")
    line.append(f"{finding.severity:<8} ", style=SEVERITY_STYLE.get(finding.severity, ""))
    line.append(finding.title)
    if finding.status in ("pass", "skip"):
        line.append(f" — {finding.message}", style="dim")
    return line


def _details(finding: ReportFinding) -> Group:
    parts = [Text(finding.message)]
    if finding.observed:
        parts.append(Text.assemble(("observed: ", "bold"), finding.observed))
    if finding.expected:
        parts.append(Text.assemble(("expected: ", "bold"), finding.expected))
    if finding.status != "error":
        parts.append(Text.assemble(("cause: ", "bold"), finding.cause))
        parts.append(Text.assemble(("fix: ", "bold"), finding.fix.text))
        for change in finding.fix.changes:
            parts.append(Text(f"  [{change['kind']}] ", style="dim") + Text(change["code"], style="cyan"))
        if finding.experiment:
            parts.append(Text(f"confirm: paddle-doctor --model PATH measures this (experiment '{finding.experiment}')", style="dim"))
    parts.append(Text(f"more: {finding.explain}", style="dim"))
    return Group(*parts)


def _summary(report: Report) -> Text:
    counts = report.summary.counts
    words = [f"{counts.get(key, 0)} {name}" for key, name in
             (("fail", "failed"), ("warn", "warnings"), ("error", "errors"), ("pass", "passed"), ("skip", "skipped"))]
    text = Text(", ".join(words))
    if report.summary.ignored:
        text.append(f"; ignored {', '.join(report.summary.ignored)}")
    verdict = "problems" if report.exit_code else "nothing"
    text.append(f" — {verdict} at or above '{report.fail_on}' (exit {report.exit_code})", style="bold")
    return text


def _bytes(value: int | None) -> str:
    if value is None:
        return "none"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(value)
