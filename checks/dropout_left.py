"""Dropout left in the inference graph: dropout ops that the optimised program still runs.

Why: in eval mode a dropout op passes its input through, but it is still an op with its own
output on every request, and one between two ops stops their fusion (in attention it sits
between softmax and the second matmul). The old IR removes dropout
(``simplify_with_basic_ops_pass``); PIR's CPU passes keep it.
Fix: set every dropout probability to 0 before ``paddle.jit.save`` (``nn.Dropout.p = 0``,
``nn.MultiHeadAttention.dropout = 0``): outputs do not change and no dropout op is exported.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.graph import unavailable
from paddle_doctor.registry import Check, Need

RULE = "PD-GRAPH-005"


def check(facts: Facts) -> list[Finding]:
    reason = unavailable(facts)
    if reason:
        return [skipped(RULE, reason)]
    graph = facts.graph
    found = len(graph.dropout)
    if not found:
        return [passed(RULE, "the program has no dropout ops")]
    if graph.dropout_left is None:
        reason = graph.optimised.reason if graph.optimised else "no optimised program"
        return [skipped(RULE, f"the program has {found} dropout ops; whether Paddle removes them cannot be told here: {reason}")]
    if graph.dropout_left == 0:
        return [passed(RULE, f"Paddle removes the {found} dropout ops of the program")]
    shown = ", ".join(graph.dropout[:4]) + (f" and {found - 4} more" if found > 4 else "")
    return [Finding(RULE, Status.FAIL, f"{graph.dropout_left} of {found} dropout ops are left in the program the predictor runs",
                    observed=f"dropout ops in the program: {shown}", expected="no dropout op in an inference program",
                    evidence={"dropout": found, "left": graph.dropout_left, "ops": graph.dropout})]


CHECK = Check(name="dropout_left", rules=(RULE,), run=check, requires=(Need.GRAPH,))
