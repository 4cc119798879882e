"""Baseline, Paddle build: is the Paddle distribution installed now the one the service started with?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check, Need, baseline_of

RULE = "PD-HEALTH-007"


def check(facts: Facts) -> list[Finding]:
    baseline = baseline_of(facts)
    before = baseline.paddle
    if not before.metadata_file:
        return [skipped(RULE, "the baseline records no Paddle build to compare (Paddle was not found when it was recorded)")]
    if baseline.paddle_now != before.installed:
        now = baseline.paddle_now or baseline.paddle_now_problem
        return [Finding(RULE, Status.FAIL, f"Paddle build changed since baseline: was {before.installed}, now {now}",
                        observed=now, expected=f"{before.installed}, as at baseline")]
    return [passed(RULE, f"{baseline.paddle_now} as at baseline")]


CHECK = Check(name="baseline_paddle", rules=(RULE,), run=check, requires=(Need.BASELINE,))
