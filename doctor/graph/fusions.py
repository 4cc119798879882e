"""Fusible patterns, found on the original program by following data edges.

Each match records its ops in order, which of them anchors it in another program, and what
breaks its chain: an op that no pass accepts between two matched ops (a custom op, or a known op
in the wrong place), or an intermediate value with a consumer outside the pattern. A match with
a breaker still counts as fusible: the pattern is there, and the breaker is why it is not fused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base.vocabulary import BreakerKind
from .dataflow import Flow
from .program import Op

CONV = frozenset({"conv2d", "depthwise_conv2d"})
ADD = frozenset({"add", "elementwise_add", "fused_elementwise_add"})
BATCH_NORM = frozenset({"batch_norm", "sync_batch_norm"})
ACTIVATIONS = frozenset({"relu", "relu6", "gelu", "tanh", "sigmoid", "swish", "silu", "hardswish", "hard_swish",
                         "leaky_relu", "hardsigmoid", "hard_sigmoid", "mish", "elu", "softplus", "clip", "abs", "sqrt"})
MATMUL = frozenset({"matmul", "matmul_v2", "mul", "fused_matmul"})
SCALE = frozenset({"scale"})
SOFTMAX = frozenset({"softmax", "fused_softmax_mask"})
DROPOUT = frozenset({"dropout"})
LAYER_NORM = frozenset({"layer_norm"})
EMBEDDING = frozenset({"embedding", "lookup_table", "lookup_table_v2"})
FAMILIES = (CONV, ADD, BATCH_NORM, ACTIVATIONS, MATMUL, SCALE, SOFTMAX, DROPOUT, LAYER_NORM, EMBEDDING)
# ops that start or end patterns of their own: seen between two matched ops they are a different pattern, not a breaker
NEVER_BREAKERS = CONV | ADD | BATCH_NORM | ACTIVATIONS | MATMUL | SOFTMAX | LAYER_NORM | EMBEDDING
CUSTOM_DIALECTS = ("custom_op",)

TITLES = {
    "conv_bn_act": "conv2d + batch_norm (+ activation)",
    "conv_bias_act": "conv2d + bias add (+ activation)",
    "fc": "matmul + bias add (+ activation) as fc",
    "embedding_layer_norm": "embeddings + add + layer_norm",
    "attention": "attention (matmul, scale, softmax, matmul)",
    "add_layer_norm": "residual add + layer_norm",
}

# passes that fuse a whole pattern (old IR and PIR names, CPU, oneDNN and GPU), as the wheels name them
PASSES = {
    "conv_bn_act": ("conv_bn_fuse_pass", "conv_eltwiseadd_bn_fuse_pass", "depthwise_conv_bn_fuse_pass",
                    "depthwise_conv_eltwiseadd_bn_fuse_pass", "conv2d_bn_onednn_fuse_pass", "conv2d_bias_bn_onednn_fuse_pass",
                    "conv2d_bn_fuse_pass", "tensorrt_subgraph_pass"),
    "conv_bias_act": ("conv_bias_onednn_fuse_pass", "conv2d_bias_fuse_pass", "conv_elementwise_add_fuse_pass",
                      "conv_elementwise_add_act_fuse_pass", "conv2d_add_fuse_pass", "conv2d_add_act_fuse_pass",
                      "tensorrt_subgraph_pass"),
    "fc": ("fc_fuse_pass", "fc_onednn_pass", "fc_onednn_enable_pass", "matmul_add_act_fuse_pass",
           "matmul_elementwise_add_onednn_fuse_pass", "matmul_elementwise_add_fuse_pass", "tensorrt_subgraph_pass"),
    "embedding_layer_norm": ("embedding_eltwise_layernorm_fuse_pass", "trt_embedding_eltwise_layernorm_fuse_pass",
                             "preln_embedding_eltwise_layernorm_fuse_pass", "tensorrt_subgraph_pass"),
    "attention": ("multihead_matmul_fuse_pass", "multihead_matmul_fuse_pass_v2", "multihead_matmul_fuse_pass_v3",
                  "self_attention_fuse_pass", "trt_qk_multihead_matmul_fuse_pass", "vit_attention_fuse_pass",
                  "fused_multi_transformer_encoder_pass", "multihead_matmul_roformer_fuse_pass", "tensorrt_subgraph_pass"),
    "add_layer_norm": ("skip_layernorm_fuse_pass", "trt_skip_layernorm_fuse_pass", "preln_skip_layernorm_fuse_pass",
                       "add_norm_fuse_pass", "tensorrt_subgraph_pass"),
}


def family(op_type: str) -> frozenset[str]:
    return next((kinds for kinds in FAMILIES if op_type in kinds), frozenset({op_type}))


@dataclass
class Breaker:
    kind: BreakerKind
    op: Op
    variable: str | None
    after: Op
    before: Op


@dataclass
class Match:
    pattern: str
    ops: list[Op]
    anchor: int
    breakers: list[Breaker] = field(default_factory=list)
    gaps: dict[int, int] = field(default_factory=dict)  # member index -> ops skipped before it


def find_patterns(flow: Flow) -> list[Match]:
    finder = _Finder(flow)
    for op in flow.program.ops:
        if op.type in CONV and _weighted(flow, op):
            finder.conv_chain(op)
    for op in flow.program.ops:
        if op.type in MATMUL and _weighted(flow, op):
            finder.fc(op)
    for op in flow.program.ops:
        if op.type in LAYER_NORM:
            finder.embedding_layer_norm(op)
    for op in flow.program.ops:
        if op.type in SOFTMAX:
            finder.attention(op)
    for op in flow.program.ops:
        if op.type in LAYER_NORM:
            finder.add_layer_norm(op)
    return sorted(finder.matches, key=lambda m: m.ops[0].index)


def _weighted(flow: Flow, op: Op) -> bool:
    """One data input and a static one (the weight)."""
    return len(flow.data_inputs(op)) == 1 and any(flow.is_static(name) for name in op.input_names())


class _Finder:
    def __init__(self, flow: Flow):
        self.flow = flow
        self.claimed: set[int] = set()
        self.matches: list[Match] = []

    def free(self, op: Op | None) -> bool:
        return op is not None and op.index not in self.claimed

    def claim(self, match: Match) -> None:
        self.claimed.update(op.index for op in match.ops)
        self.matches.append(match)

    def follow(self, current: Op, kinds: frozenset[str], match: Match, bridge: bool = False, data_inputs: int | None = None):
        """The next matched op after ``current``; records a second consumer of ``current``'s output, and,
        with ``bridge``, one op in between that no pass accepts there."""
        consumers = self.flow.next_ops(current)
        wanted = [c for c in consumers if c.type in kinds and self.free(c) and self._inputs_fit(c, data_inputs)]
        skipped = 0
        if not wanted and bridge and len(consumers) == 1 and self._bridgeable(consumers[0], current):
            middle = consumers[0]
            wanted = [c for c in self.flow.next_ops(middle) if c.type in kinds and self.free(c) and self._inputs_fit(c, data_inputs)]
            if wanted:
                match.breakers.append(Breaker(BreakerKind.OP, middle, self._first(self.flow.data_inputs(middle)), current, wanted[0]))
                skipped = 1
        if not wanted:
            return None
        chosen = wanted[0]
        for other in consumers:
            if other is not chosen and not (skipped and other is consumers[0]):
                match.breakers.append(Breaker(BreakerKind.CONSUMER, other, self._first(self.flow.data_outputs(current)), current, chosen))
        match.gaps[len(match.ops)] = skipped
        match.ops.append(chosen)
        return chosen

    def _inputs_fit(self, op: Op, data_inputs: int | None) -> bool:
        return data_inputs is None or len(self.flow.data_inputs(op)) == data_inputs

    def _bridgeable(self, op: Op, before: Op) -> bool:
        if op.type in NEVER_BREAKERS or not self.free(op) or len(self.flow.data_inputs(op)) != 1:
            return False
        shape_in = self._shape(self._first(self.flow.data_outputs(before)))
        shape_out = self._shape(self._first(self.flow.data_outputs(op)))
        return shape_in is None or shape_out is None or shape_in == shape_out

    def _shape(self, name: str | None):
        var = self.flow.program.vars.get(name) if name else None
        return var.shape if var else None

    @staticmethod
    def _first(names: list[str]) -> str | None:
        return names[0] if names else None

    def _drop_unneeded_breakers(self, match: Match) -> None:
        """Second consumers of the last matched op are the pattern's normal output, not a breaker."""
        last = match.ops[-1]
        match.breakers = [b for b in match.breakers if b.after is not last]

    def conv_chain(self, conv: Op) -> None:
        if not self.free(conv):
            return
        match = Match("conv_bias_act", [conv], anchor=0)
        current = self.follow(conv, ADD, match, data_inputs=1) or conv
        norm = self.follow(current, BATCH_NORM, match, bridge=True)
        if norm:
            match.pattern = "conv_bn_act"
            current = norm
        self.follow(current, ACTIVATIONS, match)
        if len(match.ops) > 1:
            self._drop_unneeded_breakers(match)
            self.claim(match)

    def fc(self, matmul: Op) -> None:
        if not self.free(matmul):
            return
        match = Match("fc", [matmul], anchor=0)
        bias = self.follow(matmul, ADD, match, bridge=True, data_inputs=1)
        if bias is None:
            return
        self.follow(bias, ACTIVATIONS, match)
        self._drop_unneeded_breakers(match)
        self.claim(match)

    def embedding_layer_norm(self, norm: Op) -> None:
        adds: list[Op] = []
        embeddings: list[Op] = []
        pending = self.flow.prev_ops(norm)
        while pending:
            op = pending.pop()
            if op.type in ADD and self.free(op) and len(adds) < 3:
                adds.append(op)
                pending.extend(self.flow.prev_ops(op))
            elif op.type in EMBEDDING and self.free(op):
                embeddings.append(op)
            else:
                return
        if len(embeddings) < 2 or not adds or not self.free(norm):
            return
        ops = sorted(embeddings + adds, key=lambda o: o.index) + [norm]
        self.claim(Match("embedding_layer_norm", ops, anchor=0))

    def attention(self, softmax: Op) -> None:
        if not self.free(softmax):
            return
        before: list[Op] = []
        current = softmax
        for kinds in (ADD, SCALE):
            previous = [p for p in self.flow.prev_ops(current) if p.type in kinds and self.free(p)]
            if previous:
                current = previous[0]
                before.insert(0, current)
        scores = [p for p in self.flow.prev_ops(current) if p.type in MATMUL and self.free(p) and len(self.flow.data_inputs(p)) == 2]
        if not scores:
            return
        scaled = [p for p in self.flow.prev_ops(scores[0]) if p.type in SCALE and self.free(p)]
        match = Match("attention", scaled[:1] + [scores[0]] + before + [softmax], anchor=0)
        match.anchor = len(match.ops) - 1
        current = self.follow(softmax, DROPOUT, match) or softmax
        if self.follow(current, MATMUL, match, bridge=True, data_inputs=2) is None:
            return
        self._drop_unneeded_breakers(match)
        self.claim(match)

    def add_layer_norm(self, norm: Op) -> None:
        previous = self.flow.prev_ops(norm)
        if not self.free(norm) or len(previous) != 1:
            return
        residual = previous[0]
        if residual.type not in ADD or not self.free(residual) or len(self.flow.data_inputs(residual)) != 2:
            return
        match = Match("add_layer_norm", [residual, norm], anchor=1)
        extra = [c for c in self.flow.next_ops(residual) if c is not norm]
        match.breakers.extend(Breaker(BreakerKind.CONSUMER, c, self._first(self.flow.data_outputs(residual)), residual, norm) for c in extra)
        self.claim(match)
