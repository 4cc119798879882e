"""Baseline, memory: was the container's memory limit lowered since the baseline?"""

from __future__ import annotations

from paddle_doctor.base.words import byte_size
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Status, passed
from paddle_doctor.judge.registry import Check, Need, baseline_of

RULE = "PD-HEALTH-003"


def check(facts: Facts) -> list[Finding]:
    before, now = baseline_of(facts).memory.limit_bytes, facts.memory.limit_bytes
    if now is not None and (before is None or now < before):
        return [Finding(RULE, Status.FAIL, f"memory limit lowered from {byte_size(before, 'unlimited')} to {byte_size(now, 'unlimited')} since baseline")]
    return [passed(RULE, f"memory limit {byte_size(now, 'unlimited')}" + (" (raised since baseline)" if now != before else ""))]


CHECK = Check(name="baseline_memory", rules=(RULE,), run=check, requires=(Need.BASELINE,))
