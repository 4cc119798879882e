"""Numbers and words as a person reads them in every report: a count with its noun, a size in bytes,
the first clause of a message."""

from __future__ import annotations

from collections import Counter


def counted(number: int, noun: str) -> str:
    """``1 thread``, ``2 threads``: the noun's plural is its singular with an ``s``."""
    return f"{number} {noun}{'' if number == 1 else 's'}"


def byte_size(value: int | None, none: str = "none") -> str:
    """A byte count for people: ``2.0 GiB``; ``none`` where there is none (a memory limit: ``unlimited``)."""
    if value is None:
        return none
    size = float(value)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return str(size)


def shape_options(options: list[str]) -> str:
    """``x:1x3x48x320 x6, x:1x3x48x640 x2``: ``--shape`` options, each with how often it repeats."""
    return ", ".join(f"{option} x{count}" for option, count in Counter(options).items()) or "its default shapes"


def first_clause(message: str) -> str:
    """``message`` up to its first ``; `` outside parentheses: a clause that closes every parenthesis it opens."""
    depth = 0
    for index, char in enumerate(message):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth <= 0 and message.startswith("; ", index):
            return message[:index]
    return message
