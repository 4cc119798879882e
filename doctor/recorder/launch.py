"""``paddle-doctor record [--dir FOLDER] -- CMD ARGS...``: runs CMD in this process's place
(``exec``: the same PID, so a container's PID 1 and its signals are unchanged) with recording on.
CMD's Python must have paddle-doctor installed (its ``.pth`` starts the hook)."""

from __future__ import annotations

import os
import sys

from .location import FOLDER, SWITCH

USAGE = "usage: paddle-doctor record [--dir FOLDER] -- CMD [ARGS...]"
HELP = f"""{USAGE}

Runs CMD in place of this process (same PID) with PADDLE_DOCTOR_RECORD=1: every Paddle predictor
CMD builds is recorded in FOLDER/<pid>-<start ticks>.json (default $PADDLE_DOCTOR_RECORD_DIR, else
/tmp/paddle-doctor-record-<uid>), which `paddle-doctor --pid PID` then reads.
"""


def main(args: list[str]) -> None:
    folder = None
    while args and args[0] != "--":
        if args[0] in ("-h", "--help"):
            sys.stdout.write(HELP)
            sys.exit(0)
        if args[0] == "--dir" and len(args) > 1:
            folder, args = args[1], args[2:]
        elif args[0].startswith("--dir="):
            folder, args = args[0].partition("=")[2], args[1:]
        else:
            break
    command = args[1:] if args[:1] == ["--"] else args
    if not command or command[0].startswith("-"):
        _fail(f"expected the command to run after --; {USAGE}")
    os.environ[SWITCH] = "1"
    if folder:
        os.environ[FOLDER] = os.path.abspath(folder)
    sys.stdout.flush()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        _fail(f"cannot run {command[0]!r}: {exc.strerror or exc}; expected a program on PATH or a path to one")


def _fail(message: str) -> None:
    sys.stderr.write(f"paddle-doctor record: {message}\n")
    sys.exit(2)
