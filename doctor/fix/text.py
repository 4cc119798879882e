"""An edit of one file's text: the span it replaces and what replaces it, in character offsets of the text
as read (each editor of a file kind returns these; ``files.py`` applies, checks and shows them)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TextEdit:
    """Replace ``text[start:end]`` with ``replacement`` (``start == end``: insert there). ``why`` names the
    rule and the change for people (``PD-CPU-010 threads 8 -> 2``), shown above its hunk."""

    start: int
    end: int
    replacement: str
    why: str = ""

    def __post_init__(self) -> None:
        if not 0 <= self.start <= self.end:
            raise ValueError(f"an edit's span must have 0 <= start <= end, not {self.start}..{self.end}")


def line_start(text: str, line: int) -> int:
    """The offset where 1-based ``line`` begins (the text's length past its last line)."""
    offset = 0
    for _ in range(line - 1):
        found = text.find("\n", offset)
        if found < 0:
            return len(text)
        offset = found + 1
    return offset


def offset_of_utf8(text: str, line: int, byte_column: int) -> int:
    """The offset of 1-based ``line``'s column as ``ast`` counts it (UTF-8 bytes into the line)."""
    start = line_start(text, line)
    end = text.find("\n", start)
    row = text[start:] if end < 0 else text[start:end]
    return start + len(row.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


class EditRefused(ValueError):
    """An edit the fix cannot make safely: one line naming the file, what is wrong and what was expected."""


class FixRefused(ValueError):
    """A fix refused as a whole (a file changed since it was read, two changes on one span, a link out of the
    project): one line naming the file, what is wrong and what was expected; nothing was written."""
