"""Source: does the service's code switch the graph optimisation off?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import switched_off

RULE = "PD-SRC-002"


def check(facts: Facts) -> list[Finding]:
    return switched_off(facts, RULE, "ir_optim", "PD-GRAPH-001", "the service's ir_optim setting",
                        "the service's code switches ir_optim off", "switch_ir_optim(True), or no call",
                        "the service's code leaves the graph optimisation on")


CHECK = Check(name="source_ir_optim", rules=(RULE,), run=check, requires=(Need.SOURCE,))
