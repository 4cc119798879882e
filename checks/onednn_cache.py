"""oneDNN shape cache: is it unbounded (capacity <= 0) while oneDNN is on?

Why: oneDNN keeps compiled primitives per input shape. With ``set_mkldnn_cache_capacity(0)`` or
``-1`` every new shape adds an entry and memory grows until the container is OOM-killed (a
known PaddleOCR/PaddleX leak). With --model the ``onednn_cache`` experiment measures the growth.
Fix: ``config.set_mkldnn_cache_capacity(10)``.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed
from paddle_doctor.per_predictor import each_predictor
from paddle_doctor.registry import Check

RULE = "PD-MEM-001"


def check(facts: Facts) -> list[Finding]:
    capacity, onednn = facts.service.onednn_cache_capacity, facts.service.onednn
    if capacity is None or capacity > 0:
        return [passed(RULE, f"oneDNN's shape cache is bounded ({capacity if capacity is not None else 'default 10'})")]
    if onednn is False:
        return [passed(RULE, "oneDNN is off, so its shape cache is unused")]
    evidence = {"capacity": capacity}
    observed = f"set_mkldnn_cache_capacity({capacity})"
    experiment = facts.verification.experiment("onednn_cache") if facts.verification else None
    if experiment and experiment.measured:
        memory = experiment.onednn_cache
        evidence.update(service=round(memory.service.growth_mb, 1), bounded=round(memory.bounded.growth_mb, 1))
        observed += (f"; RSS grew {memory.service.growth_mb:.0f} MB over {memory.shapes} input shapes "
                     f"(bounded cache: {memory.bounded.growth_mb:.0f} MB)")
    return [Finding(RULE, Status.FAIL, "oneDNN's shape cache is unbounded; memory grows with every new input shape",
                    observed=observed, expected="set_mkldnn_cache_capacity(10)", evidence=evidence)]


CHECK = Check(name="onednn_cache", rules=(RULE,), run=each_predictor(check))
