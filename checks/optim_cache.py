"""Optimised-model cache: does every start rebuild the optimised graph?

Why: the IR passes run at every predictor creation unless the optimised program is saved once
(``enable_save_optim_model``) and loaded at start (``use_optimized_model``). For large models
that is seconds of cold start. With --model the ``optim_cache`` experiment measures creation
plus first inference both ways on this model.
Fix: ``set_optim_cache_dir(d)``, ``enable_save_optim_model(True)`` once, ``use_optimized_model(True)``.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.registry import Check
from paddle_doctor.vocabulary import Effect

RULE = "PD-START-001"


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    if service.use_optimized_model:
        return [passed(RULE, "the service loads its optimised model from the cache")]
    if not service.model:
        return [skipped(RULE, "no model given (--model or model: in --config)")]
    experiment = facts.verification.experiment("optim_cache") if facts.verification else None
    if experiment and experiment.measured and experiment.comparisons:
        comparison = experiment.comparisons[0]
        cold = experiment.optim_cache
        observed = (f"cold start {cold.rebuild_graph_ms:.0f} ms rebuilding the graph, "
                    f"{cold.optimised_cache_ms:.0f} ms from the cache ({comparison.verdict})")
        if comparison.verdict != Effect.IMPROVED:
            return [passed(RULE, f"a cached optimised model does not start measurably faster here: {observed}")]
        return [Finding(RULE, Status.FAIL, "every start rebuilds the optimised graph; the cache starts measurably faster",
                        observed=observed, expected="use_optimized_model(True)")]
    return [Finding(RULE, Status.WARN, "every start rebuilds the optimised graph (use_optimized_model is not set)",
                    observed="use_optimized_model not set", expected="use_optimized_model(True)")]


CHECK = Check(name="optim_cache", rules=(RULE,), run=check)
