"""CPU throttling: has the cgroup quota paused this container?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import advised_threads
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check

RULE = "PD-CPU-012"
FAIL_RATIO = 0.05


@evidence
class ThrottlingEvidence(Evidence):
    UNSAID = frozenset({"threads_per_instance"})  # where the CPU budget is unknown

    nr_periods: int
    nr_throttled: int
    throttled_seconds: float
    threads_per_instance: int | None = None


def check(facts: Facts) -> list[Finding]:
    group = facts.cgroup
    if group.nr_periods is None or group.nr_throttled is None:
        return [skipped(RULE, "no throttling counters (cpu.stat) were found")]
    if group.nr_periods == 0:
        return [passed(RULE, "no quota periods have elapsed (no CPU quota, or an idle container)")]
    ratio = group.nr_throttled / group.nr_periods
    seconds = (group.throttled_usec or 0) / 1e6
    observed = f"throttled in {group.nr_throttled} of {group.nr_periods} periods ({ratio:.1%}), {seconds:.1f} s in total"
    evidence = ThrottlingEvidence(group.nr_periods, group.nr_throttled, round(seconds, 3),
                                  advised_threads(facts))
    if ratio >= FAIL_RATIO:
        return [Finding(RULE, Status.FAIL, f"the CPU quota throttled this container in {ratio:.1%} of periods",
                        observed=observed, expected=f"under {FAIL_RATIO:.0%} of periods", evidence=evidence)]
    if group.nr_throttled:
        return [Finding(RULE, Status.WARN, f"the CPU quota throttled this container now and then ({ratio:.1%} of periods)",
                        observed=observed, expected="no throttled periods", evidence=evidence)]
    return [passed(RULE, f"never throttled in {group.nr_periods} periods", evidence)]


CHECK = Check(name="cpu_throttling", rules=(RULE,), run=check, evidence={RULE: ThrottlingEvidence})
