"""Where each matched op of the original program went in the optimised one.

Anchors are names both programs share: parameters (a conv's filter, an fc's weight, a
batch_norm's statistics), reached through the static chains that fusions leave behind. From
the anchor, the other matched ops are found by walking data edges in the optimised program; an
op that is no longer there as its own op was absorbed by its neighbour. Attention has no
parameters: its softmax is paired, in program order, with the softmax or fused attention op of
the optimised program (a softmax inside a TensorRT engine's subgraph stands for its engine).

A match whose ops all land on one op was fused; on as many ops as it has, not fused; in between,
partly fused.
"""

from __future__ import annotations

from ..base.vocabulary import FusionStatus
from .dataflow import Flow, is_stable_name
from .fusions import MATMUL, SOFTMAX, Match, family
from .program import Op

FUSED_ATTENTION = frozenset({"multihead_matmul", "fused_multi_transformer", "self_dp_attention", "fused_attention",
                             "flash_attn", "memory_efficient_attention", "fused_dot_product_attention",
                             "variable_length_memory_efficient_attention", "block_multihead_attention",
                             "masked_multihead_attention"})
WHOLE_MODEL_ATTENTION = ("fused_multi_transformer",)


class Aligner:
    def __init__(self, original: Flow, optimised: Flow, attention: list[Match]):
        self.original = original
        self.optimised = optimised
        self.cores = self._pair_attention(attention)

    def locate(self, match: Match) -> list[Op] | None:
        """The optimised op each matched op became (the same op for ops fused together), or None
        when the match cannot be found in the optimised program."""
        anchor = self.cores.get(id(match)) if match.pattern == "attention" else self._by_parameters(match.ops[match.anchor], None)
        if anchor is None:
            return None
        after = [anchor]  # the anchor's op and those after it
        for index in range(match.anchor + 1, len(match.ops)):
            after.append(self._step(match, index, after[-1], forward=True))
        before: list[Op] = []  # those before it, nearest first
        for index in range(match.anchor - 1, -1, -1):
            before.append(self._step(match, index, before[-1] if before else anchor, forward=False))
        return before[::-1] + after

    def _step(self, match: Match, index: int, current: Op, forward: bool) -> Op:
        op = match.ops[index]
        if self.original.parameters(op):
            found = self._by_parameters(op, current)
            return found if found is not None else current
        depth = 1 + (match.gaps.get(index, 0) if forward else match.gaps.get(index + 1, 0))
        return self._near(current, family(op.type), match, forward, depth) or current

    def _by_parameters(self, op: Op, current: Op | None) -> Op | None:
        names = [name for name in self.original.static_names(op) if is_stable_name(name) and name in self.optimised.program.vars]
        users: list[Op] = []
        for name in sorted(names):
            users.extend(u for u in self.optimised.data_users(name) if u not in users)
        if not users:
            return None
        if current is not None:
            near = [current, *self.optimised.next_ops(current), *self.optimised.prev_ops(current)]
            for user in users:
                if user in near:
                    return user
        return users[0]

    def _near(self, current: Op, kinds: frozenset[str], match: Match, forward: bool, depth: int) -> Op | None:
        """The first op of ``kinds`` within ``depth`` data edges of ``current``, passing only through
        ops that are not of a kind this match contains."""
        members = set().union(*(family(op.type) for op in match.ops))
        frontier = [current]
        for _ in range(depth):
            step = [n for op in frontier for n in (self.optimised.next_ops(op) if forward else self.optimised.prev_ops(op))]
            hit = next((n for n in step if n.type in kinds), None)
            if hit is not None:
                return self.optimised.engine_of(hit)
            frontier = [n for n in step if n.type not in members]
        return None

    def _pair_attention(self, matches: list[Match]) -> dict[int, Op]:
        if not matches:
            return {}
        ops = self.optimised.program.ops
        whole = next((op for op in ops if op.type in WHOLE_MODEL_ATTENTION), None)
        cores = [self.optimised.engine_of(op) for op in ops if op.type in FUSED_ATTENTION or (op.type in SOFTMAX and self._scores_softmax(op))]
        ordered = sorted(matches, key=lambda m: m.ops[m.anchor].index)
        if len(cores) == len(ordered):
            return {id(m): core for m, core in zip(ordered, cores)}
        return {id(m): whole for m in ordered} if whole is not None else {}

    def _scores_softmax(self, softmax: Op) -> bool:
        """A softmax over matmul scores (possibly scaled and masked), not a classifier's."""
        frontier = [softmax]
        for _ in range(3):
            frontier = [p for op in frontier for p in self.optimised.prev_ops(op)]
            if any(p.type in MATMUL and len(self.optimised.data_inputs(p)) == 2 for p in frontier):
                return True
        return False


def status_of(placed: list[Op] | None) -> FusionStatus:
    if placed is None:
        return FusionStatus.UNKNOWN
    distinct = len({id(op) for op in placed})
    if distinct == 1:
        return FusionStatus.FUSED
    return FusionStatus.UNFUSED if distinct == len(placed) else FusionStatus.PARTIAL


def became(placed: list[Op] | None) -> list[str]:
    """The optimised ops a match became, in order, one entry per distinct op."""
    seen: dict[int, str] = {}
    for op in placed or []:
        seen.setdefault(id(op), op.type)
    return list(seen.values())
