"""The one deadline runner of work inside this process: each check under its timeout, and the whole
healthcheck under its budget. (Child processes have theirs in ``children`` and ``verify.deadline``.)"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

T = TypeVar("T")


@dataclass
class Bounded(Generic[T]):
    """What :func:`run_within` saw: the value, or the exception raised, or neither when time ran out."""

    finished: bool
    value: T | None
    error: BaseException | None
    seconds: float


def run_within(work: Callable[[], T], seconds: float, name: str) -> Bounded[T]:
    """``work()`` in a daemon thread, waited for at most ``seconds``: a read that never returns (a
    hung filesystem) cannot hold the caller, which may leave the thread behind."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # reported to the caller, whatever it was
            box["error"] = exc

    start = time.perf_counter()
    worker = threading.Thread(target=target, name=name, daemon=True)
    worker.start()
    worker.join(seconds)
    finished = not worker.is_alive()
    return Bounded(finished, box.get("value") if finished else None, box.get("error") if finished else None,
                   time.perf_counter() - start)
