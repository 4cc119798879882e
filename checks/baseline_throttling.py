"""Baseline, throttling: did the CPU quota throttle the container since the baseline?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check, Need, baseline_of

RULE = "PD-HEALTH-002"
THROTTLED_LIMIT = 0.05  # throttled periods over all periods counted after the baseline
MIN_PERIODS = 10  # fewer periods since the baseline say nothing about throttling


@evidence
class ThrottledEvidence(Evidence):
    periods: int
    throttled: int
    ratio: float
    limit: float


def check(facts: Facts) -> list[Finding]:
    before, now = baseline_of(facts).throttling, facts.cgroup
    if before.nr_periods is None or before.nr_throttled is None or now.nr_periods is None or now.nr_throttled is None:
        return [skipped(RULE, "no throttling counters to compare (no CPU quota, or no cpu.stat to read)")]
    periods, throttled = now.nr_periods - before.nr_periods, now.nr_throttled - before.nr_throttled
    if periods < 0 or throttled < 0:
        return [Finding(RULE, Status.FAIL, "throttling counters went backwards since the baseline (another cgroup); "
                                           "re-create the baseline")]
    if periods < MIN_PERIODS:
        judged = "not throttled" if not throttled else f"throttled in {throttled} of them, too few to judge"
        return [passed(RULE, f"{periods} CPU quota periods since baseline, {judged}")]
    ratio = throttled / periods
    evidence = ThrottledEvidence(periods, throttled, round(ratio, 4), THROTTLED_LIMIT)
    if ratio >= THROTTLED_LIMIT:
        return [Finding(RULE, Status.FAIL, f"throttled in {ratio:.1%} of {periods} CPU periods since baseline "
                                           f"(limit {THROTTLED_LIMIT:.0%})", evidence=evidence)]
    return [passed(RULE, f"throttled {ratio:.1%} of {periods} periods since baseline", evidence)]


CHECK = Check(name="baseline_throttling", rules=(RULE,), run=check, requires=(Need.BASELINE,),
              evidence={RULE: ThrottledEvidence})
