"""Every child process the doctor starts, and the one path that ends them and the doctor: when it is
done with one, when one overruns its deadline, and on SIGTERM, SIGINT or SIGHUP (how Docker and
Kubernetes stop a container, Ctrl-C, and a closed terminal).

Each child runs in a session of its own, so its whole process group is killed and nothing is left
behind. A stop signal ends every child at once and raises ``Interrupted`` wherever the doctor is,
waiting or reading, so that no phase can hold it; the command then prints what the phases that
finished found. The doctor names its phases (:func:`phase`): the stop says which one it cut short
and which ones finished. A *deferred* phase (running the checks, writing the report: short, and
what the report is made of) is not cut: the signal is recorded, the phase finishes, and the
command says so. Between phases, once one has finished, a signal is recorded and the next phase
that may be cut does not begin. A second signal cuts even those.
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .deferred import deferred_dataclass

if TYPE_CHECKING:
    import subprocess

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
BEFORE_ANY_PHASE = "starting"


class Interrupted(BaseException):
    """A stop signal arrived; the children are already ended. A BaseException, like
    KeyboardInterrupt, so that no ``except Exception`` swallows it."""

    def __init__(self, signal_name: str):
        super().__init__(f"interrupted by {signal_name}")
        self.signal_name = signal_name


@deferred_dataclass
class Stop:
    """The stop signal received, the phase it arrived in, and the phases that had finished before it."""

    signal_name: str
    phase: str
    finished: list[str]
    deferred: bool  # it arrived in a deferred phase, which was finished all the same

    def line(self, reported: bool, exit_code: int) -> str:
        """What the command says on its way out: true for what it printed and the code it exits with."""
        if self.deferred and reported:
            return (f"{self.signal_name} arrived while {self.phase}; that was finished first, "
                    f"so the output is complete (exit {exit_code}); every child process was ended")
        head = f"stopped by {self.signal_name} while {self.phase}"
        if not reported:
            return f"{head}, before anything was printed (exit {exit_code}); every child process was ended"
        finished = ", ".join(self.finished) if self.finished else "nothing"
        return (f"{head}: what is printed is what finished before it ({finished}); exit {exit_code}; "
                "every child process was ended")


@dataclass
class _State:
    phases: list[tuple[str, bool]] = field(default_factory=list)  # (name, deferred), innermost last
    finished: list[str] = field(default_factory=list)
    last_deferred: bool = False  # whether the phase that finished last was a deferred one
    stop: Stop | None = None
    announce: bool = False
    spawning: bool = False  # the main thread is starting a child: a signal must not cut it before it is kept


_live: set[subprocess.Popen] = set()
_state = _State()


def received() -> str | None:
    """The name of the stop signal received during this command, or None."""
    return _state.stop.signal_name if _state.stop else None


def stopped() -> Stop | None:
    """The stop signal received during this command, where, and what had finished; None when there was none."""
    return _state.stop


def announce_phases() -> None:
    """From now on each phase says on stderr when it begins (``-v``): the progress a caller can wait for."""
    _state.announce = True


@contextmanager
def phase(name: str, deferred: bool = False) -> Iterator[None]:
    """The doctor is doing ``name``. A phase left without a stop signal during it has finished (an
    outermost one is listed in ``Stop.finished``); a deferred one is not cut by a first signal."""
    if _state.stop is not None and not deferred:  # it arrived between phases
        raise Interrupted(_state.stop.signal_name)
    _state.phases.append((name, deferred))
    outermost = len(_state.phases) == 1
    try:
        if _state.announce:  # once it has begun: a signal sent on seeing this line stops this phase
            print(f"paddle-doctor: {name}", file=sys.stderr, flush=True)
        yield
        if outermost and _state.stop is None:
            _state.finished.append(name)
            _state.last_deferred = deferred
    finally:
        _state.phases.pop()


def spawn(argv: list[str], **popen_options) -> subprocess.Popen:
    """Start a child in a session of its own and keep it until ``end``; none starts after a stop signal."""
    import subprocess  # here: the healthcheck handles stop signals but starts no child, and the import costs its start-up
    import threading

    if _state.stop:
        raise Interrupted(_state.stop.signal_name)
    _state.spawning = threading.current_thread() is threading.main_thread()  # where the handler runs
    try:
        proc = subprocess.Popen(argv, start_new_session=True, **popen_options)
        _live.add(proc)
    finally:
        _state.spawning = False
    if _state.stop:  # it arrived while the child started: the child is ended with the others
        end(proc)
        raise Interrupted(_state.stop.signal_name)
    return proc


def end(proc: subprocess.Popen) -> None:
    """Kill the child's process group if it still runs, and reap it."""
    if proc.poll() is None:
        _kill_group(proc)
    proc.wait()
    _live.discard(proc)


def end_all() -> None:
    for proc in list(_live):
        end(proc)


def signal_name(number: int) -> str:
    """``SIGSEGV`` for 11; ``signal 99`` for a number with no name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _kill_group(proc: subprocess.Popen) -> None:
    import os

    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _on_stop_signal(number: int, frame: object) -> None:
    # only signals are sent here: the interrupted code may hold the locks that reaping takes
    for proc in list(_live):
        if proc.returncode is None:
            _kill_group(proc)
    if _state.stop is not None:  # a second signal: nothing is waited for any more
        if not _state.spawning:
            raise Interrupted(_state.stop.signal_name)
        return
    between = not _state.phases and bool(_state.finished)  # the next phase does not begin
    if _state.phases:
        name, deferred = _state.phases[-1]
    else:
        name = f"moving on from {_state.finished[-1]}" if between else BEFORE_ANY_PHASE
        deferred = between and _state.last_deferred  # what the command printed is as complete as that phase left it
    _state.stop = Stop(signal_name(number), name, list(_state.finished), deferred)
    if not deferred and not between and not _state.spawning:
        raise Interrupted(_state.stop.signal_name)


@contextmanager
def handling_stop_signals() -> Iterator[None]:
    """For one command: a stop signal ends every child and the phase the doctor is in; on the way
    out every child is ended."""
    global _state
    _state = _State()
    previous = {number: signal.signal(number, _on_stop_signal) for number in STOP_SIGNALS}
    try:
        yield
    finally:
        end_all()
        for number, handler in previous.items():
            signal.signal(number, handler)
