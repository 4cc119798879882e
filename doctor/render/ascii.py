"""ASCII for the symbols the reports use, where the output's encoding (a POSIX locale's) has none.

Lean on purpose: the healthcheck registers it too, and never imports rich.
"""

from __future__ import annotations

import codecs

ASCII_FOR = {
    "✓": "+", "✗": "x", "→": "->", "—": "-", "–": "-", "•": "*", "·": "-", "…": "...", "µ": "u", "×": "x",
    "‘": "'", "’": "'", "“": '"', "”": '"', "≥": ">=", "≤": "<=", "±": "+-",
}
ERRORS = "paddle-doctor-ascii"


def ascii_where_needed(*streams) -> None:
    """Streams whose encoding cannot write the reports' symbols write ASCII for them instead (``?`` for the rest)."""
    for stream in streams:
        try:
            "".join(ASCII_FOR).encode(getattr(stream, "encoding", None) or "ascii")
        except UnicodeEncodeError:
            if hasattr(stream, "reconfigure"):
                stream.reconfigure(errors=ERRORS)
        except LookupError:
            continue


def _in_ascii(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):  # registered for encoding text only
        raise error
    unencodable = error.object[error.start:error.end]
    return "".join(ASCII_FOR.get(char, "?") for char in unencodable), error.end


codecs.register_error(ERRORS, _in_ascii)
