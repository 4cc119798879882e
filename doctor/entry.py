"""The ``paddle-doctor`` command: ``healthcheck`` goes straight to its lean module, and ``record``
execs the service, before the click command line (and rich) are imported; everything else goes to
the click command line. Each command is imported only when it is the one asked for."""

from __future__ import annotations

import gc
import os
import sys

from .render.ascii import ascii_where_needed


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    ascii_where_needed(sys.stdout, sys.stderr)
    if args[:1] == ["healthcheck"]:
        healthcheck(args[1:])
    if args[:1] == ["record"]:
        from .recorder.launch import main as record

        record(args[1:])
    from .cli import main as command_line

    command_line(args)


def healthcheck(args: list[str]) -> None:
    """Run every probe period from the service's own CPU quota, so it pays for nothing it does not
    need: no cycle collector (it lives at most its --budget and allocates a few MB), and once its
    answer is written, no tearing down of the interpreter (a tenth of its CPU time)."""
    gc.disable()
    from .health.healthcheck import main as answer

    try:
        answer(args)
    except SystemExit as answered:
        code = answered.code if isinstance(answered.code, int) else 1
    else:
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
