"""Where a process's record lives: ``$PADDLE_DOCTOR_RECORD_DIR``, else
``/tmp/paddle-doctor-record-<uid>``, one file ``<pid>-<start ticks>.json`` per process, so the doctor
finds a process's record from its PID and start time and never another's that got the same PID;
and the recorder's other variables, each read by one rule (:func:`switch` for every switch)."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from pathlib import Path

SWITCH = "PADDLE_DOCTOR_RECORD"
FOLDER = "PADDLE_DOCTOR_RECORD_DIR"
INTERVAL = "PADDLE_DOCTOR_RECORD_INTERVAL"
NATIVE = "PADDLE_DOCTOR_RECORD_NATIVE"  # off: the runs noted in Python even where the C recorder is built
SWITCHES = {SWITCH: False, NATIVE: True}  # each switch, and what it is when unset
ON_WORDS = ("1", "true", "yes", "on")
OFF_WORDS = ("0", "false", "no", "off")
REQUIRE = "require"  # PADDLE_DOCTOR_RECORD_NATIVE=require: on, and where the C recorder is not built, said loudly
DEFAULT_INTERVAL_S = 5.0
INTERVAL_RANGE_S = (0.1, 3600.0)  # an hour at most: what the doctor reads is never older (and Event.wait takes no inf)
QUOTED = 40


def switch(environ: Mapping[str, str], name: str) -> bool:
    """The rule of every switch the recorder reads: unset or blank is its default (:data:`SWITCHES`);
    ``0``, ``false``, ``no``, ``off`` (in any case, spaces around) are off; anything else is on."""
    word = environ.get(name, "").strip().lower()
    return word not in OFF_WORDS if word else SWITCHES[name]


def native_required(environ: Mapping[str, str]) -> bool:
    """Whether ``PADDLE_DOCTOR_RECORD_NATIVE=require`` (in any case, spaces around) demands the C recorder."""
    return environ.get(NATIVE, "").strip().lower() == REQUIRE


def interval_s(environ: Mapping[str, str]) -> tuple[float, str | None]:
    """The seconds between two writes (``PADDLE_DOCTOR_RECORD_INTERVAL``, default 5, held to
    :data:`INTERVAL_RANGE_S`), and what was wrong with the value given, if anything."""
    given = environ.get(INTERVAL, "").strip()
    if not given:
        return DEFAULT_INTERVAL_S, None
    try:
        value = float(given)
    except ValueError:
        value = math.nan
    least, most = INTERVAL_RANGE_S
    used = DEFAULT_INTERVAL_S if math.isnan(value) else min(max(value, least), most)
    if used == value:
        return used, None
    return used, f"{INTERVAL}={given[:QUOTED]!r}: expected seconds from {least:g} to {most:g}; {used:g} used"


def settings_problems(environ: Mapping[str, str]) -> list[str]:
    """What is wrong with the recorder's variables, one line each (the recorder goes on as it says)."""
    problems = [problem for problem in [interval_s(environ)[1]] if problem]
    for name in SWITCHES:
        word = environ.get(name, "").strip()
        demand = f" or {REQUIRE}" if name == NATIVE else ""
        if word and word.lower() not in ON_WORDS + OFF_WORDS and not (demand and native_required(environ)):
            problems.append(f"{name}={word[:QUOTED]!r}: expected {', '.join(ON_WORDS)} or {', '.join(OFF_WORDS)}{demand}; read as on")
    return problems


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
