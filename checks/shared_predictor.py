"""Shared predictor: do concurrent requests run on one predictor without a lock?"""

from __future__ import annotations

from dataclasses import dataclass

from paddle_doctor.base.vocabulary import Layout
from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import cpu_budget
from paddle_doctor.facts.service_config import serving_layout
from paddle_doctor.judge.findings import Evidence, Finding, Status, passed
from paddle_doctor.judge.registry import Check

RULE = "PD-LOAD-001"
DESCRIPTIONS = {
    Layout.PROCESSES: "worker processes with a predictor each",
    Layout.CLONE: "a clone of the predictor per worker thread",
    Layout.POOL: "a PredictorPool",
    Layout.LOCK: "one predictor behind a lock (one request at a time)",
}


@dataclass(frozen=True)
class LayoutEvidence(Evidence):
    layout: Layout


@dataclass(frozen=True)
class SharedEvidence(Evidence):
    concurrency: int | None
    workers: int


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    layout = serving_layout(service)
    if service.concurrency == 1:
        return [passed(RULE, "the service takes one request at a time (concurrency 1)")]
    if layout != Layout.SHARED:
        return [passed(RULE, f"concurrent requests reach {DESCRIPTIONS[layout]}", LayoutEvidence(layout))]
    budget = cpu_budget(facts)
    workers = service.concurrency or (budget.whole_cpus if budget else 2)
    if budget:
        workers = min(workers, budget.whole_cpus)
    concurrency = f"{service.concurrency} concurrent requests" if service.concurrency else "concurrent requests"
    return [Finding(RULE, Status.FAIL, f"one predictor is shared by {concurrency} without a lock; it is not thread-safe",
                    observed="layout: shared (one predictor, concurrent run() calls)",
                    expected="a predictor per worker (clone or PredictorPool), worker processes, or a lock",
                    evidence=SharedEvidence(service.concurrency, workers))]


CHECK = Check(name="shared_predictor", rules=(RULE,), run=check, evidence={RULE: SharedEvidence})
