"""Every child process the doctor starts, and the one path that ends them: when it is done with
one, when one overruns its deadline, and on SIGTERM or SIGINT (how Docker and Kubernetes stop a
container, and Ctrl-C).

Each child runs in a session of its own, so its whole process group is killed and nothing is left
behind. A signal ends every child at once; inside ``interruptible()`` it also raises
``Interrupted`` where the doctor is waiting, so that what was measured before it is still
reported. Elsewhere the signal is only recorded: the command finishes printing and exits 2.
"""

from __future__ import annotations

import os
import signal
import subprocess
from contextlib import contextmanager
from typing import Iterator

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

_live: set[subprocess.Popen] = set()
_received: list[str] = []
_interruptible_depth = 0


class Interrupted(BaseException):
    """SIGTERM or SIGINT arrived; the children are already ended. A BaseException, like
    KeyboardInterrupt, so that no ``except Exception`` swallows it."""

    def __init__(self, signal_name: str):
        super().__init__(f"interrupted by {signal_name}")
        self.signal_name = signal_name


def received() -> str | None:
    """The name of the stop signal received during this command, or None."""
    return _received[0] if _received else None


def spawn(argv: list[str], **popen_options) -> subprocess.Popen:
    """Start a child in a session of its own and keep it until ``end``; none starts after a stop signal."""
    if _received:
        raise Interrupted(_received[0])
    proc = subprocess.Popen(argv, start_new_session=True, **popen_options)
    _live.add(proc)
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
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def _on_stop_signal(number: int, frame: object) -> None:
    # only signals are sent here: the interrupted code may hold the locks that reaping takes
    first = not _received
    if first:
        _received.append(signal_name(number))
    for proc in list(_live):
        if proc.returncode is None:
            _kill_group(proc)
    if first and _interruptible_depth:
        raise Interrupted(_received[0])


@contextmanager
def handling_stop_signals() -> Iterator[None]:
    """For one command: SIGTERM and SIGINT end every child; on the way out every child is ended."""
    previous = {number: signal.signal(number, _on_stop_signal) for number in STOP_SIGNALS}
    _received.clear()
    try:
        yield
    finally:
        end_all()
        for number, handler in previous.items():
            signal.signal(number, handler)


@contextmanager
def interruptible() -> Iterator[None]:
    """While inside, a first stop signal raises ``Interrupted`` where the doctor waits."""
    global _interruptible_depth
    _interruptible_depth += 1
    try:
        yield
    finally:
        _interruptible_depth -= 1
