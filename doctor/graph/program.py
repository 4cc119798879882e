"""Reads a Paddle inference program without Paddle and without weights.

Two on-disk forms exist: PIR JSON (``*.json``, the default of ``paddle.jit.save`` in 3.x; ops at
``program.regions[].blocks[].ops[]``, control flow nesting more regions inside an op) and the
protobuf ``ProgramDesc`` (``*.pdmodel`` and the legacy ``__model__``). Both become one small
graph: ops in program order with named inputs and outputs, their attributes, position and block,
and variables with shape, dtype, persistability and LoD level.

Names: protobuf variables keep their names across Paddle's passes; PIR values have none, so
the reader names them ``%<id>``, which is local to one file (parameters and inputs keep theirs).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.inputs import PROGRAM_BYTES, Refused, parse_json, read_bytes, read_private
from ..base.vocabulary import ModelFormat

PIR_VERSIONS_KNOWN = (1, 2, 3, 4, 5, 6)
PROTO_DTYPES = {0: "bool", 1: "int16", 2: "int32", 3: "int64", 4: "float16", 5: "float32", 6: "float64",
                20: "uint8", 21: "int8", 22: "bfloat16"}
PIR_DTYPES = {"t_f32": "float32", "t_f64": "float64", "t_f16": "float16", "t_bf16": "bfloat16", "t_i64": "int64",
              "t_i32": "int32", "t_i16": "int16", "t_i8": "int8", "t_ui8": "uint8", "t_bool": "bool"}
INPUT_OPS = ("feed", "data")


class ProgramError(ValueError):
    """The file is not a Paddle program this reader understands; the message names the file."""


@dataclass
class Var:
    name: str
    shape: list[int] | None = None
    dtype: str | None = None
    persistable: bool = False
    lod_level: int = 0


@dataclass
class Op:
    """``type`` is normalised (``pd_op.batch_norm_`` and ``onednn_op.batch_norm_`` are both
    ``batch_norm``); ``dialect`` keeps the PIR dialect prefix; ``index`` is the position in the
    program (all blocks, in order); ``sub_blocks`` are the blocks nested inside this op."""

    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict[str, Any] = field(default_factory=dict)
    index: int = -1
    block: int = 0
    dialect: str | None = None
    sub_blocks: list[int] = field(default_factory=list)
    attr_types: dict[str, str] = field(default_factory=dict)  # each attribute's type: i32, f64, array<f64>, str, ...

    def input_names(self) -> list[str]:
        return [name for names in self.inputs.values() for name in names]

    def output_names(self) -> list[str]:
        return [name for names in self.outputs.values() for name in names]


@dataclass
class Program:
    format: ModelFormat
    path: str
    ops: list[Op]
    vars: dict[str, Var]
    version: int | None = None
    _edges: Any = field(default=None, init=False, repr=False, compare=False)

    def feed_names(self) -> list[str]:
        """Model inputs in program order."""
        names = []
        for op in self.ops:
            if op.type == "feed":
                names.extend(op.outputs.get("Out", []))
            elif op.type == "data":
                names.append(op.attrs.get("name") or op.output_names()[0])
        return names

    def producer(self, name: str) -> Op | None:
        return self._index()[0].get(name)

    def consumers(self, name: str) -> list[Op]:
        return self._index()[1].get(name, [])

    def attribute_types(self) -> dict[str, list[str]]:
        """Per op type, the types its attributes have anywhere in the program (``nearest_interp``: ``array<f64>``, ``i32``, ...)."""
        types: dict[str, set[str]] = {}
        for op in self.ops:
            types.setdefault(op.type, set()).update(op.attr_types.values())
        return {name: sorted(kinds) for name, kinds in sorted(types.items())}

    def histogram(self) -> dict[str, int]:
        """Op types and how often each occurs, most frequent first."""
        counts: dict[str, int] = {}
        for op in self.ops:
            counts[op.type] = counts.get(op.type, 0) + 1
        return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))

    def _index(self) -> tuple[dict[str, Op], dict[str, list[Op]]]:
        """Producer and consumers of every name, built once (programs are not changed after reading)."""
        if self._edges is None or self._edges[2] != len(self.ops):
            producers: dict[str, Op] = {}
            consumers: dict[str, list[Op]] = {}
            for op in self.ops:
                for name in op.output_names():
                    producers.setdefault(name, op)
                for name in dict.fromkeys(op.input_names()):
                    consumers.setdefault(name, []).append(op)
            self._edges = (producers, consumers, len(self.ops))
        return self._edges[0], self._edges[1]


def read_program(path: str | Path, owner: int | None = None) -> Program:
    """The program in ``path``; with ``owner``, read only if no user but it (and root) could have put it
    there (``inputs.read_private``: a file the worker of another user wrote, never a link it made)."""
    path = Path(path)
    try:
        data = read_bytes(path, PROGRAM_BYTES) if owner is None else read_private(path.parent, path.name, owner, PROGRAM_BYTES)
    except Refused as exc:
        raise ProgramError(f"{path}: {exc}; expected a Paddle program file (*.json, *.pdmodel or __model__)") from None
    except OSError as exc:
        raise ProgramError(f"{path}: cannot read ({exc.strerror or exc})") from None
    if not data:
        raise ProgramError(f"{path}: the file is empty")
    if path.suffix == ".json" or data[:1] == b"{":
        return _read_pir(path, data)
    return _read_protobuf(path, data)


# ---------------------------------------------------------------------------- PIR JSON


def _read_pir(path: Path, data: bytes) -> Program:
    try:
        document = parse_json(data, path)
        base = document.get("base_code", {})
        blocks = document["program"]["regions"][0]["blocks"]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ProgramError(f"{path}: not a Paddle PIR program (expected JSON with program.regions[].blocks[])") from None
    except Refused as exc:
        raise ProgramError(f"{path}: {exc}; expected a Paddle PIR program") from None
    if base.get("magic") != "pir":  # what the file holds instead is not said: it may be any file the path names
        raise ProgramError(f"{path}: not a Paddle PIR program (base_code.magic is not 'pir')")
    version = base.get("version")
    if version not in PIR_VERSIONS_KNOWN:
        said = version if isinstance(version, int) and not isinstance(version, bool) and abs(version) < 10**6 else "unknown"
        raise ProgramError(f"{path}: PIR program version {said}; this reader knows versions up to {max(PIR_VERSIONS_KNOWN)}")
    reader = _PirReader()
    try:
        reader.blocks(blocks)
    except (KeyError, IndexError, TypeError, AttributeError):
        raise ProgramError(f"{path}: PIR program version {version} has ops this reader cannot decode") from None
    return Program(ModelFormat.PIR, str(path), reader.ops, reader.variables, version)


class _PirReader:
    """Walks PIR blocks depth first; every block, nested ones included, gets the next number."""

    def __init__(self) -> None:
        self.names: dict[int | None, str] = {}  # by a value's "%" id (None: a value without one)
        self.variables: dict[str, Var] = {}
        self.ops: list[Op] = []
        self.block_count = 0

    def blocks(self, blocks: list[dict]) -> list[int]:
        numbers = []
        for block in blocks:
            number = self.block_count
            self.block_count += 1
            numbers.append(number)
            for value in block.get("args", []) or []:
                if isinstance(value, dict) and value.get("%") is not None:
                    _define(self.names, self.variables, value, f"%{value.get('%')}")
            for raw in block.get("ops", []):
                self.op(raw, number)
        return numbers

    def op(self, raw: dict, block: int) -> None:
        op_name = raw.get("#", "")
        named = [a for a in raw.get("A", []) if isinstance(a, dict) and "N" in a]
        attrs = {a["N"]: _pir_attr(a.get("AT")) for a in named}
        attr_types = {a["N"]: _pir_type(a.get("AT")) for a in named}
        outputs = raw.get("O", [])
        outputs = [outputs] if isinstance(outputs, dict) else outputs
        if op_name == "p":  # a parameter: A = [..., name]
            _define(self.names, self.variables, outputs[0], raw["A"][-1], persistable=True)
            return
        dialect, _, kind = op_name.rpartition(".")
        kind = kind.rstrip("_") if dialect else op_name
        out_names = []
        for index, value in enumerate(outputs):
            given = attrs.get("name") if kind == "data" and index == 0 else None
            out_names.append(_define(self.names, self.variables, value, given or f"%{value.get('%')}"))
        in_names = [self.names.get(v.get("%"), f"%{v.get('%')}") for v in raw.get("I", []) if isinstance(v, dict) and v.get("%")]
        op = Op(kind, {"X": in_names}, {"Out": out_names}, attrs, index=len(self.ops), block=block, dialect=dialect or None,
                attr_types=attr_types)
        self.ops.append(op)
        for region in raw.get("regions", []) or []:
            op.sub_blocks.extend(self.blocks(region.get("blocks", [])))


def _define(names: dict[int | None, str], variables: dict[str, Var], value: dict, name: str, persistable: bool = False) -> str:
    names[value.get("%")] = name
    shape, dtype = None, None
    tensor = (value.get("TT") or {}).get("D")
    if isinstance(tensor, list) and len(tensor) >= 2:
        dtype = PIR_DTYPES.get(str(tensor[0].get("#", "")).split(".")[-1]) if isinstance(tensor[0], dict) else None
        shape = list(tensor[1]) if isinstance(tensor[1], list) else None
    variables[name] = Var(name, shape, dtype, persistable)
    return name


def _pir_type(attr: Any) -> str:
    """An attribute's type as the PIR file names it, without its dialect: ``f64``, ``array<f64>`` (by its first item)."""
    if not isinstance(attr, dict):
        return "unknown"
    name = str(attr.get("#", "")).rpartition(".")[2].removeprefix("a_") or "unknown"
    if name != "array":
        return name
    items = attr.get("D")
    return f"array<{_pir_type(items[0])}>" if isinstance(items, list) and items else "array<>"


