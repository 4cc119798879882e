"""Baseline, CPU budget: did the CPU budget shrink since the baseline below the threads the service runs?"""

from __future__ import annotations

from paddle_doctor.checks.cpu_budget import over_budget, total_threads
from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import cpu_budget
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed
from paddle_doctor.judge.registry import Check, Need, baseline_of

RULE = "PD-HEALTH-001"


@evidence
class ShrunkEvidence(Evidence):
    baseline_cpus: float
    cpus: float
    total_threads: int


def check(facts: Facts) -> list[Finding]:
    budget, total = cpu_budget(facts), total_threads(facts)
    if budget is None:
        return [Finding(RULE, Status.ERROR, "cannot establish the CPU budget now (no cgroup, cpuset or CPU count readable)")]
    before = baseline_of(facts).cpu.budget_cpus
    if before is not None and budget.cpus < before and over_budget(total, budget):
        return [Finding(RULE, Status.FAIL, f"cpu budget shrank from {before:g} to {budget.describe()}, below {total} threads",
                        observed=f"{budget.cpus:g} CPUs for {total} threads", expected=f"{before:g} CPUs, as at baseline",
                        evidence=ShrunkEvidence(before, budget.cpus, total))]
    return [passed(RULE, cpu_summary(facts, before))]


def cpu_summary(facts: Facts, before: float | None = None) -> str:
    """'cpu budget 2 >= 2 threads', with the baseline's budget when it differs."""
    budget, total = cpu_budget(facts), total_threads(facts)
    if budget is None:
        return f"{total} threads, cpu budget unknown"
    changed = f" (was {before:g} at baseline)" if before is not None and budget.cpus != before else ""
    below_one = " (a quota below one CPU: PD-CPU-016)" if budget.cpus < 1 else ""
    return f"cpu budget {budget.cpus:g} {'>=' if budget.cpus >= total else '<'} {total} threads{below_one}{changed}"


CHECK = Check(name="baseline_cpu_budget", rules=(RULE,), run=check, requires=(Need.BASELINE,),
              evidence={RULE: ShrunkEvidence}, summary=cpu_summary)
