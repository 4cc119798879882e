"""Graph-fusion coverage: how many of the model's fusible patterns Paddle fused in the program
the service's configuration really runs, and whether the model's program can be read at all.

Why: conv+batch_norm+activation, fc, attention and layer_norm chains that are not fused run op
by op, with more kernels and more memory traffic. The graph probe matches the fusible patterns
on the original program, has Paddle build the optimised program for the service's Config, and
gives each unfused instance its reason (IR optimisation off, oneDNN off, a pass deleted or
refusing an op, a breaker in the chain). A program that is not a Paddle program, or of a version
this Paddle cannot read, is named with its version. With --model the ``ir_optim`` experiment
measures what the fusions are worth on this model.
Fix: act on the reason given for each unfused instance: ``config.enable_mkldnn()``,
``config.switch_ir_optim(True)``, keep the fusion passes, re-export the model.
"""

from __future__ import annotations

from collections import Counter

from paddle_doctor.facts import Facts
from paddle_doctor.facts.graph import GraphFacts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.registry import Check, Need
from paddle_doctor.vocabulary import FusionStatus

LOW, UNREADABLE = "PD-GRAPH-003", "PD-GRAPH-006"
THRESHOLD = 0.8


def check(facts: Facts) -> list[Finding]:
    graph = facts.graph
    if graph.error:
        return [Finding(UNREADABLE, Status.FAIL, graph.error, observed=graph.error.split(": ", 1)[-1],
                        expected="a Paddle program: PIR JSON or a ProgramDesc this Paddle can read",
                        evidence={"program": graph.program, "format": graph.format}),
                skipped(LOW, f"the model's program cannot be read ({UNREADABLE})")]
    version = f" version {graph.version}" if graph.version is not None else ""
    readable = passed(UNREADABLE, f"{graph.program}: {graph.format} program{version}, {graph.ops} ops", program=graph.program)
    return [readable, coverage(graph, facts.service.model)]


def coverage(graph: GraphFacts, model: str | None) -> Finding:
    total, optimised = graph.total, graph.optimised
    if total is None or total.fusible == 0:
        return passed(LOW, "the program has none of the fusible patterns the doctor knows")
    if optimised is not None and optimised.status == "error":
        return Finding(LOW, Status.ERROR, f"the optimised program could not be built: {optimised.reason}")
    if total.coverage is None:
        return skipped(LOW, f"{total.fusible} fusible instances found; their fusion cannot be told here: "
                            f"{optimised.reason if optimised else 'no optimised program'}")
    counted = total.fusible - total.unknown
    pipeline = optimised.pipeline if optimised else "service's configuration"
    evidence = {"coverage": total.coverage, "fused": total.fused, "fusible": counted, "threshold": THRESHOLD,
                "pipeline": pipeline, "model": model or graph.program,
                "by_pattern": {c.pattern: c.coverage for c in graph.coverage}}
    summary = f"{total.fused} of {counted} fusible instances fused ({total.coverage:.0%}) in the {pipeline}"
    if total.coverage >= THRESHOLD:
        return passed(LOW, summary, **evidence)
    reasons = Counter(i.reason for i in graph.instances if i.status in (FusionStatus.UNFUSED, FusionStatus.PARTIAL) and i.reason)
    common = "".join(f"; {n} x {reason.removesuffix(f' ({pipeline})')}" for reason, n in reasons.most_common(2))  # said once, above
    return Finding(LOW, Status.FAIL, summary + common,
                   observed="; ".join(f"{c.title}: {c.fused}/{c.fusible - c.unknown}" for c in graph.coverage),
                   expected=f"at least {THRESHOLD:.0%} of the fusible instances fused", evidence=evidence)


CHECK = Check(name="fusion_coverage", rules=(LOW, UNREADABLE), run=check, requires=(Need.GRAPH,))
