"""The service's own record of its predictors (``paddle-doctor record``), as the doctor read it for
the picked process: the predictors it built and ran, and what they say about the threads that run
at once."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..base.schema import Count
from ..base.vocabulary import BuiltBy, Recorder, RecordStatus
from .graph import GraphFacts
from .recorded import ModelFiles, RecordedPredictor
from .verification import VerificationFacts

STALE_INTERVALS = 3  # a record not written for this many of its intervals may be stale
CHURN_AT = 3  # predictors of one model built at one place, each run at most once: a predictor per request


@dataclass(frozen=True)
class SharedSeen:
    """A recorded predictor that more than one thread ran: how many, and how many of its runs crossed
    another thread's (its thread had copied its inputs in, and another thread's ``run()`` of it began
    since) or ran beside another run of it (``at_once``, the most inside its ``run()`` at once)."""

    predictor: RecordedPredictor
    threads: int
    crossed: int
    at_once: int

    @property
    def raced(self) -> bool:
        """Its calls from different threads were seen to overlap: a race, whatever the code meant."""
        return self.crossed > 0 or self.at_once > 1

    def said(self) -> str:
        """``predictor 0 (cnn, built at /app/app.py:12) was run by 4 threads: 37 of its 200 runs crossed another thread's (…), 3 of its runs at once``."""
        runs = self.predictor.runs.runs
        seen = [f"{self.crossed} of its {runs} runs crossed another thread's (its inputs copied in, another thread's run() began)"] \
            if self.crossed else []
        if self.at_once > 1:
            seen.append(f"{self.at_once} of its runs at once")
        how = ", ".join(seen) if seen else f"one call at a time: none of its {runs} runs overlapped or crossed another thread's"
        return f"{described(self.predictor)} was run by {self.threads} threads: {how}"


@dataclass(frozen=True)
class Churn:
    """Predictors of one model built at one place (``site``), each run at most once: ``built`` of them
    (the record's ``built`` counts included), ``runs`` their runs together."""

    site: str
    model: str
    built: int
    runs: int
    predictors: list[Count]

    def said(self) -> str:
        return (f"{self.built} predictors of {self.model} were built at {self.site}, each run at most once "
                f"({self.runs} runs in all)")


@dataclass(frozen=True)
class SharingJudged:
    """What the record says of the sharing of its predictors among threads, for the checks that judge
    it: whether it is a race (``fails``), in one line (``message``), with what was seen (``observed``)."""

    fails: bool
    message: str
    observed: str


def described(predictor: RecordedPredictor) -> str:
    """``predictor 0 (cnn, built at /app/app.py:12)``."""
    return f"predictor {predictor.id} ({predictor.name()}, built at {predictor.built_at()})"


@dataclass(frozen=True)
class PredictorMeasured:
    """What ``--measure`` made of one recorded predictor: its model (a path, or the predictor's name when
    not in a file) at its recorded input shapes (``--shape`` options), its recorded configuration the
    baseline, within ``budget_s``, and its model's graph coverage under that configuration (``graph``).
    ``not_measured`` says why it was not; the busiest predictor's measurement and graph are the report's
    ``verification`` and ``graph``, so its ``verification`` and ``graph`` here are null. ``stands_for``
    names the other predictors of the same model and configuration, measured as this one."""

    predictor: Count
    model: str
    shapes: list[str] = field(default_factory=list)
    budget_s: float = 0.0
    verification: VerificationFacts | None = None
    not_measured: str | None = None
    graph: GraphFacts | None = None
    stands_for: list[Count] = field(default_factory=list)


@dataclass(frozen=True)
class ServiceRecord:
    """``status`` says whether the record was read; ``reason`` why not, or what is off about it (it
    comes from another Paddle version, it is stale, it holds more predictors than a recorder keeps) in one line; ``source`` the file; ``recorder`` what noted its
    runs (Python's may count a thread waiting for the GIL after its run as still running);
    ``busy_cpus_while_measured`` the CPUs the service itself used while ``--measure`` measured (its CPU
    time over the wall time); ``measured`` what ``--measure`` made of each predictor, busiest first;
    ``age_s`` how long before it was read it was written, ``interval_s`` how often the service writes it;
    ``environment`` the thread variables and FLAGS_* as the process saw them when it began to import
    Paddle (a variable absent was unset; null: the record did not note them)."""

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
    environment: dict[str, str] | None = None

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

    def sharing_noted(self) -> list[RecordedPredictor]:
        """The predictors that ran whose threads the record noted (a recorder before it noted them notes none)."""
        return [predictor for predictor in self.predictors if predictor.sharing is not None and predictor.runs.runs] \
            if self.read else []

    def shared_seen(self) -> list[SharedSeen]:
        """The predictors more than one thread ran, those seen racing first."""
        seen = [SharedSeen(predictor, sharing.run.count(), sharing.crossed, predictor.runs.peak_concurrency)
                for predictor in self.sharing_noted() if (sharing := predictor.sharing) is not None and sharing.run.count() > 1]
        return sorted(seen, key=lambda shared: not shared.raced)

    def sharing_judged(self, source_says: str | None) -> SharingJudged | None:
        """The record's word on sharing, where it noted the threads of a predictor that ran (None where it
        did not): a predictor more than one thread ran is a race where their calls were seen to cross or
        overlap, and where the source (``source_says``: where it shares one predictor among threads with no
        clone, pool or lock) says none serialises them; each predictor run from one thread is none,
        whatever the source says. The record sees the calls, not a lock: it never says one is taken."""
        noted = self.sharing_noted()
        if not noted:
            return None
        shared = self.shared_seen()
        observed = "; ".join(shared.said() for shared in shared) or \
            f"{len(noted)} predictor{'s' if len(noted) != 1 else ''} each run from one thread ({self.source})"
        raced = [seen for seen in shared if seen.raced]
        if raced:
            return SharingJudged(True, f"{raced[0].said()}, with no clone() or pool: its calls from different threads race "
                                       f"(seen in the record)", observed)
        if shared and source_says:
            return SharingJudged(True, f"{shared[0].said()} so far, and the service's code at {source_says} shares it among "
                                       "threads with nothing that serialises their calls", observed)
        if shared:
            return SharingJudged(False, f"{shared[0].said()} (seen in the record)", observed)
        unseen = f"; the code's sharing at {source_says} was not seen at run time" if source_says else ""
        return SharingJudged(False, f"each of the {len(noted)} predictors that ran was run from one thread "
                                    f"(seen in the record){unseen}" if len(noted) > 1 else
                             f"{described(noted[0])} was run from one thread (seen in the record){unseen}", observed)

    def churn(self) -> list[Churn]:
        """The places that built :data:`CHURN_AT` or more predictors of one model that each ran at most once, and
        that ran or were dropped (predictors built at start and not yet run, held, are not built per request;
        neither are a clone or a pool's members), the most built first."""
        groups: dict[tuple[str, ModelFiles | None], list[RecordedPredictor]] = {}
        for predictor in self.predictors if self.read else []:
            if predictor.built_by == BuiltBy.CREATE_PREDICTOR and predictor.origin.builder is not None:
                groups.setdefault((predictor.built_at(), predictor.model), []).append(predictor)
        found = [Churn(site, group[0].name(), sum(p.built for p in group), sum(p.runs.runs for p in group), [p.id for p in group])
                 for (site, _), group in groups.items()
                 if all(p.runs.runs <= p.built for p in group)
                 and sum(p.built for p in group if p.runs.runs or not p.alive) >= CHURN_AT]
        return sorted(found, key=lambda churn: -churn.built)

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
