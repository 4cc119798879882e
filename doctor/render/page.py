"""The pieces every Markdown and HTML report is made of (the single report's and the fleet's): a
Markdown table, an HTML table and the self-contained HTML page around them."""

from __future__ import annotations

import html
from collections.abc import Sequence

from .escape import markdown_cell

PAGE_STYLE = ("body{font-family:sans-serif;margin:2em;max-width:70em}table{border-collapse:collapse;margin-bottom:1.5em}"
              "th,td{border:1px solid #bbb;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#eee}")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table, one line a row; each cell is text (``|``, newlines, HTML and links in it escaped)."""
    return [_markdown_row(columns), _markdown_row(["---"] * len(columns)), *(_markdown_row(row) for row in rows)]


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(markdown_cell(cell) for cell in cells) + " |"


def html_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    header = "<tr>" + "".join(f"<th>{html.escape(column)}</th>" for column in columns) + "</tr>"
    body = ["<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows]
    return "\n".join(["<table>", header, *body, "</table>"])


def html_page(title: str, body: Sequence[str], style: str = "", script: str = "") -> str:
    """One self-contained page: its style and script inline, nothing fetched when it is viewed."""
    parts = ["<!DOCTYPE html>", '<html lang="en">',
             f'<head><meta charset="utf-8"><title>{html.escape(title)}</title>', f"<style>{PAGE_STYLE}{style}</style>",
             "</head>", "<body>", *body]
    if script:
        parts.append(f"<script>{script}</script>")
    return "\n".join([*parts, "</body>", "</html>", ""])
