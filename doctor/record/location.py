"""Where a process's record lives: ``$PADDLE_DOCTOR_RECORD_DIR``, else
``/tmp/paddle-doctor-record-<uid>``, one file ``<pid>-<start ticks>.json`` per process, so the doctor
finds a process's record from its PID and start time and never another's that got the same PID."""

from __future__ import annotations

import os
from pathlib import Path

SWITCH = "PADDLE_DOCTOR_RECORD"
FOLDER = "PADDLE_DOCTOR_RECORD_DIR"
INTERVAL = "PADDLE_DOCTOR_RECORD_INTERVAL"
NATIVE = "PADDLE_DOCTOR_RECORD_NATIVE"  # "0": the runs noted in Python even where the C recorder is built
DEFAULT_INTERVAL_S = 5.0


def record_folder(environ: dict[str, str] | os._Environ[str], uid: int) -> Path:
    return Path(environ.get(FOLDER) or f"/tmp/paddle-doctor-record-{uid}")


def record_name(pid: int, start_ticks: int) -> str:
    return f"{pid}-{start_ticks}.json"


def start_ticks(stat_text: str) -> int | None:
    """Field 22 of /proc/PID/stat (the start time in clock ticks after boot); the command name in
    field 2 may hold spaces and parentheses, so fields are counted after its last ``)``."""
    _, _, rest = stat_text.rpartition(")")
    fields = rest.split()
    try:
        return int(fields[19])
    except (IndexError, ValueError):
        return None


def start_ticks_of(pid: int | str) -> int | None:
    """The start ticks of a process of this PID namespace (``"self"`` for this one), None where it is gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return start_ticks(stat.read())
    except OSError:
        return None


def own_start_ticks() -> int:
    return start_ticks_of("self") or 0
