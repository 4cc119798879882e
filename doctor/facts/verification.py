"""Facts a verification run measures with the real predictor (``--model``): arms, comparisons,
experiments and the recommendation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..vocabulary import Layout
from .predictor import PredictorConfig


@dataclass
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
    runs: int = 0
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    mean: float | None = None
    cv: float | None = None
    throughput_rps: float | None = None
    sample_p50: list[float | None] | None = None
    layout: LayoutArm | None = None


@dataclass
class LayoutArm:
    """A serving layout measured under load: ``instances`` predictors of ``threads`` math threads
    each, in ``processes`` worker processes; ``fits_budget`` when all its threads fit the CPU budget."""

    layout: Layout
    instances: int
    threads: int
    processes: int
    total_threads: int
    fits_budget: bool


@dataclass
class ComparisonResult:
    """Candidate against baseline: ratio > 1 means the candidate is faster."""

    baseline: str
    candidate: str
    ratio: float
    ci_low: float
    ci_high: float
    verdict: str
    rounds: int
    confidence: float = 0.95
    drift: dict[str, Any] | None = None
    changes_outputs: bool | None = None


@dataclass
class ExperimentResult:
    """``status``: measured, skipped (cannot run here: reason says why) or error (reason says why)."""

    name: str
    status: str
    reason: str | None = None
    seconds: float = 0.0
    arms: list[ArmResult] = field(default_factory=list)
    comparisons: list[ComparisonResult] = field(default_factory=list)
    noisy: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Recommendation:
    """The configuration found by measuring, and the paste-ready code that builds it.

    ``enforced`` names the rules that moved it away from the service's configuration whatever
    the measurement said (threads within the CPU budget, PD-CPU-010).
    """

    config: PredictorConfig
    snippet: str
    steps: list[str]
    baseline: ArmResult
    recommended: ArmResult
    comparison: ComparisonResult | None
    enforced: list[str] = field(default_factory=list)


@dataclass
class ModelInput:
    """One model input as measured: the shape the program declares (-1 = dynamic), the shapes fed
    (one per sample; latency is measured over them all, in turn), and what chose them."""

    name: str
    dtype: str
    declared: list[int]
    shapes: list[list[int]]
    chosen_by: str
    low: int | None = None
    high: int | None = None
    lod: list[list[list[int]]] | None = None

    @property
    def dynamic_axes(self) -> list[int]:
        return [axis for axis, dim in enumerate(self.declared) if dim == -1]


@dataclass
class ModelFacts:
    """The model measured: its files and its inputs, by name."""

    path: str
    format: str
    program: str
    params: str | None
    inputs: dict[str, ModelInput]
    samples: list[str] = field(default_factory=list)


@dataclass
class ModelLoadFailure:
    """The service's own configuration could not create a predictor or run the model: what Paddle
    said, or the signal that killed the worker."""

    configuration: str
    message: str
    signal: str | None = None


@dataclass
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

    def experiment(self, name: str) -> ExperimentResult | None:
        return next((e for e in self.experiments if e.name == name), None)
