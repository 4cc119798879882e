"""Facts a verification run measures with the real predictor (``--model``): arms, comparisons,
experiments and the recommendation."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base.schema import Count, NonNegative, RuleId
from ..base.vocabulary import Effect, Experiment, ExperimentStatus, Layout, ModelFormat, RaceEnd
from .predictor import PredictorConfig

MIN_ROUNDS = 6  # the rounds a verdict needs: before them a comparison is undecided, whatever its interval
BUSY_SHARE = 0.10  # from this share of the CPU time going to other processes on, a machine is called busy
BASELINE = "baseline"  # the label of the arm every other arm of an experiment is compared with


@dataclass(frozen=True)
class ArmResult:
    """One predictor configuration (or serving layout, under load) as measured: latency in
    milliseconds over every input sample; ``sample_p50`` per sample when there are several (and
    ``cv`` then compares each run with its own sample's median: the variation of one request);
    ``throughput_rps`` (requests per second) and ``layout`` for a serving layout under concurrent
    load (``config`` is then the configuration each of its predictors runs)."""

    label: str
    config: PredictorConfig
    create_ms: float | None = None
    first_ms: float | None = None
    runs: Count = 0
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    mean: float | None = None
    cv: float | None = None
    throughput_rps: NonNegative | None = None
    sample_p50: list[float | None] | None = None
    layout: LayoutArm | None = None


@dataclass(frozen=True)
class LayoutArm:
    """A serving layout measured under load: ``instances`` predictors of ``threads`` math threads
    each, in ``processes`` worker processes; ``fits_budget`` when all its threads fit the CPU budget."""

    layout: Layout
    instances: int
    threads: int
    processes: int
    total_threads: int
    fits_budget: bool


@dataclass(frozen=True)
class OutputDrift:
    """How far a candidate's outputs are from the reference's on the same inputs; ``top1_agreement``
    (the share of rows whose arg-max agrees) only for outputs with classes on their last axis."""

    max_abs_diff: float
    cosine: float
    top1_agreement: float | None = None


@dataclass(frozen=True)
class ComparisonResult:
    """Candidate against baseline: ratio > 1 means the candidate is faster (for the layouts: serves
    more requests per second), with its confidence interval over ``rounds`` paired rounds and, for
    latency, the p50 of each arm over those same rounds (ms); ``others_share`` is the share of the CPU
    time other processes took while it was measured (None where it was not read)."""

    baseline: str
    candidate: str
    ratio: float
    ci_low: float
    ci_high: float
    verdict: Effect
    rounds: Count
    confidence: float = field(default=0.95, metadata={"schema": {"enum": [0.95, 0.99]}})
    baseline_p50: float | None = None
    candidate_p50: float | None = None
    drift: OutputDrift | None = None
    changes_outputs: bool | None = None
    others_share: float | None = None


@dataclass(frozen=True)
class WarmupResult:
    """The first request after the predictor is created, against the warmed-up p50."""

    first_ms: float
    steady_p50_ms: float
    first_over_steady: float | None


@dataclass(frozen=True)
class ColdStartResult:
    """Median cold start (creation and first request) rebuilding the optimised graph and loading it from a cache."""

    rebuild_graph_ms: float
    optimised_cache_ms: float


@dataclass(frozen=True)
class MemoryGrowth:
    """Resident memory of one predictor's worker before the input shapes and after each of them."""

    start_mb: float
    after_each_shape_mb: list[float]
    growth_mb: float


@dataclass(frozen=True)
class ShapeCacheResult:
    """Memory growth over ``shapes`` input shapes with the service's unbounded oneDNN cache and a bounded one."""

    shapes: int
    service: MemoryGrowth
    bounded: MemoryGrowth


@dataclass(frozen=True)
class ExcludedLayout:
    """A layout not measured, and why."""

    layout: str
    reason: str


@dataclass(frozen=True)
class Throttling:
    """The cgroup's CPU quota periods while one layout was measured, and those throttled."""

    periods: int
    throttled_periods: int
    throttled_us: int


@dataclass(frozen=True)
class LayoutsResult:
    """How the serving layouts were raced and the one recommended (by its arm label), with why;
    ``throttling`` by arm label where cpu.stat has counters."""

    concurrency: int
    budget_cpus: float
    budget_s: float
    window_s: float
    rounds: int
    stopped: RaceEnd
    recommended: str
    why: str
    excluded: list[ExcludedLayout] = field(default_factory=list)
    throttling: dict[str, Throttling] = field(default_factory=dict)


# the experiments that measure more than arms and comparisons: each one's result has a field of its name
RESULT_FIELDS = ("warmup", "optim_cache", "onednn_cache", "layouts")


@dataclass(frozen=True)
class ExperimentResult:
    """``status``: measured, skipped (cannot run here: reason says why) or error (reason says why).

    The experiments named in RESULT_FIELDS measure more than latency arms: a measured one carries
    its own typed result in the field of its name, and no other experiment's.
    """

    name: str
    status: ExperimentStatus
    reason: str | None = None
    seconds: float = 0.0
    arms: list[ArmResult] = field(default_factory=list)
    comparisons: list[ComparisonResult] = field(default_factory=list)
    noisy: bool = False
    warmup: WarmupResult | None = None
    optim_cache: ColdStartResult | None = None
    onednn_cache: ShapeCacheResult | None = None
    layouts: LayoutsResult | None = None
    known_issue: str | None = None  # skipped: the configuration it measures would hit this known problem (known_issues.yaml)

    def __post_init__(self) -> None:
        for name in RESULT_FIELDS:
            if getattr(self, name) is not None and name != self.name:
                raise ValueError(f"a {name} result on experiment {self.name!r}; only experiment {name!r} carries one")
        if self.name in RESULT_FIELDS and self.status == ExperimentStatus.MEASURED and getattr(self, self.name) is None:
            raise ValueError(f"experiment {self.name!r} is measured but has no {self.name} result")

    @property
    def measured(self) -> bool:
        return self.status == ExperimentStatus.MEASURED


@dataclass(frozen=True)
class KeptSetting:
    """A setting the recommendation leaves as the service has it, by the experiment that measures it, and
    the measured reason (``no time was left to measure it in context``, ``measured together ... slower``)."""

    experiment: Experiment
    why: str


@dataclass(frozen=True)
class Recommendation:
    """The configuration found by measuring, and the paste-ready code that builds it.

    ``enforced`` names the rules that moved it away from the service's configuration whatever
    the measurement said (threads within the CPU budget, PD-CPU-010). ``kept`` says why each setting
    measured by the search was left as it is. ``unconfirmed`` says why changes each adopted on a
    decisive measurement were not confirmed as a whole (the final race undecided, or cut short) and
    what would settle it; they stay in the recommendation, since only a whole measured slower falls back.
    """

    config: PredictorConfig
    snippet: str
    steps: list[str]
    baseline: ArmResult
    recommended: ArmResult
    comparison: ComparisonResult | None
    enforced: list[RuleId] = field(default_factory=list)
    kept: list[KeptSetting] = field(default_factory=list)
    unconfirmed: str | None = None

    def kept_because(self, experiment: str) -> str | None:
        """Why the setting ``experiment`` measures was left as the service has it; None where it was not."""
        return next((kept.why for kept in self.kept if kept.experiment == experiment), None)


@dataclass(frozen=True)
class ModelInput:
    """One model input as measured: the shape the program declares (-1 = dynamic), the shapes fed
    (one per sample; latency is measured over them all, in turn), and what chose them."""

    name: str
    dtype: str
    declared: list[int]
    shapes: list[list[Count]] = field(metadata={"schema": {"minItems": 1}})
    chosen_by: str
    low: int | None = None
    high: int | None = None
    lod: list[list[list[int]]] | None = None

    @property
    def dynamic_axes(self) -> list[int]:
        return [axis for axis, dim in enumerate(self.declared) if dim == -1]


@dataclass(frozen=True)
class ModelFacts:
    """The model measured: its files and its inputs, by name."""

    path: str
    format: ModelFormat
    program: str
    params: str | None
    inputs: dict[str, ModelInput]
    samples: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ModelLoadFailure:
    """The service's own configuration could not create a predictor or run the model: what Paddle
    said, or the signal that killed the worker."""

    configuration: str
    message: str
    signal: str | None = None


@dataclass(frozen=True)
class KnownIssueTrial:
    """A known problem (known_issues.yaml) the service's configuration was predicted to hit on this model,
    tried in the predictor worker: ``reproduced`` where its load failed with the entry's message (or was
    killed, for an entry that names none), what the worker said, and the entry's workaround measured in a
    worker of its own (``workaround`` its configuration; null where it has none to measure): whether it
    ran the model, its first and its warm run, or why it did not."""

    known_issue: str
    configuration: str
    reproduced: bool
    message: str | None = None
    signal: str | None = None
    workaround: str | None = None
    workaround_ran: bool | None = None
    workaround_first_ms: NonNegative | None = None
    workaround_warm_ms: NonNegative | None = None
    workaround_error: str | None = None


@dataclass(frozen=True)
class MachineNoise:
    """How busy the machine was while the races ran: the shares of the CPU time (of the CPUs the
    worker may use) that went to other processes and to the hypervisor (steal), the seconds the
    cgroup's quota throttled it (None where unreadable), the baseline measured against itself (A/A:
    its first half-blocks against its last), the smallest effect decided under that noise, and the
    share of the CPU time the live service took (part of ``others_share``; None where its process
    was not read: no --pid, or another container's)."""

    others_share: float | None
    steal_share: float | None
    throttled_s: float | None
    aa: ComparisonResult | None
    floor: float
    service_share: float | None = None


@dataclass(frozen=True)
class VerificationFacts:
    model: ModelFacts
    budget_s: float
    min_effect: float
    max_drift: float
    seconds: float = 0.0
    baseline: PredictorConfig | None = None
    experiments: list[ExperimentResult] = field(default_factory=list)
    recommendation: Recommendation | None = None
    error: str | None = None
    load_failure: ModelLoadFailure | None = None
    over_budget: str | None = None
    noise: MachineNoise | None = None
    known_issues: list[KnownIssueTrial] = field(default_factory=list)

    def experiment(self, name: str) -> ExperimentResult | None:
        return next((e for e in self.experiments if e.name == name), None)