def _pir_attr(attr: Any) -> Any:
    if not isinstance(attr, dict):
        return attr
    value = attr.get("D")
    if isinstance(value, list) and value and isinstance(value[0], dict) and "#" in value[0]:
        return [_pir_attr(item) for item in value]
    return value


# ---------------------------------------------------------------------------- protobuf ProgramDesc


def _read_protobuf(path: Path, data: bytes) -> Program:
    try:
        fields = _fields(data)
        blocks = [_fields(block) for number, block in fields if number == 1]
        if not blocks:
            raise ValueError("no blocks")
        versions = [value for number, raw in fields if number == 4 for inner, value in _fields(raw) if inner == 1]
        variables: dict[str, Var] = {}
        ops: list[Op] = []
        for position, block in enumerate(blocks):
            number = next((value for field_number, value in block if field_number == 1), position)
            for field_number, value in block:
                if field_number == 3:
                    var = _var(value)
                    variables[var.name] = var
                elif field_number == 4:
                    op = _op(value)
                    op.index, op.block = len(ops), number
                    ops.append(op)
    except (ValueError, IndexError, struct.error, UnicodeDecodeError):
        raise ProgramError(f"{path}: not a Paddle ProgramDesc (protobuf could not be decoded; truncated or another format?)") from None
    fmt = ModelFormat.LEGACY if path.name == "__model__" else ModelFormat.PDMODEL
    return Program(fmt, str(path), ops, variables, versions[0] if versions else None)


