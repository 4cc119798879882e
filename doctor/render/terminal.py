"""The terminal the text report goes to: a width it fits, and lines without trailing spaces."""

from __future__ import annotations

import re
import shutil
import sys
from typing import IO

from rich.console import Console

MIN_WIDTH = 80  # narrower, the terminal wraps the lines: nothing is cut
# spaces before the end of a line, with the style codes that may follow them on a colour terminal
TRAILING_SPACES = re.compile(r" +((?:\x1b\[[0-9;]*m)*)$", re.MULTILINE)


def strip_trailing_spaces(text: str) -> str:
    """Rich pads wrapped and indented lines to the width; what is copied or diffed should not carry that."""
    return TRAILING_SPACES.sub(r"\1", text)


class LineTrimmer:
    """A stream that writes whole lines, each without its trailing spaces, to the stream it wraps."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream, self.pending = stream, ""

    def write(self, text: str) -> int:
        lines = (self.pending + text).split("\n")
        self.pending = lines.pop()
        if lines:
            self.stream.write(strip_trailing_spaces("\n".join(lines)) + "\n")
        return len(text)

    def flush(self) -> None:
        """Out with the line so far; its trailing spaces wait for what follows them (or the end of the line)."""
        shown = self.pending.rstrip(" ")
        self.stream.write(shown)
        self.pending = self.pending[len(shown):]
        self.stream.flush()

    def __getattr__(self, name: str):  # isatty, fileno, encoding: the wrapped stream's
        return getattr(self.stream, name)


def terminal_width() -> int:
    """COLUMNS or the terminal's width (0 or junk in COLUMNS is passed over), at least MIN_WIDTH."""
    return max(shutil.get_terminal_size(fallback=(MIN_WIDTH, 24)).columns, MIN_WIDTH)


def terminal_console(stderr: bool = False) -> Console:
    """A console as wide as :func:`terminal_width`."""
    width = terminal_width()
    if stderr:  # the progress line redraws itself in place: it is never trimmed
        return Console(stderr=True, width=width)
    # rich types its file as IO[str]; it calls write and flush, which LineTrimmer has, and the
    # stream's isatty, fileno and encoding, which LineTrimmer passes on from the stream it wraps
    return Console(file=LineTrimmer(sys.stdout), width=width)  # type: ignore[arg-type]
