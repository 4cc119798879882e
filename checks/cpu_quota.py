"""CPU quota below one CPU: can even a single thread run a request at full speed?

Why: a cgroup quota of 0.5 CPU lets the container run for 50 ms of every 100 ms period. One
compute thread, the least a predictor can run, uses up the quota halfway through every
period, so every request longer than that is paused until the next period: latency doubles
(or worse) whatever the thread count, and no Config setting can fix it.
Fix: give the container at least one whole CPU (``docker run --cpus=1``, a Kubernetes CPU
limit of at least ``1``), or accept the latency and say so in the service's targets.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed
from paddle_doctor.registry import Check

RULE = "PD-CPU-016"


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
                        evidence={"quota_cpus": quota_cpus, "quota_file": group.quota_file, "run_ms": run_ms, "period_ms": period_ms})]
    return [passed(RULE, f"the CPU quota grants {quota_cpus:g} CPUs")]


CHECK = Check(name="cpu_quota", rules=(RULE,), run=check)
