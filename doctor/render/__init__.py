"""Renderers turn a Report into text; they decide nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..judge.rules import Rulebook
    from ..report.report import Report

FORMATS = ("text", "json", "junit", "sarif", "markdown", "html")


def render_document(fmt: str, report: Report, rulebook: Rulebook, docs_page: str) -> str:
    """The report as one document: a machine format (json, junit, sarif: plain text, no colour, same
    facts same bytes) or a page for people (markdown, html)."""
    if fmt == "markdown":
        from .markdown import render_markdown

        return render_markdown(report)
    if fmt == "html":
        from .html_report import render_html

        return render_html(report)
    if fmt == "json":
        from .json_report import render_json

        return render_json(report)
    if fmt == "junit":
        from .junit import render_junit

        return render_junit(report)
    if fmt == "sarif":
        from .sarif import render_sarif

        return render_sarif(report, rulebook, docs_page)
    raise ValueError(f"not a document format: {fmt!r}")
