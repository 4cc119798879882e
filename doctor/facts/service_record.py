"""The service's own record of its predictors (``paddle-doctor record``), as the doctor read it for
the picked process: the predictors it built and ran, and what they say about the threads that run
at once."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..base.schema import Count
from ..base.vocabulary import Recorder, RecordStatus
from .graph import GraphFacts
from .recorded import RecordedPredictor
from .verification import VerificationFacts

STALE_INTERVALS = 3  # a record not written for this many of its intervals may be stale


@dataclass(frozen=True)
class PredictorMeasured:
    """What ``--measure`` made of one recorded predictor: its model (a path, or the predictor's name when
    not in a file) at its recorded input shapes (``--shape`` options), its recorded configuration the
    baseline, within ``budget_s``, and its model's graph coverage under that configuration (``graph``).
    ``not_measured`` says why it was not; the busiest predictor's measurement and graph are the report's
    ``verification`` and ``graph``, so its ``verification`` and ``graph`` here are null."""

    predictor: Count
    model: str
    shapes: list[str] = field(default_factory=list)
    budget_s: float = 0.0
    verification: VerificationFacts | None = None
    not_measured: str | None = None
    graph: GraphFacts | None = None


@dataclass(frozen=True)
class ServiceRecord:
    """``status`` says whether the record was read; ``reason`` why not, or what is off about it (it
    comes from another Paddle version, it is stale, it holds more predictors than a recorder keeps) in one line; ``source`` the file; ``recorder`` what noted its
    runs (Python's may count a thread waiting for the GIL after its run as still running);
    ``busy_cpus_while_measured`` the CPUs the service itself used while ``--measure`` measured (its CPU
    time over the wall time); ``measured`` what ``--measure`` made of each predictor, busiest first;
    ``age_s`` how long before it was read it was written, ``interval_s`` how often the service writes it."""

    status: RecordStatus = RecordStatus.NOT_ASKED
    reason: str | None = None
    source: str | None = None
    paddle_version: str | None = None
    written_at: float | None = None
    predictors: list[RecordedPredictor] = field(default_factory=list)
    peak_concurrent_runs: int = 0
    peak_concurrent_threads: int = 0
    recorder: Recorder | None = None
    busy_cpus_while_measured: float | None = None
    measured: list[PredictorMeasured] = field(default_factory=list)
    age_s: float | None = None
    interval_s: float | None = None

    @property
    def read(self) -> bool:
        return self.status == RecordStatus.READ and bool(self.predictors)

    @property
    def stale(self) -> bool:
        """Not written for more than :data:`STALE_INTERVALS` of its intervals: the service may be stuck, or its writer gone."""
        return self.age_s is not None and self.interval_s is not None and self.age_s > STALE_INTERVALS * self.interval_s

    def line(self) -> str | None:
        """What the report says of the record: the file read and how old it is (with what is off about it),
        or why none was read."""
        if not self.read or self.age_s is None or self.stale:  # a stale record's note says its age
            return self.source if self.read and not self.reason else self.reason
        return f"{self.reason}; {self.written()}" if self.reason else f"{self.source}, {self.written()}"

    def written(self) -> str:
        """``written 3 s ago``, ``written 2 h ago``."""
        age = self.age_s or 0.0
        for unit, seconds in (("days", 86400), ("h", 3600), ("min", 60)):
            if age >= 2 * seconds:
                return f"written {age / seconds:.0f} {unit} ago"
        return f"written {age:.0f} s ago"

    def noted(self, text: str) -> ServiceRecord:
        """The record with what is off about it said in its one line (``reason``), after what was said before."""
        return replace(self, reason=f"{self.reason}; {text}" if self.reason else f"{self.source}: {text}")

    def measured_first(self) -> PredictorMeasured | None:
        """The plan measured first: its measurement and graph are the report's own ``verification`` and ``graph``."""
        return next((plan for plan in self.measured if plan.not_measured is None and plan.verification is None), None)

    def main_predictor(self) -> RecordedPredictor | None:
        """The predictor that ran most (the first built on a tie) among those whose configuration is known."""
        known = [predictor for predictor in self.predictors if predictor.config is not None]
        return max(known, key=lambda predictor: predictor.runs.runs, default=None)

    def threads_at_once(self) -> tuple[int, list[RecordedPredictor], str]:
        """The most math threads seen inside ``run()`` at once, the predictors that can make them, and how
        that is known: from the concurrency seen, or (no run seen yet) the largest predictor alone."""
        known = [predictor for predictor in self.predictors if predictor.config is not None]
        ran = [predictor for predictor in known if predictor.runs.runs]
        if self.peak_concurrent_threads and ran:
            runs = self.peak_concurrent_runs
            waits = (" (noted in Python: a thread waiting for the GIL after its run may count as running)"
                     if self.recorder == Recorder.PYTHON and runs > 1 else "")
            return (self.peak_concurrent_threads, ran,
                    f"at most {runs} run{'s' if runs != 1 else ''} at once seen across {len(ran)} predictor{'s' if len(ran) != 1 else ''}{waits}")
        largest = max(known, key=lambda predictor: predictor.config.cpu.threads, default=None)  # type: ignore[union-attr]
        if largest is None:
            return 0, [], "no predictor with a known configuration"
        return largest.config.cpu.threads, [largest], "no run seen yet: the largest predictor alone"  # type: ignore[union-attr]
