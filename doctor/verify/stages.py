"""Where a request's time goes: pre-processing, inference, post-processing, timed apart.

A slow service is often blamed on the model while decoding an image or tokenising text takes
longer than the predictor. Wrap each stage of the service's request path, run real requests,
and read p50 / p99 per stage and its share of the total::

    from paddle_doctor.verify.stages import StageTimer

    timer = StageTimer()
    preprocess = timer.wrap("preprocess", preprocess)

    @timer.stage("postprocess")
    def postprocess(outputs): ...

    def handle(request):
        inputs = preprocess(request)
        with timer.stage("inference"):
            handle.copy_from_cpu(inputs); predictor.run(); outputs = out.copy_to_cpu()
        return postprocess(outputs)

    ...
    print(timer.report())        # or timer.summary() as data, e.g. to log every N requests

Stages may run in several threads at once. They should not nest: a stage inside another is
counted in both, and the shares then add up to more than 100%.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from .stats import percentile

F = TypeVar("F", bound=Callable)


@dataclass(frozen=True)
class StageSummary:
    name: str
    count: int
    p50_ms: float
    p99_ms: float
    total_ms: float
    share: float


class StageTimer:
    """Collects the wall time of every run of every named stage (milliseconds)."""

    def __init__(self) -> None:
        self._times: dict[str, list[float]] = {}
        self._lock = threading.Lock()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        """Time a block (``with timer.stage("inference"):``) or, as a decorator, every call of a function."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.record(name, (time.perf_counter() - start) * 1000.0)

    def wrap(self, name: str, function: F) -> F:
        """``function`` timed as stage ``name`` on every call."""
        return self.stage(name)(function)

    def record(self, name: str, ms: float) -> None:
        with self._lock:
            self._times.setdefault(name, []).append(ms)

    def summary(self) -> list[StageSummary]:
        """Per stage, in the order first seen: runs, p50, p99, total and share of all stages' time."""
        with self._lock:
            times = {name: list(values) for name, values in self._times.items()}
        grand = sum(sum(values) for values in times.values()) or 1.0
        return [StageSummary(name, len(values), percentile(values, 50), percentile(values, 99), sum(values), sum(values) / grand)
                for name, values in times.items()]

    def report(self) -> str:
        rows = self.summary()
        if not rows:
            return "no stage was timed"
        width = max(len(row.name) for row in rows)
        lines = [f"{'stage':<{width}}  {'runs':>6}  {'p50 ms':>9}  {'p99 ms':>9}  {'share':>6}"]
        lines += [f"{row.name:<{width}}  {row.count:>6}  {row.p50_ms:>9.2f}  {row.p99_ms:>9.2f}  {row.share:>6.1%}" for row in rows]
        return "\n".join(lines)

    def reset(self) -> None:
        with self._lock:
            self._times.clear()
