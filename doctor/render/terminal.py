"""The terminal the text report goes to: a width it fits."""

from __future__ import annotations

import shutil

from rich.console import Console

MIN_WIDTH = 80  # narrower, the terminal wraps the lines: nothing is cut


def terminal_console(stderr: bool = False) -> Console:
    """A console whose width comes from COLUMNS or the terminal (0 or junk in COLUMNS is passed over), at least MIN_WIDTH."""
    return Console(stderr=stderr, width=max(shutil.get_terminal_size(fallback=(MIN_WIDTH, 24)).columns, MIN_WIDTH))
