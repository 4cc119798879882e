"""Baseline, memory: was the container's memory limit lowered since the baseline?

Why: the service sized its caches and predictor pools for the limit it started with; under a
lower limit it is OOM-killed at its next peak.
Fix: give the container its memory back, or restart the service sized for the new limit; then
record a new baseline.
"""

from __future__ import annotations

from paddle_doctor.baseline import size_text
from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed
from paddle_doctor.registry import Check, Need

RULE = "PD-HEALTH-003"


def check(facts: Facts) -> list[Finding]:
    before, now = facts.baseline.memory.limit_bytes, facts.memory.limit_bytes
    if now is not None and (before is None or now < before):
        return [Finding(RULE, Status.FAIL, f"memory limit lowered from {size_text(before)} to {size_text(now)} since baseline")]
    return [passed(RULE, f"memory limit {size_text(now)}" + (" (raised since baseline)" if now != before else ""))]


CHECK = Check(name="baseline_memory", rules=(RULE,), run=check, requires=(Need.BASELINE,))
