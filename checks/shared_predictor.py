"""Shared predictor: do concurrent requests run on one predictor without a lock?

Why: a Paddle predictor is not thread-safe. Its input and output tensors belong to the
predictor, so two threads calling ``run()`` on it at once overwrite each other's inputs, read
each other's outputs, or crash. A shared predictor without a lock is never measured or
recommended; behind a lock it is safe but serves one request at a time.
Fix: one predictor per worker (``predictor.clone()`` shares the weights, or a
``PredictorPool``), or worker processes; with --model and --concurrency the ``layouts``
experiment measures which serves the most requests here.
"""

from __future__ import annotations

from paddle_doctor.budget import cpu_budget
from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed
from paddle_doctor.registry import Check
from paddle_doctor.service import serving_layout

RULE = "PD-LOAD-001"
DESCRIPTIONS = {
    "processes": "worker processes with a predictor each",
    "clone": "a clone of the predictor per worker thread",
    "pool": "a PredictorPool",
    "lock": "one predictor behind a lock (one request at a time)",
}


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    layout = serving_layout(service)
    if service.concurrency == 1:
        return [passed(RULE, "the service takes one request at a time (concurrency 1)")]
    if layout != "shared":
        return [passed(RULE, f"concurrent requests reach {DESCRIPTIONS[layout]}", layout=layout)]
    budget = cpu_budget(facts)
    workers = service.concurrency or (budget.whole_cpus if budget else 2)
    if budget:
        workers = min(workers, budget.whole_cpus)
    concurrency = f"{service.concurrency} concurrent requests" if service.concurrency else "concurrent requests"
    return [Finding(RULE, Status.FAIL, f"one predictor is shared by {concurrency} without a lock; it is not thread-safe",
                    observed="layout: shared (one predictor, concurrent run() calls)",
                    expected="a predictor per worker (clone or PredictorPool), worker processes, or a lock",
                    evidence={"concurrency": service.concurrency, "workers": workers})]


CHECK = Check(name="shared_predictor", rules=(RULE,), run=check)
