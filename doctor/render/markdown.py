"""The report as GitHub-flavoured Markdown, for $GITHUB_STEP_SUMMARY or a GitLab job summary: the
summary and the problems, with tables and the fix code in fenced blocks."""

from __future__ import annotations

import re

from ..base.escape import markdown_inline, markdown_line
from ..base.vocabulary import Status
from ..report.report import Report
from .digest import ENFORCED_WHY, STATUS_LABEL, Table, collapsed_areas, digest, input_tables, problem_table
from .page import markdown_table
from .service_lines import service_lines


def render_markdown(report: Report) -> str:
    summary = digest(report)
    lines = [f"# paddle-doctor {markdown_inline(report.tool.version)}", "", f"**{markdown_inline(summary.verdict)}**", ""]
    if summary.problems:
        lines += _table(problem_table(summary))
    if summary.recommendation:
        recommendation = summary.recommendation
        lines += [f"## {markdown_inline(recommendation.title)}", "", markdown_line(recommendation.headline), ""]
        lines += [markdown_line(recommendation.noise), ""] if recommendation.noise else []
        if recommendation.enforced:
            lines += [f"Enforced: {markdown_inline(', '.join(recommendation.enforced))} ({ENFORCED_WHY}).", ""]
        if recommendation.wrapper:
            lines += [markdown_line(recommendation.wrapper.words), "", *fenced(recommendation.wrapper.code, "text"), ""]
        lines += [*fenced(recommendation.snippet, "python"), ""] if recommendation.snippet else []
        lines += [f"- {markdown_line(step)}" for step in recommendation.steps] + [""]
    for table in input_tables(summary):
        lines += _table(table)
    service = service_lines(report.service)
    if service:
        lines += ["## Service", "", *(f"- {markdown_line(line)}" for line in service), ""]
    for problem in summary.problems:
        finding = problem.finding
        lines += [f"### {STATUS_LABEL[finding.status]} {markdown_inline(f'{finding.rule_id}: {finding.title}')}", "",
                  markdown_line(finding.message), ""]
        if finding.status != Status.ERROR:
            lines += [f"**Fix:** {markdown_inline(finding.fix.text)}", ""]
            for change in finding.fix.changes:
                lines += [*fenced(change.code, change.kind), ""]
        if finding.docs_link:
            lines += [f"More: `{finding.explain}` · [{finding.rule_id}]({finding.docs_link})", ""]
    areas = collapsed_areas(report)
    if areas:
        lines += ["## Passed and skipped", ""]
        lines += [f"- **{markdown_inline(title)}**: " + "; ".join(f"{STATUS_LABEL[status]} {' '.join(ids)}" for status, ids in ids.items() if ids)
                  for title, ids in areas]
        lines.append("")
    return "\n".join(lines)


def fenced(code: str, language: str) -> list[str]:
    """A fenced code block long enough that no backtick run in the code closes it."""
    longest = max((len(run) for run in re.findall(r"`+", code)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", code.rstrip("\n"), fence]


def _table(table: Table) -> list[str]:
    title, columns, rows = table
    return [f"## {markdown_inline(title)}", "", *markdown_table(columns, rows), ""]
