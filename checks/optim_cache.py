"""Optimised-model cache: does every start rebuild the optimised graph?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Effect, Experiment
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

RULE = "PD-START-001"


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    if service.use_optimized_model:
        return [passed(RULE, "the service loads its optimised model from the cache")]
    if not service.model:
        return [skipped(RULE, "no model given (--model or model: in --config)")]
    experiment = facts.verification.experiment(Experiment.OPTIM_CACHE) if facts.verification else None
    if experiment is not None and experiment.known_issue:  # the cache fails here: its fix would hit a known problem
        return [passed(RULE, f"the optimised-model cache is not advised here: {experiment.reason}")]
    cold = experiment.optim_cache if experiment and experiment.measured else None
    if experiment and cold and experiment.comparisons:
        comparison = experiment.comparisons[0]
        observed = (f"cold start {cold.rebuild_graph_ms:.0f} ms rebuilding the graph, "
                    f"{cold.optimised_cache_ms:.0f} ms from the cache ({comparison.verdict})")
        if comparison.verdict != Effect.IMPROVED:
            return [passed(RULE, f"a cached optimised model does not start measurably faster here: {observed}")]
        return [Finding(RULE, Status.FAIL, "every start rebuilds the optimised graph; the cache starts measurably faster",
                        observed=observed, expected="use_optimized_model(True)")]
    return [Finding(RULE, Status.WARN, "every start rebuilds the optimised graph (use_optimized_model is not set)",
                    observed="use_optimized_model not set", expected="use_optimized_model(True)")]


CHECK = Check(name="optim_cache", rules=(RULE,), run=each_predictor(check))
