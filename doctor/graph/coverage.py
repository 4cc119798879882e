"""Fusion coverage: the fusible patterns of the original program against the optimised program
the predictor runs, per instance with the reason it was not fused, per pattern and in total.

Pure: programs in, GraphFacts out. Reasons, most specific first: IR optimisation off; a breaker
in the chain (named with its position); the pass deleted by the service's config; a pass that
rejected an op of the instance (from Paddle's log); no pass for the pattern ran in this
configuration; or a pass ran and did not fuse it, for reasons the graph does not show.
"""

from __future__ import annotations

from dataclasses import replace

from ..base.vocabulary import BreakerKind, FusionStatus, ProgramStatus
from ..facts.graph import ChainBreaker, FusionInstance, GraphFacts, OptimisedProgram, PatternCoverage, TensorRTShare
from .align import Aligner, became, status_of
from .dataflow import ENGINE_OPS, Flow
from .fusions import CUSTOM_DIALECTS, PASSES, TITLES, Breaker, Match, find_patterns
from .program import INPUT_OPS, Op, Program

IO_OPS = (*INPUT_OPS, "fetch", "shadow_output", "yield")
IR_OFF = "IR optimisation is off (switch_ir_optim(False)), so no fusion pass runs"


def analyse(original: Program, optimised: OptimisedProgram, optimised_program: Program | None = None,
            ir_optim: bool = True, deleted_passes: tuple[str, ...] = (), tensorrt: bool = False) -> GraphFacts:
    """The fusible patterns of ``original``, each placed in ``optimised_program`` where it was read, with its
    status and why it was not fused; their coverage per pattern and in total."""
    flow = Flow(original)
    matches = find_patterns(flow)
    histogram = original.histogram()
    dropout = [label(op) for op in original.ops if op.type == "dropout"]
    aligner = None
    if optimised_program is not None:
        optimised_flow = Flow(optimised_program)
        optimised = described(optimised, flow, optimised_flow, tensorrt)
        aligner = Aligner(flow, optimised_flow, [m for m in matches if m.pattern == "attention"])
    why = Reasons(optimised, ir_optim, deleted_passes)
    instances = [_instance(match, flow, aligner, ir_optim, why) for match in matches]
    return GraphFacts(program=original.path, format=original.format, version=original.version, ops=len(original.ops),
                      histogram=histogram, optimised=optimised, attribute_types=original.attribute_types(),
                      feed_fetch={t: histogram[t] for t in ("feed", "data", "fetch") if t in histogram},
                      instances=instances, dropout=dropout,
                      dropout_left=_dropout_left(optimised, optimised_program is not None, ir_optim, len(dropout)),
                      coverage=_coverage(instances), total=count("total", instances))


def _instance(match: Match, flow: Flow, aligner: Aligner | None, ir_optim: bool, why: Reasons) -> FusionInstance:
    """One match of a pattern: where the optimised program has its ops (where it was read), its status and why."""
    placed = aligner.locate(match) if aligner else None
    status = status_of(placed) if aligner else (FusionStatus.UNFUSED if not ir_optim else FusionStatus.UNKNOWN)
    return FusionInstance(
        pattern=match.pattern, status=status, ops=[label(op) for op in match.ops],
        variables=[(flow.data_outputs(op) or op.output_names() or ["?"])[0] for op in match.ops],
        params=flow.parameters(match.ops[match.anchor]), became=became(placed),
        reason=why.explain(match, status, placed), breakers=[chain_breaker(b) for b in match.breakers])


def _dropout_left(optimised: OptimisedProgram, read: bool, ir_optim: bool, dropout: int) -> int | None:
    """The dropout ops left after optimisation: counted in the optimised program where it was ``read``, all of
    them where IR optimisation is off, else not known."""
    if read:
        return optimised.histogram.get("dropout", 0)
    return dropout if not ir_optim else None


def _coverage(instances: list[FusionInstance]) -> list[PatternCoverage]:
    """The coverage of each pattern found, in the order of :data:`TITLES`."""
    return [count(pattern, [i for i in instances if i.pattern == pattern])
            for pattern in TITLES if any(i.pattern == pattern for i in instances)]


def label(op: Op) -> str:
    return f"{op.type} #{op.index}"


def chain_breaker(breaker: Breaker) -> ChainBreaker:
    return ChainBreaker(kind=breaker.kind, op=breaker.op.type, position=breaker.op.index, variable=breaker.variable,
                        after=label(breaker.after), before=label(breaker.before),
                        custom=breaker.op.dialect in CUSTOM_DIALECTS)


def count(pattern: str, instances: list[FusionInstance]) -> PatternCoverage:
    tally = {status.value: sum(1 for i in instances if i.status == status) for status in FusionStatus}
    counted = len(instances) - tally["unknown"]
    return PatternCoverage(pattern=pattern, title=TITLES.get(pattern, "all patterns"), fusible=len(instances),
                           coverage=round(tally["fused"] / counted, 4) if counted else None, **tally)


