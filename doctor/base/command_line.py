"""What a Python interpreter's command line runs, read from its arguments (never run): a module, code, its
standard input or a script, past the interpreter's own options."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

INTERPRETERS = ("python", "pypy")
PYTHON_VALUED = ("-W", "-X", "-Q")  # the interpreter's options that take a value (``-m`` and ``-c`` end them)


def is_interpreter(argv: Sequence[str]) -> bool:
    return bool(argv) and posixpath.basename(argv[0]).startswith(INTERPRETERS)


def python_target(argv: Sequence[str]) -> tuple[str, str, list[str]] | None:
    """``("-m", module, its arguments)``, ``("-c", code, ...)``, ``("-", "", ...)`` (its standard input) or
    ``("", script, ...)``: what the interpreter ``argv`` starts runs (a value the command line leaves out is
    ``""``), and the arguments after it; None where ``argv`` is no interpreter's, or one that runs nothing."""
    if not is_interpreter(argv):
        return None
    rest = list(argv[1:])
    index = 0
    while index < len(rest) and rest[index].startswith("-") and rest[index] not in ("-m", "-c", "-"):
        index += 2 if rest[index] in PYTHON_VALUED else 1
    if index >= len(rest):
        return None
    first = rest[index]
    if first in ("-m", "-c"):
        return first, rest[index + 1] if index + 1 < len(rest) else "", rest[index + 2:]
    return ("-", "", rest[index + 1:]) if first == "-" else ("", first, rest[index + 1:])
