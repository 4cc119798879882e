"""CPU quota below one CPU: can even a single thread run a request at full speed?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed
from paddle_doctor.judge.registry import Check

RULE = "PD-CPU-016"


@evidence
class QuotaEvidence(Evidence):
    quota_cpus: float
    quota_file: str | None
    run_ms: float
    period_ms: float


def check(facts: Facts) -> list[Finding]:
    group = facts.cgroup
    if not (group.quota_us and group.period_us):
        return [passed(RULE, "no CPU quota is set")]
    quota_cpus = group.quota_us / group.period_us
    run_ms = group.quota_us / 1000
    period_ms = group.period_us / 1000
    if quota_cpus < 1:
        return [Finding(RULE, Status.FAIL, f"the CPU quota grants {quota_cpus:g} CPU: even one thread is paused after "
                                           f"{run_ms:g} ms of every {period_ms:g} ms period",
                        observed=f"cgroup quota {group.quota_us}/{group.period_us} µs = {quota_cpus:g} CPU ({group.quota_file})",
                        expected="a quota of at least 1 CPU",
                        evidence=QuotaEvidence(quota_cpus, group.quota_file, run_ms, period_ms))]
    return [passed(RULE, f"the CPU quota grants {quota_cpus:g} CPUs")]


CHECK = Check(name="cpu_quota", rules=(RULE,), run=check, evidence={RULE: QuotaEvidence})
