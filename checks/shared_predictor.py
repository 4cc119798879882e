"""Shared predictor: do concurrent requests run on one predictor without a lock (as the record saw its threads, or as the service says)?"""

from __future__ import annotations

from dataclasses import dataclass

from paddle_doctor.base.vocabulary import Layout, SourcePatternKind
from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import cpu_budget
from paddle_doctor.facts.service_config import serving_layout
from paddle_doctor.judge.findings import Evidence, Finding, Status, passed
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import patterns_of

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
    found = patterns_of(facts, SourcePatternKind.SHARED_PREDICTOR_THREADS) if Need.SOURCE.missing(facts) is None else []
    in_code = ", ".join(str(location) for location, _ in found) or None
    judged = facts.service_record.sharing_judged(in_code) if facts.service_record is not None else None
    if judged is not None:
        return [shared(facts, judged.message, judged.observed) if judged.fails else passed(RULE, judged.message)]
    if service.concurrency == 1:
        return [passed(RULE, "the service takes one request at a time (concurrency 1)")]
    layout = serving_layout(service)
    if in_code:  # what the code does, over a layout guessed from the instances or said in --config (PD-SRC-005 says the same)
        said = f", though the layout given is {service.layout.value!r}" if service.layout is not None else (
            f", in each of its {service.instances} instances" if service.instances > 1 else "")
        return [shared(facts, f"the service's code at {in_code} shares one predictor among threads without a lock{said}; "
                              "it is not thread-safe", f"the source: {'; '.join(what for _, what in found)}")]
    if service.layout is None and layout == Layout.LOCK:  # guessed: nothing says how requests reach the one predictor
        served = patterns_of(facts, SourcePatternKind.ONE_REQUEST_AT_A_TIME) if Need.SOURCE.missing(facts) is None else []
        if served:
            return [passed(RULE, "no concurrent requests reach the one predictor: "
                                 + "; ".join(f"{location}: {what}" for location, what in served))]
        return [passed(RULE, "one predictor, and nothing says concurrent requests reach it at once (no layout: in --config, "
                             "no record of the threads that run it)")]
    if layout != Layout.SHARED:
        return [passed(RULE, f"concurrent requests reach {DESCRIPTIONS[layout]}", LayoutEvidence(layout))]
    concurrency = f"{service.concurrency} concurrent requests" if service.concurrency else "concurrent requests"
    return [shared(facts, f"one predictor is shared by {concurrency} without a lock; it is not thread-safe",
                   "layout: shared (one predictor, concurrent run() calls)")]


def shared(facts: Facts, message: str, observed: str) -> Finding:
    service, budget = facts.service, cpu_budget(facts)
    workers = service.concurrency or (budget.whole_cpus if budget else 2)
    if budget:
        workers = min(workers, budget.whole_cpus)
    return Finding(RULE, Status.FAIL, message, observed=observed,
                   expected="a predictor per worker (clone or PredictorPool), worker processes, or a lock",
                   evidence=SharedEvidence(service.concurrency, workers))


CHECK = Check(name="shared_predictor", rules=(RULE,), run=check, evidence={RULE: SharedEvidence})
