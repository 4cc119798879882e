"""Reads a Paddle inference program without Paddle and without weights.

Two on-disk forms exist: PIR JSON (``*.json``, the default of ``paddle.jit.save`` in 3.x; ops at
``program.regions[].blocks[].ops[]``) and the protobuf ``ProgramDesc`` (``*.pdmodel`` and the
legacy ``__model__``). Both become one small graph: ops with named inputs and outputs, and
variables with shape, dtype, persistability and LoD level.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

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
    type: str
    inputs: dict[str, list[str]]
    outputs: dict[str, list[str]]
    attrs: dict[str, Any] = field(default_factory=dict)

    def input_names(self) -> list[str]:
        return [name for names in self.inputs.values() for name in names]

    def output_names(self) -> list[str]:
        return [name for names in self.outputs.values() for name in names]


@dataclass
class Program:
    format: str
    path: str
    ops: list[Op]
    vars: dict[str, Var]
    version: int | None = None

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
        return next((op for op in self.ops if name in op.output_names()), None)

    def consumers(self, name: str) -> list[Op]:
        return [op for op in self.ops if name in op.input_names()]


def read_program(path: str | Path) -> Program:
    path = Path(path)
    try:
        data = path.read_bytes()
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
        document = json.loads(data)
        base = document.get("base_code", {})
        blocks = document["program"]["regions"][0]["blocks"]
    except (ValueError, KeyError, IndexError, TypeError, AttributeError):
        raise ProgramError(f"{path}: not a Paddle PIR program (expected JSON with program.regions[].blocks[])") from None
    if base.get("magic") != "pir":
        raise ProgramError(f"{path}: not a Paddle PIR program (base_code.magic is {base.get('magic')!r})")
    version = base.get("version")
    if version not in PIR_VERSIONS_KNOWN:
        raise ProgramError(f"{path}: PIR program version {version}; this reader knows versions up to {max(PIR_VERSIONS_KNOWN)}")
    names: dict[int, str] = {}
    variables: dict[str, Var] = {}
    ops: list[Op] = []
    for raw in (op for block in blocks for op in block.get("ops", [])):
        op_name = raw.get("#", "")
        attrs = {a["N"]: _pir_attr(a.get("AT")) for a in raw.get("A", []) if isinstance(a, dict) and "N" in a}
        outputs = raw.get("O", [])
        outputs = [outputs] if isinstance(outputs, dict) else outputs
        if op_name == "p":  # a parameter: A = [..., name]
            name = raw["A"][-1]
            _define(names, variables, outputs[0], name, persistable=True)
            continue
        kind = op_name.split(".", 1)[-1].rstrip("_") if op_name[:1].isdigit() else op_name
        out_names = []
        for index, value in enumerate(outputs):
            given = attrs.get("name") if kind == "data" and index == 0 else None
            out_names.append(_define(names, variables, value, given or f"%{value.get('%')}"))
        in_names = [names.get(v.get("%"), f"%{v.get('%')}") for v in raw.get("I", []) if isinstance(v, dict) and v.get("%")]
        ops.append(Op(kind, {"X": in_names}, {"Out": out_names}, attrs))
    return Program("pir", str(path), ops, variables, version)


def _define(names: dict[int, str], variables: dict[str, Var], value: dict, name: str, persistable: bool = False) -> str:
    names[value.get("%")] = name
    shape, dtype = None, None
    tensor = (value.get("TT") or {}).get("D")
    if isinstance(tensor, list) and len(tensor) >= 2:
        dtype = PIR_DTYPES.get(str(tensor[0].get("#", "")).split(".")[-1]) if isinstance(tensor[0], dict) else None
        shape = list(tensor[1]) if isinstance(tensor[1], list) else None
    variables[name] = Var(name, shape, dtype, persistable)
    return name


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
        blocks = [_fields(block) for number, block in _fields(data) if number == 1]
        if not blocks:
            raise ValueError("no blocks")
        variables: dict[str, Var] = {}
        ops: list[Op] = []
        for block in blocks:
            for number, value in block:
                if number == 3:
                    var = _var(value)
                    variables[var.name] = var
                elif number == 4:
                    ops.append(_op(value))
    except (ValueError, IndexError, struct.error, UnicodeDecodeError):
        raise ProgramError(f"{path}: not a Paddle ProgramDesc (protobuf could not be decoded; truncated or another format?)") from None
    return Program("protobuf", str(path), ops, variables)


def _fields(data: bytes) -> list[tuple[int, Any]]:
    """Decode one protobuf message into (field number, raw value) pairs."""
    out, pos = [], 0
    while pos < len(data):
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
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
            name, attr_value = _attr(value)
            op.attrs[name] = attr_value
    return op


def _attr(data: bytes) -> tuple[str, Any]:
    name, value, many = "", None, []
    for number, raw in _fields(data):
        if number == 1:
            name = raw.decode()
        elif number in (3, 13, 12):
            value = _signed(raw)
        elif number == 10:
            value = bool(raw)
        elif number == 4:
            value = struct.unpack("<f", raw)[0]
        elif number in (5, 17):
            value = raw.decode(errors="replace")
        elif number in (6, 15):
            many.extend(_ints(raw))
        elif number in (8, 18):
            many.append(raw.decode(errors="replace"))
    return name, many if many else value
