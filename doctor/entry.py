"""The ``paddle-doctor`` command: ``healthcheck`` goes straight to its lean module, and ``record``
execs the service, before the click command line (and rich) are imported; everything else goes to
the click command line."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    from .render.ascii import ascii_where_needed

    ascii_where_needed(sys.stdout, sys.stderr)
    if args[:1] == ["healthcheck"]:
        from .healthcheck import main as healthcheck

        healthcheck(args[1:])
    if args[:1] == ["record"]:
        from .record.command import main as record

        record(args[1:])
    from .cli import main as command_line

    command_line(args)
