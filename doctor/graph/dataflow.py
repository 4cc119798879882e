"""Data flow in one program: which values are static and which ops carry the request's data.

A value is static when it is a parameter or is computed from parameters and constants alone
(``reshape`` of a bias, the weight folding that a conv+batch_norm fusion leaves behind); an op
with at least one non-static input is a data op. Fusion analysis follows data edges only, and
reaches parameters through static chains.
"""

from __future__ import annotations

from .program import INPUT_OPS, Op, Program

ENGINE_OPS = ("tensorrt_engine",)


class Flow:
    def __init__(self, program: Program):
        self.program = program
        self.static: set[str] = set()
        for op in program.ops:
            if op.type in INPUT_OPS:
                continue
            if all(self.is_static(name) for name in op.input_names()):
                self.static.update(op.output_names())
        self.engine_blocks = self._engine_blocks()

    def is_static(self, name: str) -> bool:
        var = self.program.vars.get(name)
        return name in self.static or bool(var and var.persistable)

    def is_data_op(self, op: Op) -> bool:
        return op.type in INPUT_OPS or any(not self.is_static(name) for name in op.input_names())

    def data_inputs(self, op: Op) -> list[str]:
        return [name for name in op.input_names() if not self.is_static(name)]

    def data_outputs(self, op: Op) -> list[str]:
        return [name for name in op.output_names() if not self.is_static(name)]

    def next_ops(self, op: Op) -> list[Op]:
        """Ops that consume this op's data outputs, in program order."""
        found = {id(c): c for name in self.data_outputs(op) for c in self.program.consumers(name) if c is not op}
        return sorted(found.values(), key=lambda c: c.index)

    def prev_ops(self, op: Op) -> list[Op]:
        found = {id(p): p for name in self.data_inputs(op) if (p := self.program.producer(name)) is not None and p is not op}
        return sorted(found.values(), key=lambda p: p.index)

    def static_names(self, op: Op) -> set[str]:
        """Every name on the static chains that feed this op: its parameters and what was computed from them."""
        names: set[str] = set()
        pending = [name for name in op.input_names() if self.is_static(name)]
        while pending:
            name = pending.pop()
            if name in names:
                continue
            names.add(name)
            producer = self.program.producer(name)
            if producer is not None and producer is not op and not self.is_data_op(producer):
                pending.extend(producer.input_names())
        return names

    def parameters(self, op: Op) -> list[str]:
        """The persistable values (weights, statistics) this op reads, directly or through static ops."""
        return sorted(name for name in self.static_names(op) if (var := self.program.vars.get(name)) and var.persistable)

    def data_users(self, name: str) -> list[Op]:
        """The data ops a static value reaches, through static ops in between."""
        users: dict[int, Op] = {}
        seen, pending = set(), [name]
        while pending:
            current = pending.pop()
            if current in seen:
                continue
            seen.add(current)
            for consumer in self.program.consumers(current):
                if self.is_data_op(consumer):
                    users[consumer.index] = self.engine_of(consumer)
                else:
                    pending.extend(consumer.output_names())
        return [users[index] for index in sorted(users)]

    def engine_of(self, op: Op) -> Op:
        """The TensorRT engine op whose subgraph holds this op, or the op itself."""
        return self.engine_blocks.get(op.block, op)

    def _engine_blocks(self) -> dict[int, Op]:
        blocks: dict[int, Op] = {}
        nested = {op.index: op.sub_blocks for op in self.program.ops if op.sub_blocks}
        for op in self.program.ops:
            if op.type in ENGINE_OPS:
                pending = list(op.sub_blocks)
                while pending:
                    block = pending.pop()
                    blocks[block] = op
                    pending.extend(b for inner in self.program.ops if inner.block == block for b in nested.get(inner.index, []))
        return blocks


def is_stable_name(name: str) -> bool:
    """Whether a name means the same value in another program file (PIR's ``%<id>`` does not)."""
    return not name.startswith("%")
