"""Graph-fusion coverage: how many of the model's fusible patterns did Paddle fuse?"""

from __future__ import annotations

from collections import Counter

from paddle_doctor.base.vocabulary import FusionStatus, ModelFormat, ProgramStatus
from paddle_doctor.facts import Facts
from paddle_doctor.facts.graph import GraphFacts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import each_model
from paddle_doctor.judge.registry import Check, Need, graph_of

LOW, UNREADABLE = "PD-GRAPH-003", "PD-GRAPH-006"
THRESHOLD = 0.8


@evidence
class ProgramEvidence(Evidence):
    program: str


@evidence
class UnreadableEvidence(Evidence):
    program: str
    format: ModelFormat | None


@evidence
class CoverageEvidence(Evidence):
    coverage: float
    fused: int
    fusible: int
    threshold: float
    pipeline: str | None
    model: str
    by_pattern: dict[str, float | None]


def check(facts: Facts) -> list[Finding]:
    graph = graph_of(facts)
    if graph.error:
        return [Finding(UNREADABLE, Status.FAIL, graph.error, observed=graph.error.split(": ", 1)[-1],
                        expected="a Paddle program: PIR JSON or a ProgramDesc this Paddle can read",
                        evidence=UnreadableEvidence(graph.program, graph.format)),
                skipped(LOW, f"the model's program cannot be read ({UNREADABLE})")]
    version = f" version {graph.version}" if graph.version is not None else ""
    readable = passed(UNREADABLE, f"{graph.program}: {graph.format} program{version}, {graph.ops} ops", ProgramEvidence(graph.program))
    return [readable, coverage(graph, facts.service.model)]


def coverage(graph: GraphFacts, model: str | None) -> Finding:
    total, optimised = graph.total, graph.optimised
    if total is None or total.fusible == 0:
        return passed(LOW, "the program has none of the fusible patterns the doctor knows")
    if optimised is not None and optimised.status == ProgramStatus.ERROR:
        return Finding(LOW, Status.ERROR, f"the optimised program could not be built: {optimised.reason}")
    if total.coverage is None:
        return skipped(LOW, f"{total.fusible} fusible instances found; their fusion cannot be told here: "
                            f"{optimised.reason if optimised else 'no optimised program'}")
    counted = total.fusible - total.unknown
    pipeline = optimised.pipeline if optimised else "service's configuration"
    evidence = CoverageEvidence(total.coverage, total.fused, counted, THRESHOLD, pipeline, model or graph.program,
                                {c.pattern: c.coverage for c in graph.coverage})
    summary = f"{total.fused} of {counted} fusible instances fused ({total.coverage:.0%}) in the {pipeline}"
    if total.coverage >= THRESHOLD:
        return passed(LOW, summary, evidence)
    reasons = Counter(i.reason for i in graph.instances if i.status in (FusionStatus.UNFUSED, FusionStatus.PARTIAL) and i.reason)
    common = "".join(f"; {n} x {reason.removesuffix(f' ({pipeline})')}" for reason, n in reasons.most_common(2))  # said once, above
    return Finding(LOW, Status.FAIL, summary + common,
                   observed="; ".join(f"{c.title}: {c.fused}/{c.fusible - c.unknown}" for c in graph.coverage),
                   expected=f"at least {THRESHOLD:.0%} of the fusible instances fused", evidence=evidence)


CHECK = Check(name="fusion_coverage", rules=(LOW, UNREADABLE), run=each_model(check), requires=(Need.GRAPH,),
              evidence={LOW: CoverageEvidence, UNREADABLE: UnreadableEvidence})
