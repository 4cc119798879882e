"""The report for people: host summary, findings grouped by area, problems expanded with cause and fix."""

from __future__ import annotations

from rich.console import Console, Group
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
    shown = [f for f in report.findings if show_passed or f.status not in ("pass", "skip")]
    for area in dict.fromkeys(f.area for f in shown):
        console.print()
        console.print(Text(report.areas.get(area, area), style="bold underline"))
        table = Table.grid(padding=(0, 1))
        table.add_column(no_wrap=True, min_width=7)
        table.add_column(no_wrap=True, min_width=13)
        table.add_column(no_wrap=True, min_width=7)
        table.add_column(ratio=1)
        for finding in (f for f in shown if f.area == area):
            label, style = STATUS_STYLE[finding.status]
            table.add_row(
                Text(label, style=style),
                Text(finding.rule_id, style="bold"),
                Text(finding.severity, style=SEVERITY_STYLE.get(finding.severity, "")),
                _body(finding),
            )
        console.print(table)
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
        table.add_row("CPU budget", f"{host['cpu_budget']:g} CPUs, from {host['cpu_budget_limited_by']} ({host['cpu_budget_file'] or '?'})")
    table.add_row("Memory", f"limit {_bytes(host['memory_limit_bytes'])}; /dev/shm {_bytes(host['shm_bytes'])}")
    table.add_row("Container", str(host["container"]))
    if host["paddle_version"]:
        paddle = f"{host['paddle_distribution']} {host['paddle_version']} ({host['paddle_status']})"
    else:
        paddle = host["paddle_status"]
    table.add_row("Paddle", f"{paddle}; python {host['python'] or '?'}")
    return table


def _body(finding: ReportFinding) -> Text | Group:
    if finding.status in ("pass", "skip"):
        return Text(finding.message, style="dim")
    parts = [Text(finding.title, style="bold"), Text(finding.message)]
    if finding.observed:
        parts.append(Text.assemble(("observed ", "bold"), finding.observed))
    if finding.expected:
        parts.append(Text.assemble(("expected ", "bold"), finding.expected))
    if finding.status != "error":
        parts.append(Text.assemble(("cause    ", "bold"), finding.cause))
        parts.append(Text.assemble(("fix      ", "bold"), finding.fix.text))
        for change in finding.fix.changes:
            parts.append(Text.assemble((f"  {change['kind']}: ", "dim"), (change["code"], "cyan")))
        if finding.experiment:
            parts.append(Text(f"confirm with a measurement: paddle-doctor --model PATH (experiment '{finding.experiment}')", style="dim"))
    more = f"more: {finding.explain}" + (f" · {finding.docs_link}" if finding.docs_link else "")
    parts.append(Text(more, style="dim"))
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
