"""Baseline, memory: was the container's memory limit lowered since the baseline?"""

from __future__ import annotations

from paddle_doctor.baseline import size_text
from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed
from paddle_doctor.registry import Check, Need, baseline_of

RULE = "PD-HEALTH-003"


def check(facts: Facts) -> list[Finding]:
    before, now = baseline_of(facts).memory.limit_bytes, facts.memory.limit_bytes
    if now is not None and (before is None or now < before):
        return [Finding(RULE, Status.FAIL, f"memory limit lowered from {size_text(before)} to {size_text(now)} since baseline")]
    return [passed(RULE, f"memory limit {size_text(now)}" + (" (raised since baseline)" if now != before else ""))]


CHECK = Check(name="baseline_memory", rules=(RULE,), run=check, requires=(Need.BASELINE,))
