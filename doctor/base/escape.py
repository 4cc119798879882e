"""Escaping for each format a report is rendered in, for the values that came from the inspected
container (paths, source text, environment values, model and pod names): shown as text, they never
act as markup, a link, a heading or a terminal command.

HTML escapes with ``html.escape`` (its links are https or relative, ``doctor/judge/rule_docs.py``); JUnit XML
with ElementTree; JSON and SARIF with ``json``. Code text is quoted where it is made
(``doctor/base/quoting.py``), not here.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import quote

T = TypeVar("T")

# The patterns are compiled where first used (``re`` keeps them): a healthcheck writes one terminal line, and no Markdown.
# C0 controls but tab and newline, DEL, C1 controls, and the marks that reorder text (bidi overrides)
TERMINAL_CONTROL = "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
LINE_CONTROL = "[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]"
LINE_BREAKS = "\r\n|[\r\n\x0b\x0c\x85\u2028\u2029]"
# a backtick, a tag's or autolink's "<", the "]" that would end a link's text (before "(", "[" or a
# definition's ":"), a backslash that would escape what follows, an "&" that starts a character reference
MARKDOWN_INLINE = r"[`<]|\](?=[(\[:])|\\(?=[!-/:-@\[-`{-~])|&(?=#?\w+;)"
MARKDOWN_BLOCK_START = r"^(?=#{1,6}(?:\s|$)|>|[-+*](?:\s|$)|[-*_](?:\s*[-*_]){2,}\s*$|~{3,}|=+\s*$)"
MARKDOWN_ORDERED_START = r"^(\d{1,9})(?=[.)](?:\s|$))"
WRITTEN_OUT = {"\n": "\\n", "\r": "\\r"}
CODE_FIELDS = ("code", "snippet")  # Change.code, Recommendation.snippet: lines of code, pasted as they are


def terminal_text(text: str) -> str:
    """Text a terminal shows as it is: ESC, CR, BEL and the other control characters (and the marks
    that reorder text) written as ``\\x1b``, ``\\u202e``; tabs and line breaks kept."""
    return re.sub(TERMINAL_CONTROL, _written_out, text)


def terminal_line(text: str) -> str:
    """One line for a terminal (a message, an error): as :func:`terminal_text`, line breaks written out too (``\\n``)."""
    return re.sub(LINE_CONTROL, _written_out, text)


def _written_out(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return WRITTEN_OUT.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def markdown_inline(text: str) -> str:
    """Text inside a Markdown line: one line (line breaks become spaces), and no raw HTML, link,
    code span or character reference from it."""
    return re.sub(MARKDOWN_INLINE, lambda match: "\\" + match.group(), re.sub(LINE_BREAKS, " ", text))


def markdown_line(text: str) -> str:
    """Text that starts a Markdown line: as :func:`markdown_inline`, and it starts no heading, list,
    quote, rule or fence."""
    inline = markdown_inline(text).lstrip()
    return re.sub(MARKDOWN_ORDERED_START, r"\1\\", re.sub(MARKDOWN_BLOCK_START, r"\\", inline, count=1), count=1)


def markdown_cell(text: str) -> str:
    """Text in a Markdown table cell: as :func:`markdown_inline`, and ``|`` ends no cell."""
    return markdown_inline(text).replace("|", "\\|")


def uri_path(path: str) -> str:
    """A relative path as a URI reference: percent-encoded (UTF-8), ``/`` kept."""
    return quote(path, safe="/")


def escaped(value: T, escape: Callable[[str], str], code: Callable[[str], str] | None = None) -> T:
    """A copy of a report (dataclasses, lists, tuples, dicts) with ``escape`` applied to every string
    in it, dictionary keys too, and ``code`` (if given) to the fields that hold code (a fix's code, a
    snippet); enum members are the doctor's own words and stay."""
    if isinstance(value, enum.Enum):
        return value
    if isinstance(value, str):
        return escape(value)  # type: ignore[return-value]  # value is a str, so T is str
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {f.name: escaped(getattr(value, f.name), code if code and f.name in CODE_FIELDS else escape, code)
                   for f in dataclasses.fields(value) if f.init}
        return dataclasses.replace(value, **changes)
    if isinstance(value, dict):
        # type(value) is dict or a subclass, built from its (key, value) pairs as dict is; mypy sees only type[T]
        return type(value)((escaped(k, escape, code), escaped(v, escape, code)) for k, v in value.items())  # type: ignore[call-arg]
    if isinstance(value, (list, tuple)):
        return type(value)(escaped(item, escape, code) for item in value)  # type: ignore[call-arg]  # a list or tuple, from its items
    return value
