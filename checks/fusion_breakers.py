"""Fusion chains: does an op or a second consumer break a chain that a fusion pass would fuse?"""

from __future__ import annotations

from typing import Any

from paddle_doctor.base.vocabulary import BreakerKind, FusionStatus
from paddle_doctor.facts import Facts
from paddle_doctor.facts.graph import ChainBreaker, FusionInstance
from paddle_doctor.graph import unavailable
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import each_model
from paddle_doctor.judge.registry import Check, Need, graph_of

RULE = "PD-GRAPH-002"
SHOWN = 3


@evidence
class BreakerEvidence(Evidence):
    breaker: str
    pattern: str
    chain: str
    model: str
    breakers: list[dict[str, Any]]


def check(facts: Facts) -> list[Finding]:
    reason = unavailable(facts)
    if reason:
        return [skipped(RULE, reason)]
    graph = graph_of(facts)
    broken = [i for i in graph.instances if i.breakers and i.status != FusionStatus.FUSED]
    if not broken:
        return [passed(RULE, f"no custom or unknown op and no outside consumer breaks any of the {len(graph.instances)} fusible instances")]
    first, breaker = broken[0], broken[0].breakers[0]
    confirmed = any(i.status in (FusionStatus.UNFUSED, FusionStatus.PARTIAL) for i in broken)
    more = f"; and {len(broken) - SHOWN} more" if len(broken) > SHOWN else ""
    message = f"{len(broken)} fusible instance{'s' if len(broken) != 1 else ''} broken: " + "; ".join(
        f"{describe(b)} in {i.pattern} ({i.status})" for i in broken[:SHOWN] for b in i.breakers[:1]) + more
    if not confirmed:
        message += " (whether Paddle still fuses them cannot be told here)"
    evidence = BreakerEvidence(describe(breaker), first.pattern, " -> ".join(first.ops), facts.service.model or graph.program,
                               [dict(pattern=i.pattern, status=i.status, ops=i.ops, kind=b.kind, op=b.op, position=b.position,
                                     variable=b.variable, custom=b.custom) for i in broken for b in i.breakers])
    return [Finding(RULE, Status.FAIL if confirmed else Status.WARN, message,
                    observed="; ".join(explain(i) for i in broken[:SHOWN]) + more,
                    expected="the ops of each pattern adjacent, with no other consumer of their intermediate values",
                    evidence=evidence)]


def describe(breaker: ChainBreaker) -> str:
    if breaker.kind == BreakerKind.OP:
        return f"{'custom op' if breaker.custom else 'op'} {breaker.op} #{breaker.position} between {breaker.after} and {breaker.before}"
    return f"{breaker.op} #{breaker.position} also reading {breaker.variable} (output of {breaker.after})"


def explain(instance: FusionInstance) -> str:
    became = f", became {' + '.join(instance.became)}" if instance.became else ""
    return f"{' -> '.join(instance.ops)}{became}"


CHECK = Check(name="fusion_breakers", rules=(RULE,), run=each_model(check), requires=(Need.GRAPH,), evidence={RULE: BreakerEvidence})
