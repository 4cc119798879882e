"""Dropout left in the inference graph: does the optimised program still run dropout ops?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.graph import unavailable
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import each_model
from paddle_doctor.judge.registry import Check, Need, graph_of

RULE = "PD-GRAPH-005"


@evidence
class DropoutEvidence(Evidence):
    dropout: int
    left: int
    ops: list[str]


def check(facts: Facts) -> list[Finding]:
    reason = unavailable(facts)
    if reason:
        return [skipped(RULE, reason)]
    graph = graph_of(facts)
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
                    evidence=DropoutEvidence(found, graph.dropout_left, graph.dropout))]


CHECK = Check(name="dropout_left", rules=(RULE,), run=each_model(check), requires=(Need.GRAPH,), evidence={RULE: DropoutEvidence})
