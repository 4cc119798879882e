"""Graph switches in the service's Config: IR optimisation off, feed/fetch ops on?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Proposal, Status, passed
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

IR_OPTIM, FEED_FETCH = "PD-GRAPH-001", "PD-GRAPH-004"


def check(facts: Facts) -> list[Finding]:
    service = facts.service
    if service.ir_optim is False:
        ir = Finding(IR_OPTIM, Status.FAIL, "the service turns IR optimisation off, so no fusion pass runs",
                     observed="switch_ir_optim(False)", expected="switch_ir_optim(True)", proposal=Proposal("ir_optim", (True,)),
                     locations=facts.lines_deciding("ir_optim"))
    else:
        ir = passed(IR_OPTIM, "IR optimisation is on")
    if service.feed_fetch_ops:
        feed = Finding(FEED_FETCH, Status.FAIL, "the service turns feed/fetch ops on",
                       observed="switch_use_feed_fetch_ops(True)", expected="switch_use_feed_fetch_ops(False) with zero-copy handles",
                       proposal=Proposal("feed_fetch", (False,)))
    else:
        feed = passed(FEED_FETCH, "feed/fetch ops are off")
    return [ir, feed]


CHECK = Check(name="graph_switches", rules=(IR_OPTIM, FEED_FETCH), run=each_predictor(check))
