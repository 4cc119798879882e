"""The terminal the text report goes to: a width it fits, and ASCII where the output cannot encode its symbols."""

from __future__ import annotations

import codecs
import shutil

from rich.console import Console

MIN_WIDTH = 80  # narrower, the terminal wraps the lines: nothing is cut
ASCII_FOR = {
    "✓": "+", "✗": "x", "→": "->", "—": "-", "–": "-", "•": "*", "·": "-", "…": "...", "µ": "u", "×": "x",
    "‘": "'", "’": "'", "“": '"', "”": '"', "≥": ">=", "≤": "<=", "±": "+-",
}
ERRORS = "paddle-doctor-ascii"


def terminal_console(stderr: bool = False) -> Console:
    """A console whose width comes from COLUMNS or the terminal (0 or junk in COLUMNS is passed over), at least MIN_WIDTH."""
    return Console(stderr=stderr, width=max(shutil.get_terminal_size(fallback=(MIN_WIDTH, 24)).columns, MIN_WIDTH))


def ascii_where_needed(*streams) -> None:
    """Streams whose encoding (a POSIX locale's ASCII) cannot write the report's symbols write ASCII for them instead."""
    for stream in streams:
        encoding = getattr(stream, "encoding", None) or "ascii"
        try:
            "".join(ASCII_FOR).encode(encoding)
        except UnicodeEncodeError:
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors=ERRORS)
        except LookupError:
            continue


def _in_ascii(error: UnicodeEncodeError) -> tuple[str, int]:
    unencodable = error.object[error.start:error.end]
    return "".join(ASCII_FOR.get(char, "?") for char in unencodable), error.end


codecs.register_error(ERRORS, _in_ascii)
