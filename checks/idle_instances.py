"""Idle instances: does the service hold more predictor instances than it has concurrent requests?

Why: with C concurrent requests at most C predictors are ever busy. Every further process holds
the Paddle runtime (about 300 MB) and its own copy of the weights, and every further clone or
pool entry its own activations, for nothing; a process count copied from a web-server formula
(2 x cores + 1) is the usual cause.
Fix: size the pool or the process count to the concurrency (and threads x instances to the CPU
budget); the ``layouts`` experiment measures the best split.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.registry import Check
from paddle_doctor.service import serving_layout

RULE = "PD-LOAD-003"
NAMES = {"processes": "worker processes", "clone": "clones", "pool": "PredictorPool entries"}


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
                    evidence={"instances": service.instances, "concurrency": service.concurrency, "idle": idle,
                              "pool_size": service.concurrency})]


CHECK = Check(name="idle_instances", rules=(RULE,), run=check)