def described(optimised: OptimisedProgram, original: Flow, flow: Flow, tensorrt: bool) -> OptimisedProgram:
    """``optimised`` with its op counts, and which data ops (not weight or shape arithmetic) were fused away and into what."""
    before, after = data_histogram(original), data_histogram(flow)
    return replace(optimised, format=flow.program.format, ops=len(flow.program.ops), histogram=flow.program.histogram(),
                   removed={t: n - after.get(t, 0) for t, n in before.items() if after.get(t, 0) < n},
                   added={t: n - before.get(t, 0) for t, n in after.items() if before.get(t, 0) < n},
                   tensorrt=tensorrt_share(flow, tensorrt))


def data_histogram(flow: Flow) -> dict[str, int]:
    counts: dict[str, int] = {}
    for op in flow.program.ops:
        if flow.is_data_op(op) and op.type not in IO_OPS:
            counts[op.type] = counts.get(op.type, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def tensorrt_share(flow: Flow, enabled: bool) -> TensorRTShare | None:
    """The share of compute ops inside TensorRT engines, and the op types left outside them."""
    engines = [op for op in flow.program.ops if op.type in ENGINE_OPS]
    if not engines and not enabled:
        return None
    inside = outside = 0
    left: dict[str, int] = {}
    for op in flow.program.ops:
        if op.type in ENGINE_OPS or op.type in IO_OPS or not flow.is_data_op(op):
            continue
        if op.block in flow.engine_blocks:
            inside += 1
        else:
            outside += 1
            left[op.type] = left.get(op.type, 0) + 1
    total = inside + outside
    return TensorRTShare(engines=len(engines), ops_inside=inside, ops_outside=outside,
                         share=round(inside / total, 4) if total else None,
                         outside=dict(sorted(left.items(), key=lambda item: (-item[1], item[0]))))


class Reasons:
    def __init__(self, optimised: OptimisedProgram, ir_optim: bool, deleted_passes: tuple[str, ...]):
        self.optimised = optimised
        self.ir_optim = ir_optim
        self.deleted = deleted_passes

    def explain(self, match: Match, status: FusionStatus, placed: list[Op] | None) -> str | None:
        if status == FusionStatus.FUSED:
            return None
        if status == FusionStatus.UNKNOWN:
            if self.optimised.status != ProgramStatus.READ:
                return f"the optimised program is not available: {self.optimised.reason}"
            return "not found in the optimised program (its parameters were renamed or combined by a pass)"
        why = self.why(match)
        if status == FusionStatus.PARTIAL and placed is not None:  # partly fused: placed in the optimised program
            return f"partly fused ({merged(match, placed)}): {why}"
        return why

    def why(self, match: Match) -> str:
        if not self.ir_optim:
            return IR_OFF
        if match.breakers:
            return "; ".join(breaker_text(b) for b in match.breakers)
        passes = PASSES[match.pattern]
        deleted = [p for p in self.deleted if p in passes]
        if deleted:
            return f"the service deletes {', '.join(deleted)} (config.delete_pass)"
        types = {op.type for op in match.ops}
        rejected = [r for r in self.optimised.rejections if r.pass_name in passes and r.op in types]
        if rejected:
            return "; ".join(f"{r.pass_name} rejected it: the {r.check} of {r.op} failed the pass's compatibility check"
                             for r in dedupe(rejected))
        ran = [p for p in self.optimised.passes or [] if p in passes]
        if self.optimised.passes is not None and not ran:
            return f"no pass that fuses {TITLES[match.pattern]} ran in this configuration ({self.optimised.pipeline})"
        which = f"{', '.join(dict.fromkeys(ran))} ran but" if ran else "Paddle"
        return f"{which} did not fuse it; the graph does not show why (a shape, attribute or data type the pass does not accept)"


def breaker_text(breaker: Breaker) -> str:
    if breaker.kind == BreakerKind.OP:
        what = "custom op" if breaker.op.dialect in CUSTOM_DIALECTS else "op"
        return f"{what} {label(breaker.op)} sits between {label(breaker.after)} and {label(breaker.before)}; no pass fuses across it"
    return f"the output of {label(breaker.after)} ({breaker.variable}) is also used by {label(breaker.op)}, outside the pattern"


def merged(match: Match, placed: list[Op]) -> str:
    groups: list[tuple[Op, list[Op]]] = []
    for op, target in zip(match.ops, placed):
        if groups and groups[-1][0] is target:
            groups[-1][1].append(op)
        else:
            groups.append((target, [op]))
    return ", ".join(f"{' + '.join(o.type for o in ops)} -> {target.type}" for target, ops in groups if len(ops) > 1)


def dedupe(rejections: list) -> list:
    return list({(r.pass_name, r.op, r.check): r for r in rejections}.values())
