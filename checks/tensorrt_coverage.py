"""TensorRT coverage: what share of the model's ops runs inside TensorRT engines?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Device
from paddle_doctor.facts import Facts
from paddle_doctor.graph import unavailable
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import each_model
from paddle_doctor.judge.registry import Check, Need, graph_of

RULE = "PD-GRAPH-007"
THRESHOLD = 0.8


@evidence
class ShareEvidence(Evidence):
    share: float | None
    engines: int
    inside: int
    outside: int
    outside_ops: dict[str, int]
    threshold: float


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    if service.device != Device.GPU or not service.tensorrt.enabled:
        return [skipped(RULE, "the service does not use TensorRT")]
    reason = unavailable(facts)
    if reason:
        return [skipped(RULE, reason)]
    optimised = graph_of(facts).optimised
    share = optimised.tensorrt if optimised else None
    if share is None:
        return [skipped(RULE, f"the program the TensorRT predictor runs is not available here: "
                              f"{optimised.reason if optimised else 'no optimised program'}")]
    total = share.ops_inside + share.ops_outside
    summary = f"{share.ops_inside} of {total} ops run inside {share.engines} TensorRT engine{'s' if share.engines != 1 else ''}"
    evidence = ShareEvidence(share.share, share.engines, share.ops_inside, share.ops_outside, share.outside, THRESHOLD)
    if share.share is None or share.share >= THRESHOLD:
        return [passed(RULE, summary, evidence)]
    left = ", ".join(f"{op} x{n}" for op, n in list(share.outside.items())[:6])
    return [Finding(RULE, Status.FAIL, f"{summary} ({share.share:.0%}); outside: {left}",
                    observed=f"{share.share:.0%} of the ops inside TensorRT; outside: {left}",
                    expected=f"at least {THRESHOLD:.0%} inside", evidence=evidence)]


CHECK = Check(name="tensorrt_coverage", rules=(RULE,), run=each_model(check), requires=(Need.GRAPH,), evidence={RULE: ShareEvidence})
