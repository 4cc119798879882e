"""The one deadline runner of work inside this process: each check under its timeout, the whole
healthcheck under its budget, and the probes that wait for a child while the others read.
(Child processes have theirs in ``children`` and ``verify.deadline``.)

The work runs in a daemon thread and the caller only waits for it, so a stop signal (which Python
delivers to the main thread) ends the wait, and a read that never returns holds neither the caller
nor the interpreter's exit."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar, cast

T = TypeVar("T")


@dataclass
class Bounded(Generic[T]):
    """What :func:`run_within` saw: the value, or the exception raised, or neither when time ran out."""

    finished: bool
    value: T | None
    error: BaseException | None
    seconds: float

    def returned(self) -> T:
        """What the finished work returned; what it raised is raised here."""
        if not self.finished:
            raise RuntimeError(f"the work has not finished in {self.seconds:.1f} s")
        if self.error is not None:
            raise self.error
        return cast(T, self.value)  # it finished without raising: value is what it returned, None included


def left_behind() -> bool:
    """Whether a daemon thread is still there: work given up on (a read that never returns), one
    finishing (no longer alive, not yet gone), or a client library's own. The process must then end
    without the interpreter's shutdown, which such a thread, waking during it, would abort (SIGABRT)."""
    return any(thread.daemon for thread in threading.enumerate())


class Background(Generic[T]):
    """``work()`` started in a daemon thread named ``name``; wait for it with ``wait`` or ``result``."""

    def __init__(self, work: Callable[[], T], name: str):
        self._returned: list[T] = []  # work()'s value once it returns (the value may itself be None)
        self._raised: BaseException | None = None
        self._started = time.perf_counter()
        self._thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=True)
        self._thread.start()

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._returned.append(work())
        except BaseException as exc:  # reported to the caller, whatever it was
            self._raised = exc

    def wait(self, seconds: float | None = None) -> Bounded[T]:
        """Waits at most ``seconds`` (None: until it ends); the thread may be left behind."""
        self._thread.join(seconds)
        finished = not self._thread.is_alive()
        return Bounded(finished, self._returned[0] if finished and self._returned else None, self._raised if finished else None,
                       time.perf_counter() - self._started)

    def result(self) -> T:
        """The value, once the work ends; what it raised is raised here."""
        return self.wait().returned()


def run_within(work: Callable[[], T], seconds: float, name: str) -> Bounded[T]:
    """``work()`` waited for at most ``seconds``: a read that never returns (a hung filesystem)
    cannot hold the caller, which may leave the thread behind."""
    return Background(work, name).wait(seconds)


def run_here(work: Callable[[], T]) -> Bounded[T]:
    """``work()`` run in this thread, what it returned or raised seen as :func:`run_within` sees it: for work
    whose caller is itself given up on before any timeout of the work's own could end."""
    started = time.perf_counter()
    try:
        value = work()
    except BaseException as exc:  # reported to the caller, whatever it was, as from a thread of its own
        return Bounded(True, None, exc, time.perf_counter() - started)
    return Bounded(True, value, None, time.perf_counter() - started)