def _fields(data: bytes) -> list[tuple[int, Any]]:
    """Decode one protobuf message into (field number, raw value) pairs."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if number == 0:
            raise ValueError("field number 0")
        if wire == 0:
            value, pos = _varint(data, pos)
        elif wire == 1:
            value, pos = data[pos : pos + 8], pos + 8
        elif wire == 2:
            length, pos = _varint(data, pos)
            value, pos = data[pos : pos + length], pos + length
            if pos > len(data):
                raise ValueError("truncated")
        elif wire == 5:
            value, pos = data[pos : pos + 4], pos + 4
        else:
            raise ValueError(f"wire type {wire}")
        out.append((number, value))
    return out


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _ints(value: Any) -> list[int]:
    """A repeated integer field, packed (bytes) or not (one int)."""
    if isinstance(value, int):
        return [_signed(value)]
    out, pos = [], 0
    while pos < len(value):
        number, pos = _varint(value, pos)
        out.append(_signed(number))
    return out


def _var(data: bytes) -> Var:
    var = Var(name="")
    for number, value in _fields(data):
        if number == 1:
            var.name = value.decode()
        elif number == 3:
            var.persistable = bool(value)
        elif number == 2:
            for type_number, type_value in _fields(value):
                if type_number in (3, 4):  # dense tensor or tensor array
                    _tensor(var, type_value)
    return var


def _tensor(var: Var, data: bytes) -> None:
    for number, value in _fields(data):
        if number == 1:
            dims: list[int] = []
            for inner_number, inner_value in _fields(value):
                if inner_number == 1:
                    var.dtype = PROTO_DTYPES.get(inner_value, str(inner_value))
                elif inner_number == 2:
                    dims.extend(_ints(inner_value))
            var.shape = dims
        elif number == 2:
            var.lod_level = value


def _op(data: bytes) -> Op:
    op = Op(type="", inputs={}, outputs={})
    for number, value in _fields(data):
        if number == 3:
            op.type = value.decode()
        elif number in (1, 2):
            slot, arguments = "", []
            for inner_number, inner_value in _fields(value):
                if inner_number == 1:
                    slot = inner_value.decode()
                elif inner_number == 2:
                    arguments.append(inner_value.decode())
            (op.inputs if number == 1 else op.outputs)[slot] = arguments
        elif number == 4:
            name, attr_value, is_block, kind = _attr(value)
            op.attrs[name] = attr_value
            op.attr_types[name] = kind
            if is_block:
                op.sub_blocks.extend(attr_value if isinstance(attr_value, list) else [attr_value])
    return op


# framework.proto's AttrType, named as PIR names the same types
PROTO_ATTR_TYPES = {0: "i32", 1: "f32", 2: "str", 3: "array<i32>", 4: "array<f32>", 5: "array<str>", 6: "bool", 7: "array<bool>",
                    8: "block", 9: "i64", 10: "array<block>", 11: "array<i64>", 12: "array<f64>", 13: "var", 14: "array<var>",
                    15: "f64", 16: "scalar", 17: "array<scalar>"}


def _attr(data: bytes) -> tuple[str, Any, bool, str]:
    """(name, value, whether the value names blocks: a control-flow op's or an engine's sub-block, its type)."""
    name, value, many, is_block, kind = "", None, [], False, "unknown"
    for number, raw in _fields(data):
        if number == 1:
            name = raw.decode()
        elif number == 2 and isinstance(raw, int):
            kind = PROTO_ATTR_TYPES.get(raw, "unknown")
        elif number in (3, 13, 12):
            value = _signed(raw)
            is_block = is_block or number == 12
        elif number == 10:
            value = bool(raw)
        elif number == 4:
            value = struct.unpack("<f", raw)[0]
        elif number in (5, 17):
            value = raw.decode(errors="replace")
        elif number in (6, 15, 14):
            many.extend(_ints(raw))
            is_block = is_block or number == 14
        elif number in (8, 18):
            many.append(raw.decode(errors="replace"))
    return name, many if many else value, is_block, kind
