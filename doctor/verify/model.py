"""Finding a model on disk and the inputs it takes.

Accepted: a directory or file prefix with PIR ``*.json`` + ``*.pdiparams``; ``*.pdmodel`` +
``*.pdiparams``; a legacy directory with ``__model__`` and one file per parameter (or a combined
``__params__``). Inputs come from the program itself (read without Paddle): names, dtypes,
shapes, LoD levels, and for integer inputs that feed an embedding the table's row count, so
synthetic ids stay valid.

Shapes for dynamic dimensions, first found first: real inputs (``--inputs``: an .npz or a folder
of them, one sample each); ``--shape name:1x128`` (repeat it for one input to measure a set of
shapes, e.g. the sizes the service sees); the opt shapes of a shape-range file written by
``collect_shape_range_info`` in the model folder; else defaults: the first dimension is the batch
size (``batch_size`` in the service config, default 1), other dynamic dimensions are 128 for
integer inputs (sequence length) and 224 for float inputs. A LoD input gets two sequences over its
first dimension (default 16 tokens). Latency is measured over every sample in turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.interpreter import Interpreter
from ..base.vocabulary import ModelFormat
from ..facts.verification import ModelInput
from ..graph.program import Program, ProgramError, read_program
from .npz import NpzError, read_samples
from .protocol import FeedSpec, Model
from .session import WorkerSession
from .shape_range import read_opt_shapes

if TYPE_CHECKING:
    from ..service import ServiceOptions

EMBEDDING_OPS = ("lookup_table", "lookup_table_v2", "embedding")
PASS_THROUGH_LIMIT = 8
DEFAULT_INT_DIM, DEFAULT_FLOAT_DIM, DEFAULT_LOD_TOKENS, DEFAULT_INT_HIGH = 128, 224, 16, 10
WORKER_START_TIMEOUT, MODEL_REQUEST_TIMEOUT = 120.0, 10.0


class ModelError(ValueError):
    """The model cannot be used; the message names the file and what is wrong."""


@dataclass
class ModelFiles:
    format: ModelFormat
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
    candidates: list[tuple[ModelFormat, Path, Path | None]] = []
    if path.is_dir():
        if (path / "__model__").is_file():
            combined = path / "__params__"
            candidates.append((ModelFormat.LEGACY, path / "__model__", combined if combined.is_file() else None))
        for program in sorted(path.glob("*.json")) + sorted(path.glob("*.pdmodel")):
            candidates.append((ModelFormat.PIR if program.suffix == ".json" else ModelFormat.PDMODEL, program, program.with_suffix(".pdiparams")))
        _refuse_several(path, candidates)
        candidates.sort(key=lambda c: not _complete(*c))  # the one model before programs without parameters
    elif path.suffix in (".json", ".pdmodel") and path.exists():
        candidates.append((ModelFormat.PIR if path.suffix == ".json" else ModelFormat.PDMODEL, path, path.with_suffix(".pdiparams")))
    else:
        for suffix, fmt in ((".json", ModelFormat.PIR), (".pdmodel", ModelFormat.PDMODEL)):
            program = path.with_name(path.name + suffix)
            if program.is_file():
                candidates.append((fmt, program, path.with_name(path.name + ".pdiparams")))
    if not candidates:
        if not path.exists():
            raise ModelError(f"{path}: no such file or directory, and no {path.name}.json or {path.name}.pdmodel beside it")
        raise ModelError(f"{path}: no Paddle model found (expected *.json or *.pdmodel with *.pdiparams, or __model__)")
    fmt, program, params = candidates[0]
    if params is not None and fmt != ModelFormat.LEGACY and not params.is_file():
        raise ModelError(f"{params}: parameters file missing (it belongs to {program.name})")
    if params is not None and params.stat().st_size == 0:
        raise ModelError(f"{params}: parameters file is empty")
    return ModelFiles(fmt, str(program.parent), str(program), str(params) if params else None)


def _refuse_several(directory: Path, candidates: list[tuple[ModelFormat, Path, Path | None]]) -> None:
    """ModelError when a folder holds more than one complete model: measuring the wrong one would
    mislead, so the user names it. Programs without parameters beside them (a config.json) are no
    models; one prefix in both formats is one model (PIR is taken)."""
    models = sorted({"__model__" if fmt == ModelFormat.LEGACY else program.stem for fmt, program, params in candidates
                     if _complete(fmt, program, params)})
    if len(models) > 1:
        named = ", ".join(f"{directory / name}" if name != "__model__" else f"{directory} (__model__)" for name in models)
        raise ModelError(f"{directory}: holds {len(models)} models; name one with --model PREFIX: {named}")


def _complete(fmt: ModelFormat, program: Path, params: Path | None) -> bool:
    return fmt == ModelFormat.LEGACY or (params is not None and params.is_file())


class ModelRun:
    """The model one run measures, located and its program read once (a path that names no
    model is the user's error: ModelError; a program that cannot be read is a fact, ``unreadable``),
    and the predictor workers that load it, ended together by :meth:`close`.

    Graph coverage and verification share one worker (:meth:`worker`): graph coverage creates its
    predictor there first, with Paddle's log on (``GLOG_minloglevel=0``), as it needs the passes'
    refusals; the first predictor verification creates turns the log off for the whole process
    (``disable_glog_info``, which nothing turns back on), and measuring goes on in the same
    worker. A further worker starts (:meth:`start_worker`) only where a fresh process is the
    point: a restart after a worker crashed, an experiment that reads a process's memory, the
    processes of a serving layout.
    """

    def __init__(self, path: str | Path):
        self.path = str(path)
        self.files = locate_model(path)
        self.program: Program | None = None
        self.unreadable: str | None = None
        try:
            self.program = read_program(self.files.program)
        except ProgramError as exc:
            self.unreadable = str(exc)
        self.workers: list[WorkerSession] = []
        self.shared: WorkerSession | None = None

    def planned_inputs(self, shape_options: list[str], batch_size: int, shape_file: Path | None = None,
                       inputs_path: str | None = None) -> tuple[dict[str, ModelInput], list[str]]:
        """Each input of the program with the shapes it is measured at, and the .npz samples (``plan_inputs``);
        ModelError where the program cannot be read or the shapes or samples do not fit it."""
        if self.program is None:
            raise ModelError(self.unreadable)
        return plan_inputs(input_specs(self.program), shape_options, batch_size, shape_file, inputs_path)

    @property
    def workers_started(self) -> int:
        return len(self.workers)

    def start_worker(self, interpreter: Interpreter, start_timeout: float = WORKER_START_TIMEOUT,
                     env: dict[str, str] | None = None) -> WorkerSession:
        """A new predictor worker (``interpreter``, as the user it runs as) that creates its predictors from this model's files."""
        session = WorkerSession(interpreter, start_timeout, env)
        self.workers.append(session)
        files = self.files
        session.request(MODEL_REQUEST_TIMEOUT, Model(files.program, files.params, files.directory))
        return session

    def worker(self, interpreter: Interpreter, start_timeout: float = WORKER_START_TIMEOUT) -> WorkerSession:
        """The run's shared worker; a new one when there is none yet or it has ended."""
        if self.shared is None or self.shared.proc.poll() is not None:
            self.shared = self.start_worker(interpreter, start_timeout, env={"GLOG_minloglevel": "0"})
        return self.shared

    def close(self) -> None:
        for session in self.workers:
            session.close()

    def __enter__(self) -> ModelRun:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def flagged_run(service: ServiceOptions) -> ModelRun | None:
    """The run of the model the service's flags name (``--model``), None where they name none: a
    ``model:`` in --config only describes the service (its TensorRT cache, say)."""
    return ModelRun(service.model) if service.model else None


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
        shape = program.vars[table].shape if table else None
        rows = shape[0] if shape else None
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
    _known_inputs(specs, overrides)
    plan = {}
    for spec in specs:
        shape = overrides.get(spec.name) or _default_shape(spec, batch_size)
        if not _fits(spec, shape):
            raise ModelError(
                f"input {spec.name!r}: expects {spec.dtype} of shape {spec.shape} (-1 = any), given {shape}")
        entry: dict = {"dtype": spec.dtype, "shape": shape}
        if spec.dtype.startswith("int"):
            entry["low"], entry["high"] = 0, spec.vocab or DEFAULT_INT_HIGH
        if spec.lod_level:
            entry["lod"] = two_sequences(shape[0])
        plan[spec.name] = entry
    return plan


def plan_inputs(specs: list[InputSpec], shape_options: list[str], batch_size: int, shape_file: Path | None = None,
                inputs_path: str | None = None) -> tuple[dict[str, ModelInput], list[str]]:
    """Each input with the shapes it is measured at and what chose them; and the .npz samples, if any.

    Several ``--shape`` for one input make a set; inputs are paired sample by sample (an input
    with one shape goes with every sample).
    """
    if inputs_path:
        return _inputs_from_npz(specs, inputs_path)
    sets: dict[str, list[list[int]]] = {}
    for text in shape_options:
        name, shape = parse_shape_option(text)
        sets.setdefault(name, []).append(shape)
    _known_inputs(specs, sets)
    opt = read_opt_shapes(shape_file) if shape_file else {}
    chosen: dict[str, tuple[list[list[int]], str]] = {}
    for spec in specs:
        if spec.name in sets:
            chosen[spec.name] = sets[spec.name], "--shape"
        elif -1 not in spec.shape:
            chosen[spec.name] = [list(spec.shape)], "the program (no dynamic dimension)"
        elif _fits(spec, opt.get(spec.name)):
            chosen[spec.name] = [opt[spec.name]], f"the opt shape in {shape_file}"
        else:
            chosen[spec.name] = [_default_shape(spec, batch_size)], DEFAULT_CHOICE
    count = _sample_count({name: len(shapes) for name, (shapes, _) in chosen.items()})
    plans = [feed_plan(specs, {name: shapes[index % len(shapes)] for name, (shapes, _) in chosen.items()}, batch_size)
             for index in range(count)]
    inputs = {}
    for spec in specs:
        first = plans[0][spec.name]
        lods = [plan[spec.name]["lod"] for plan in plans] if "lod" in first else None
        inputs[spec.name] = ModelInput(spec.name, spec.dtype, list(spec.shape), [plan[spec.name]["shape"] for plan in plans],
                                       chosen[spec.name][1], first.get("low"), first.get("high"), lods)
    return inputs, []


DEFAULT_CHOICE = "defaults (the batch size first, then 224 for floats, 128 for integers)"


def worker_samples(inputs: dict[str, ModelInput]) -> list[dict[str, FeedSpec]]:
    """What the worker feeds, sample by sample: dtype, shape, id range and LoD of each input."""
    count = max(len(model_input.shapes) for model_input in inputs.values())
    return [{name: FeedSpec(model_input.dtype, model_input.shapes[index % len(model_input.shapes)],
                            model_input.low if model_input.high is not None else None, model_input.high,
                            model_input.lod[index % len(model_input.lod)] if model_input.lod else None)
             for name, model_input in inputs.items()}
            for index in range(count)]


def _sample_count(counts: dict[str, int]) -> int:
    sizes = {n for n in counts.values() if n > 1}
    if len(sizes) > 1:
        given = ", ".join(f"{name} {n}" for name, n in counts.items() if n > 1)
        raise ModelError(f"--shape: inputs are paired shape by shape, but they have different numbers of shapes ({given}); "
                         "give each input the same number of shapes, or one")
    return sizes.pop() if sizes else 1


def _fits(spec: InputSpec, shape: list[int] | None) -> bool:
    if not shape:
        return False
    return len(shape) == len(spec.shape) and all(want in (-1, got) and got > 0 for want, got in zip(spec.shape, shape))


def _inputs_from_npz(specs: list[InputSpec], inputs_path: str) -> tuple[dict[str, ModelInput], list[str]]:
    """Shapes from real inputs, checked against the program before any worker starts."""
    try:
        stored = read_samples(inputs_path)
    except NpzError as exc:
        raise ModelError(f"--inputs {exc}") from None
    for path, arrays in stored.items():
        for spec in specs:
            array = arrays.get(spec.name)
            if array is None:
                raise ModelError(f"--inputs {path}: input {spec.name!r} is missing (the file has "
                                 f"{', '.join(sorted(arrays)) or 'no arrays'}; expected an array for each of "
                                 f"{', '.join(s.name for s in specs)})")
            if array.dtype != spec.dtype:
                raise ModelError(f"--inputs {path}: input {spec.name!r} is {array.dtype}, the model expects {spec.dtype}")
            if not _fits(spec, list(array.shape)):
                raise ModelError(f"--inputs {path}: input {spec.name!r} has shape {list(array.shape)}, the model expects "
                                 f"{spec.shape} (-1 = any)")
    files = list(stored)
    where = f"--inputs {inputs_path}" + (f" ({len(files)} samples)" if len(files) > 1 else "")
    inputs = {}
    for spec in specs:
        shapes = [list(stored[path][spec.name].shape) for path in files]
        lods = [two_sequences(shape[0]) for shape in shapes] if spec.lod_level else None
        inputs[spec.name] = ModelInput(spec.name, spec.dtype, list(spec.shape), shapes, where, lod=lods)
    return inputs, [str(p) for p in files]


def _known_inputs(specs: list[InputSpec], names) -> None:
    known = {spec.name for spec in specs}
    for name in names:
        if name not in known:
            raise ModelError(f"--shape {name}: the model has no input {name!r} (inputs: {', '.join(sorted(known))})")


def two_sequences(tokens: int) -> list[list[int]]:
    """The LoD the doctor feeds a sequence input of ``tokens`` rows: two sequences (one if it has one row)."""
    return [[0, tokens // 2, tokens]] if tokens >= 2 else [[0, tokens]]


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
