"""TensorRT coverage: the share of the model's ops that run inside TensorRT engines, and the op
types left outside, from the optimised program the GPU predictor runs.

Why: each op TensorRT cannot take runs in Paddle between engines, with a copy at every
boundary; a model split into many small engines can be barely faster than without TensorRT.
The share is counted on the optimised program: ops in the engines' subgraphs against compute ops
outside them (feed, fetch and static weight ops not counted).
Fix: give TensorRT the input shape ranges (``collect_shape_range_info`` then
``enable_tuned_tensorrt_dynamic_shape``), lower ``min_subgraph_size``, or replace the op types
left outside.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.graph import unavailable
from paddle_doctor.registry import Check, Need

RULE = "PD-GRAPH-007"
THRESHOLD = 0.8


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    if service.device != "gpu" or not service.tensorrt.enabled:
        return [skipped(RULE, "the service does not use TensorRT")]
    reason = unavailable(facts)
    if reason:
        return [skipped(RULE, reason)]
    optimised = facts.graph.optimised
    share = optimised.tensorrt if optimised else None
    if share is None:
        return [skipped(RULE, f"the program the TensorRT predictor runs is not available here: "
                              f"{optimised.reason if optimised else 'no optimised program'}")]
    total = share.ops_inside + share.ops_outside
    summary = f"{share.ops_inside} of {total} ops run inside {share.engines} TensorRT engine{'s' if share.engines != 1 else ''}"
    evidence = {"share": share.share, "engines": share.engines, "inside": share.ops_inside,
                "outside": share.ops_outside, "outside_ops": share.outside, "threshold": THRESHOLD}
    if share.share is None or share.share >= THRESHOLD:
        return [passed(RULE, summary, **evidence)]
    left = ", ".join(f"{op} x{n}" for op, n in list(share.outside.items())[:6])
    return [Finding(RULE, Status.FAIL, f"{summary} ({share.share:.0%}); outside: {left}",
                    observed=f"{share.share:.0%} of the ops inside TensorRT; outside: {left}",
                    expected=f"at least {THRESHOLD:.0%} inside", evidence=evidence)]


CHECK = Check(name="tensorrt_coverage", rules=(RULE,), run=check, requires=(Need.GRAPH,))
