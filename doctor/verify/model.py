"""Finding a model on disk and the inputs it takes.

Accepted: a directory or file prefix with PIR ``*.json`` + ``*.pdiparams``; ``*.pdmodel`` +
``*.pdiparams``; a legacy directory with ``__model__`` and one file per parameter (or a combined
``__params__``). Inputs come from the program itself (read without Paddle): names, dtypes,
shapes, LoD levels, and for integer inputs that feed an embedding the table's row count, so
synthetic ids stay valid.

Defaults for dynamic dimensions (override with ``--shape name:1x128``): the first dimension is
the batch size (``batch_size`` in the service config, default 1); other dynamic dimensions are
128 for integer inputs (sequence length) and 224 for float inputs. A LoD input gets two
sequences over its first dimension (default 16 tokens).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..program import Program, ProgramError, read_program

EMBEDDING_OPS = ("lookup_table", "lookup_table_v2", "embedding")
PASS_THROUGH_LIMIT = 8
DEFAULT_INT_DIM, DEFAULT_FLOAT_DIM, DEFAULT_LOD_TOKENS, DEFAULT_INT_HIGH = 128, 224, 16, 10


class ModelError(ValueError):
    """The model cannot be used; the message names the file and what is wrong."""


@dataclass
class ModelFiles:
    format: str
    directory: str
    program: str
    params: str | None


@dataclass
class InputSpec:
    name: str
    dtype: str
    shape: list[int]
    lod_level: int = 0
    vocab: int | None = None


def locate_model(path: str | Path) -> ModelFiles:
    path = Path(path)
    candidates: list[tuple[str, Path, Path | None]] = []
    if path.is_dir():
        if (path / "__model__").is_file():
            params = path / "__params__"
            candidates.append(("legacy", path / "__model__", params if params.is_file() else None))
        for program in sorted(path.glob("*.json")) + sorted(path.glob("*.pdmodel")):
            candidates.append(("pir" if program.suffix == ".json" else "pdmodel", program, program.with_suffix(".pdiparams")))
        _refuse_several(path, candidates)
        candidates.sort(key=lambda c: not _complete(*c))  # the one model before programs without parameters
    elif path.suffix in (".json", ".pdmodel") and path.exists():
        candidates.append(("pir" if path.suffix == ".json" else "pdmodel", path, path.with_suffix(".pdiparams")))
    else:
        for suffix, fmt in ((".json", "pir"), (".pdmodel", "pdmodel")):
            program = path.with_name(path.name + suffix)
            if program.is_file():
                candidates.append((fmt, program, path.with_name(path.name + ".pdiparams")))
    if not candidates:
        if not path.exists():
            raise ModelError(f"{path}: no such file or directory, and no {path.name}.json or {path.name}.pdmodel beside it")
        raise ModelError(f"{path}: no Paddle model found (expected *.json or *.pdmodel with *.pdiparams, or __model__)")
    fmt, program, params = candidates[0]
    if params is not None and fmt != "legacy" and not params.is_file():
        raise ModelError(f"{params}: parameters file missing (it belongs to {program.name})")
    if params is not None and params.stat().st_size == 0:
        raise ModelError(f"{params}: parameters file is empty")
    return ModelFiles(fmt, str(program.parent), str(program), str(params) if params else None)


def _refuse_several(directory: Path, candidates: list[tuple[str, Path, Path | None]]) -> None:
    """ModelError when a folder holds more than one complete model: measuring the wrong one would
    mislead, so the user names it. Programs without parameters beside them (a config.json) are no
    models; one prefix in both formats is one model (PIR is taken)."""
    models = sorted({"__model__" if fmt == "legacy" else program.stem for fmt, program, params in candidates
                     if _complete(fmt, program, params)})
    if len(models) > 1:
        named = ", ".join(f"{directory / name}" if name != "__model__" else f"{directory} (__model__)" for name in models)
        raise ModelError(f"{directory}: holds {len(models)} models; name one with --model PREFIX: {named}")


def _complete(fmt: str, program: Path, params: Path | None) -> bool:
    return fmt == "legacy" or (params is not None and params.is_file())


def read_model_program(files: ModelFiles) -> Program:
    try:
        return read_program(files.program)
    except ProgramError as exc:
        raise ModelError(str(exc)) from None


def input_specs(program: Program) -> list[InputSpec]:
    specs = []
    vocab = _embedding_rows_by_input(program)
    for name in program.feed_names():
        var = program.vars.get(name)
        if var is None or var.shape is None or var.dtype is None:
            raise ModelError(f"{program.path}: input {name!r} has no shape or dtype in the program")
        specs.append(InputSpec(name, var.dtype, list(var.shape), var.lod_level, vocab.get(name)))
    if not specs:
        raise ModelError(f"{program.path}: the program declares no inputs")
    return specs


def _embedding_rows_by_input(program: Program) -> dict[str, int]:
    """For each model input, the smallest row count of the embedding tables it indexes."""
    inputs = set(program.feed_names())
    found: dict[str, int] = {}
    for op in program.ops:
        if op.type not in EMBEDDING_OPS:
            continue
        names = op.input_names()
        table = next((n for n in names if program.vars.get(n) and program.vars[n].persistable), None)
        ids = next((n for n in names if n != table), None)
        rows = program.vars[table].shape[0] if table and program.vars[table].shape else None
        source = _trace_to_input(program, ids, inputs)
        if source and rows:
            found[source] = min(rows, found.get(source, rows))
    return found


def _trace_to_input(program: Program, name: str | None, inputs: set[str]) -> str | None:
    """Follow an ids tensor back through single-input ops (cast, reshape, ...) to a model input."""
    for _ in range(PASS_THROUGH_LIMIT):
        if name is None or name in inputs:
            return name
        producer = program.producer(name)
        if producer is None:
            return None
        data_inputs = [n for n in producer.input_names() if not (program.vars.get(n) and program.vars[n].persistable)]
        name = data_inputs[0] if len(data_inputs) == 1 else None
    return None


def parse_shape_option(text: str) -> tuple[str, list[int]]:
    """``name:1x128`` -> ("name", [1, 128])."""
    name, sep, dims = text.rpartition(":")
    try:
        shape = [int(d) for d in dims.lower().split("x")]
    except ValueError:
        shape = []
    if not sep or not name or not shape or any(d < 1 for d in shape):
        raise ModelError(f"--shape {text!r}: expected NAME:DIMxDIM..., e.g. input_ids:1x128")
    return name, shape


def feed_plan(specs: list[InputSpec], overrides: dict[str, list[int]], batch_size: int) -> dict[str, dict]:
    """What the worker feeds: concrete shapes, value ranges and LoD, validated against the program."""
    known = {spec.name for spec in specs}
    for name in overrides:
        if name not in known:
            raise ModelError(f"--shape {name}: the model has no input {name!r} (inputs: {', '.join(sorted(known))})")
    plan = {}
    for spec in specs:
        shape = overrides.get(spec.name) or _default_shape(spec, batch_size)
        if len(shape) != len(spec.shape) or any(want not in (-1, got) for want, got in zip(spec.shape, shape)):
            raise ModelError(
                f"input {spec.name!r}: expects {spec.dtype} of shape {spec.shape} (-1 = any), given {shape}")
        entry: dict = {"dtype": spec.dtype, "shape": shape}
        if spec.dtype.startswith("int"):
            entry["low"], entry["high"] = 0, spec.vocab or DEFAULT_INT_HIGH
        if spec.lod_level:
            tokens = shape[0]
            entry["lod"] = [[0, tokens // 2, tokens]] if tokens >= 2 else [[0, tokens]]
        plan[spec.name] = entry
    return plan


def _default_shape(spec: InputSpec, batch_size: int) -> list[int]:
    shape = []
    for axis, dim in enumerate(spec.shape):
        if dim != -1:
            shape.append(dim)
        elif spec.lod_level and axis == 0:
            shape.append(DEFAULT_LOD_TOKENS)
        elif axis == 0:
            shape.append(batch_size)
        else:
            shape.append(DEFAULT_INT_DIM if spec.dtype.startswith("int") else DEFAULT_FLOAT_DIM)
    return shape
