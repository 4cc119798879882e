"""Idle instances: does the service hold more predictor instances than it has concurrent requests?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Layout
from paddle_doctor.facts import Facts
from paddle_doctor.facts.service_config import serving_layout
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check

RULE = "PD-LOAD-003"
NAMES = {Layout.PROCESSES: "worker processes", Layout.CLONE: "clones", Layout.POOL: "PredictorPool entries"}


@evidence
class IdleEvidence(Evidence):
    instances: int
    concurrency: int
    idle: int
    pool_size: int


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    if service.concurrency is None:
        return [skipped(RULE, "the service's concurrency is unknown (--concurrency or concurrency: in --config)")]
    layout = serving_layout(service)
    if layout not in NAMES or service.instances <= service.concurrency:
        return [passed(RULE, f"{service.instances} predictor instance{'s' if service.instances != 1 else ''} "
                             f"for {service.concurrency} concurrent request{'s' if service.concurrency != 1 else ''}")]
    idle = service.instances - service.concurrency
    return [Finding(RULE, Status.FAIL,
                    f"{service.instances} {NAMES[layout]} for {service.concurrency} concurrent requests: {idle} are never busy",
                    observed=f"layout {layout}, instances {service.instances}, concurrency {service.concurrency}",
                    expected=f"at most {service.concurrency} instances",
                    evidence=IdleEvidence(service.instances, service.concurrency, idle, service.concurrency))]


CHECK = Check(name="idle_instances", rules=(RULE,), run=check, evidence={RULE: IdleEvidence})
