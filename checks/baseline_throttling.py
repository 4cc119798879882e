"""Baseline, throttling: did the CPU quota throttle the container since the baseline?

Why: a container throttled in more than 5 % of its CFS periods waits for CPU time in bursts, and
its tail latency grows with them. Judged over the periods since the baseline, not since the cgroup
was created, so a container throttled during its start-up is not unhealthy for the rest of its life.
Fix: fewer threads (see PD-CPU-010), or a larger CPU limit; then record a new baseline.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.registry import Check, Need

RULE = "PD-HEALTH-002"
THROTTLED_LIMIT = 0.05  # share of the CFS periods since the baseline in which the quota throttled us
MIN_PERIODS = 10  # fewer periods since the baseline say nothing about throttling


def check(facts: Facts) -> list[Finding]:
    before, now = facts.baseline.throttling, facts.cgroup
    if None in (before.nr_periods, before.nr_throttled, now.nr_periods, now.nr_throttled):
        return [skipped(RULE, "no throttling counters to compare (no CPU quota, or no cpu.stat to read)")]
    periods, throttled = now.nr_periods - before.nr_periods, now.nr_throttled - before.nr_throttled
    if periods < 0 or throttled < 0:
        return [Finding(RULE, Status.FAIL, "throttling counters went backwards since the baseline (another cgroup); "
                                           "re-create the baseline")]
    if periods < MIN_PERIODS:
        judged = "not throttled" if not throttled else f"throttled in {throttled} of them, too few to judge"
        return [passed(RULE, f"{periods} CPU quota periods since baseline, {judged}")]
    ratio = throttled / periods
    evidence = {"periods": periods, "throttled": throttled, "ratio": round(ratio, 4), "limit": THROTTLED_LIMIT}
    if ratio >= THROTTLED_LIMIT:
        return [Finding(RULE, Status.FAIL, f"throttled in {ratio:.1%} of {periods} CPU periods since baseline "
                                           f"(limit {THROTTLED_LIMIT:.0%})", evidence=evidence)]
    return [passed(RULE, f"throttled {ratio:.1%} of {periods} periods since baseline", **evidence)]


CHECK = Check(name="baseline_throttling", rules=(RULE,), run=check, requires=(Need.BASELINE,))
