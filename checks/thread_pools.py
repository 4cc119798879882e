"""OpenMP / MKL thread pools: are they sized for the container, or for the host?"""

from __future__ import annotations

from dataclasses import dataclass

from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import advised_threads, cpu_budget
from paddle_doctor.judge.findings import Evidence, Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check

RULE = "PD-CPU-013"
VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


@dataclass(frozen=True)
class PoolsEvidence(Evidence):
    budget_cpus: float
    budget: int
    visible_cpus: int | None


def check(facts: Facts) -> list[Finding]:
    budget = cpu_budget(facts)
    if budget is None:
        return [skipped(RULE, "the CPU budget is unknown; see PD-CPU-010")]
    problems: list[str] = []
    fine: list[str] = []
    for name in VARIABLES:
        value = facts.env.get(name)
        if value is None:
            continue
        try:
            threads = int(value.split(",")[0])
        except ValueError:
            problems.append(f"{name}={value!r} is not a number")
            continue
        (problems if threads > budget.cpus else fine).append(f"{name}={threads}")
    if not any(name in facts.env for name in VARIABLES) and budget.visible_cpus and budget.visible_cpus > budget.cpus:
        problems.append(f"OMP_NUM_THREADS is unset, so OpenMP starts {budget.visible_cpus} threads (the CPUs it can see)")
    if problems:
        advised = advised_threads(facts)
        return [Finding(RULE, Status.FAIL, f"thread pools exceed the budget of {budget.describe()}: {'; '.join(problems)}",
                        observed="; ".join(problems), expected=f"OMP_NUM_THREADS={advised} and MKL_NUM_THREADS={advised}, "
                                 f"the predictor's own thread count (never above the budget of {budget.whole_cpus})",
                        evidence=PoolsEvidence(budget.cpus, budget.whole_cpus, budget.visible_cpus))]
    detail = ", ".join(fine) if fine else f"OpenMP sees {budget.visible_cpus} CPUs"
    return [passed(RULE, f"thread pools fit the budget of {budget.describe()} ({detail})")]


CHECK = Check(name="thread_pools", rules=(RULE,), run=check, evidence={RULE: PoolsEvidence})
