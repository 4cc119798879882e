"""Fusion chains broken by an op or a second consumer: a custom or unknown op between ops a pass
would fuse, or an intermediate value that something outside the pattern also reads.

Why: a fusion pass matches adjacent ops only. An op it does not know (a custom op, or a known op
where no pass expects one) between conv2d and batch_norm, or an fc's matmul and its bias add,
leaves the whole chain op by op; so does an intermediate value with another consumer, because
the fused kernel never materialises it. The graph probe names each breaker with its position,
and says whether Paddle still fused the chain in the program the predictor runs.
Fix: move the custom op before or after the chain, or let the other consumer read a value
computed after the chain; re-export the model and check the coverage again.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.facts.graph import ChainBreaker, FusionInstance
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.graph import unavailable
from paddle_doctor.registry import Check, Need
from paddle_doctor.vocabulary import BreakerKind, FusionStatus

RULE = "PD-GRAPH-002"
SHOWN = 3


def check(facts: Facts) -> list[Finding]:
    reason = unavailable(facts)
    if reason:
        return [skipped(RULE, reason)]
    graph = facts.graph
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
    evidence = {"breaker": describe(breaker), "pattern": first.pattern, "chain": " -> ".join(first.ops),
                "model": facts.service.model or graph.program,
                "breakers": [dict(pattern=i.pattern, status=i.status, ops=i.ops, kind=b.kind, op=b.op, position=b.position,
                                  variable=b.variable, custom=b.custom) for i in broken for b in i.breakers]}
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


CHECK = Check(name="fusion_breakers", rules=(RULE,), run=check, requires=(Need.GRAPH,))
