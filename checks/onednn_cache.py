"""oneDNN shape cache: is it unbounded (capacity <= 0) while oneDNN is on?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Experiment
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

RULE = "PD-MEM-001"


@evidence
class ShapeCacheEvidence(Evidence):
    UNSAID = frozenset({"service", "bounded"})  # said where the experiment measured the growth

    capacity: int
    service: float | None = None
    bounded: float | None = None


def check(facts: Facts) -> list[Finding]:
    capacity, onednn = facts.service.onednn_cache_capacity, facts.service.onednn
    if capacity is None or capacity > 0:
        return [passed(RULE, f"oneDNN's shape cache is bounded ({capacity if capacity is not None else 'default 10'})")]
    if onednn is False:
        return [passed(RULE, "oneDNN is off, so its shape cache is unused")]
    evidence = ShapeCacheEvidence(capacity)
    observed = f"set_mkldnn_cache_capacity({capacity})"
    experiment = facts.verification.experiment(Experiment.ONEDNN_CACHE) if facts.verification else None
    memory = experiment.onednn_cache if experiment and experiment.measured else None
    if memory is not None:
        evidence = ShapeCacheEvidence(capacity, round(memory.service.growth_mb, 1), round(memory.bounded.growth_mb, 1))
        observed += (f"; RSS grew {memory.service.growth_mb:.0f} MB over {memory.shapes} input shapes "
                     f"(bounded cache: {memory.bounded.growth_mb:.0f} MB)")
    return [Finding(RULE, Status.FAIL, "oneDNN's shape cache is unbounded; memory grows with every new input shape",
                    observed=observed, expected="set_mkldnn_cache_capacity(10)", evidence=evidence)]


CHECK = Check(name="onednn_cache", rules=(RULE,), run=each_predictor(check), evidence={RULE: ShapeCacheEvidence})
