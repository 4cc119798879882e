"""The report's sections that only a measurement with ``--model`` fills: the verification run and
the graph's fusion coverage. They load when a report has them, as their facts do."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base.schema import Count
from ..base.vocabulary import ExperimentStatus
from ..facts.graph import GraphFacts
from ..facts.predictor import PredictorConfig
from ..facts.service_record import PredictorMeasured
from ..facts.verification import ComparisonResult, ExperimentResult, MachineNoise, ModelFacts, Recommendation, VerificationFacts
from ..judge import offered


@dataclass
class ExperimentOutline:
    """One experiment of the verification: what became of it, without its measurements."""

    name: str
    status: ExperimentStatus
    reason: str | None
    seconds: float


@dataclass(frozen=True, kw_only=True)
class RecommendationSummary(Recommendation):
    """The recommendation with what it offers in the words every format shows: ``title`` (``Recommended
    configuration``, qualified where it is not measured faster) and ``headline`` (how it measured as a
    whole, and why it is offered when not for speed)."""

    title: str
    headline: str


def summarize_recommendation(recommendation: Recommendation) -> RecommendationSummary:
    return RecommendationSummary(**vars(recommendation), title=offered.title(recommendation), headline=offered.headline(recommendation))


@dataclass
class VerificationSummary:
    """The verification run: the model measured, its budget and what it spent, the service's
    configuration measured as the baseline, each experiment's outcome, the recommendation, and how
    busy the machine was while measuring."""

    model: ModelFacts
    budget_s: float
    seconds: float
    min_effect: float
    max_drift: float
    baseline: PredictorConfig | None
    error: str | None
    over_budget: str | None
    experiments: list[ExperimentOutline]
    recommendation: RecommendationSummary | None
    noise: MachineNoise | None = None


@dataclass(frozen=True)
class GraphSummary(GraphFacts):
    """The fusion coverage, with the ir_optim experiment that measures what the fusions are worth."""

    ir_optim_experiment: ExperimentResult | None = None


def summarize_verification(verification: VerificationFacts) -> VerificationSummary:
    return VerificationSummary(
        model=verification.model,
        budget_s=verification.budget_s,
        seconds=verification.seconds,
        min_effect=verification.min_effect,
        max_drift=verification.max_drift,
        baseline=verification.baseline,
        error=verification.error,
        over_budget=verification.over_budget,
        experiments=[ExperimentOutline(e.name, e.status, e.reason, e.seconds) for e in verification.experiments],
        recommendation=summarize_recommendation(verification.recommendation) if verification.recommendation else None,
        noise=verification.noise,
    )


@dataclass
class PredictorMeasurement:
    """One recorded predictor as ``--measure`` measured it (or why it did not): its model at its recorded
    shapes, the budget share it had and what it spent, its recorded configuration (the baseline) and its p50,
    each measured comparison, the recommended configuration's p50 and its comparison, and what cut the
    measurement short (``error``)."""

    predictor: Count
    model: str
    shapes: list[str]
    budget_s: float
    seconds: float | None = None
    baseline: PredictorConfig | None = None
    baseline_p50_ms: float | None = None
    comparisons: list[ComparisonResult] = field(default_factory=list)
    recommended_p50_ms: float | None = None
    recommended: ComparisonResult | None = None
    error: str | None = None
    not_measured: str | None = None


def predictor_measurement(plan: PredictorMeasured, verification: VerificationFacts | None) -> PredictorMeasurement:
    """``plan`` as measured by ``verification`` (the report's own for the first predictor measured)."""
    if verification is None:
        return PredictorMeasurement(plan.predictor, plan.model, plan.shapes, plan.budget_s,
                                    not_measured=plan.not_measured or "not measured: the doctor stopped before it")
    recommendation = verification.recommendation
    baseline = recommendation.baseline.p50 if recommendation else next(
        (arm.p50 for e in verification.experiments for arm in e.arms[:1] if e.measured and arm.config == verification.baseline), None)
    comparisons = [c for e in verification.experiments if e.measured for c in e.comparisons]
    return PredictorMeasurement(plan.predictor, plan.model, plan.shapes, plan.budget_s, verification.seconds, verification.baseline,
                                baseline, comparisons,
                                recommendation.recommended.p50 if recommendation else None,
                                recommendation.comparison if recommendation else None,
                                verification.error)
