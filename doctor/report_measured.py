"""The report's sections that only a measurement with ``--model`` fills: the verification run and
the graph's fusion coverage. They load when a report has them, as their facts do."""

from __future__ import annotations

from dataclasses import dataclass

from .facts.graph import GraphFacts
from .facts.predictor import PredictorConfig
from .facts.verification import ExperimentResult, MachineNoise, ModelFacts, Recommendation, VerificationFacts
from .vocabulary import ExperimentStatus


@dataclass
class ExperimentOutline:
    """One experiment of the verification: what became of it, without its measurements."""

    name: str
    status: ExperimentStatus
    reason: str | None
    seconds: float


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
    baseline: PredictorConfig
    error: str | None
    over_budget: str | None
    experiments: list[ExperimentOutline]
    recommendation: Recommendation | None
    noise: MachineNoise | None = None


@dataclass
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
        recommendation=verification.recommendation,
        noise=verification.noise,
    )
