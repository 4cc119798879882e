"""The pieces every Markdown and HTML report is made of (the single report's and the fleet's): a
Markdown table, an HTML table and the self-contained HTML page around them."""

from __future__ import annotations

import html
from collections.abc import Sequence

from ..base.escape import markdown_cell

# Narrower than 40em (a phone) a table's rows become cards: each cell under its column's name, so
# no column is squeezed to a letter's width and nothing scrolls sideways.
PAGE_STYLE = ("body{font-family:sans-serif;line-height:1.4;margin:2em auto;padding:0 2em;max-width:70em}"
              "h1,h2,h3,p,li,td,th{overflow-wrap:break-word}"
              "table{border-collapse:collapse;margin-bottom:1.5em}"
              "th,td{border:1px solid #bbb;padding:.3em .6em;text-align:left;vertical-align:top}th{background:#eee}"
              "td.fail{background:#f8d7da}td.warn{background:#fff1c2}td.error{background:#ecd6f5}td.ok{background:#e3f2e6}"
              "@media (min-width:40em){td:first-child{white-space:nowrap}}"
              "@media (max-width:40em){body{margin:1em auto;padding:0 .75em}"
              "table,tbody,tr,td{display:block}thead{display:none}tr{border:1px solid #bbb;margin-bottom:.6em}"
              "td{border:0;padding:.15em .6em}td::before{content:attr(data-label) \": \";font-size:.85em;color:#555}}")


def markdown_table(columns: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """A GitHub-flavoured Markdown table, one line a row; each cell is text (``|``, newlines, HTML and links in it escaped)."""
    return [_markdown_row(columns), _markdown_row(["---"] * len(columns)), *(_markdown_row(row) for row in rows)]


def _markdown_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(markdown_cell(cell) for cell in cells) + " |"


def html_table(columns: Sequence[str], rows: Sequence[Sequence[str]], classes: Sequence[Sequence[str]] = ()) -> str:
    """A table; each cell names its column (shown above it on a narrow screen); ``classes``, row by
    row, gives each cell a class (its colour: fail, warn, error, ok; "" for none)."""
    header = "<thead><tr>" + "".join(f"<th>{html.escape(column)}</th>" for column in columns) + "</tr></thead>"
    body = ["<tr>" + "".join(_cell(column, cell, css) for column, cell, css in zip(columns, row, classes[index] if classes else [""] * len(row)))
            + "</tr>" for index, row in enumerate(rows)]
    return "\n".join(["<table>", header, "<tbody>", *body, "</tbody>", "</table>"])


def _cell(column: str, cell: str, css: str) -> str:
    attribute = f' class="{css}"' if css else ""
    return f'<td data-label="{html.escape(column)}"{attribute}>{html.escape(cell)}</td>'


def html_page(title: str, body: Sequence[str], style: str = "", script: str = "") -> str:
    """One self-contained page: its style and script inline, nothing fetched when it is viewed."""
    parts = ["<!DOCTYPE html>", '<html lang="en">',
             (f'<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">'
             f'<title>{html.escape(title)}</title>'), f"<style>{PAGE_STYLE}{style}</style>",
             "</head>", "<body>", *body]
    if script:
        parts.append(f"<script>{script}</script>")
    return "\n".join([*parts, "</body>", "</html>", ""])
