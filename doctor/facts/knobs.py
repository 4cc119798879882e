"""Every setting of the service, one row each: the one home of a Paddle setting.

A row (:class:`Knob`) says the setting's name (a field of ``ServiceConfig``; ``tensorrt.precision``
for one of ``TensorRTSettings``), its type and default as the service declares it, its line of
``--config service.yaml``, the ``paddle.inference.Config`` calls that set it (which the source reader
reads, :func:`setter_arguments`), how the recorder reads it back from a live Config (:class:`Read`),
where the record keeps it, and, for what a CPU predictor runs, the field of ``PredictorConfig``:
its type, default, how a configuration's name shows it and the calls that build it
(:class:`PredictorField`). A row without setters is a setting of the service around Paddle (its
model, instances, serving layout).

``facts/predictor.py`` is written from this table (``python -m paddle_doctor.facts``; a test
fails when it is stale): ``ServiceConfig``, ``TensorRTSettings`` and ``PredictorConfig`` with their
fields, and the ``--config`` keys in its docstring. The source reader's call table, the recorder's
read-back, the record's settings and a configuration's calls and name are read from the rows
themselves. So a new setting is one row here, and its tests.

What a ``PredictorConfig`` does is read off the rows here too (:class:`PredictorBehaviour`, its base: its
name for people, its key, the Config calls that build it and the snippet that prints them, a variation
of it), so a configuration's calls are worked out where its settings are. This module runs in the
predictor worker too: it imports only the standard library, ``vocabulary`` and ``quoting``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..base.quoting import python_call
from ..base.vocabulary import Device, Precision

if TYPE_CHECKING:
    from typing_extensions import Self

    from .service_config import ServiceBehaviour

Call = tuple[str, list[Any]]
ONEDNN_CACHE_DEFAULT = 10  # Paddle's own: shapes whose oneDNN primitives are kept (PD-MEM-001's fix says it)
TRT_PRECISION_NAMES = {"Float32": "fp32", "Half": "fp16", "Int8": "int8", "Bfloat16": "bf16"}  # PrecisionType -> the doctor's
TRUE = "true"


@dataclass(frozen=True)
class Argument:
    """A setter's parameter: its position, its keyword, its value when the call leaves it out, and how
    the value the call gives becomes the setting's (``workspace_size`` in bytes: ``workspace_mb``)."""

    position: int
    keyword: str
    default: Any = None
    convert: Callable[[Any], Any] | None = None


@dataclass(frozen=True)
class Setter:
    """A Config method that sets the setting: through one of its arguments, or by being called (``fixed``:
    ``disable_mkldnn()`` sets oneDNN off)."""

    method: str
    argument: Argument | None = None
    fixed: Any = None


@dataclass(frozen=True)
class Read:
    """How the recorder reads the setting back from a live Config, with what it reads turned into the value:
    a getter's return (``getter``), a row of ``summary()`` (``summary``, its text), or what its setter was
    called with (``noted``: the arguments of the last call, a list of every call's with ``every``)."""

    getter: str | None = None
    summary: str | None = None
    noted: bool = False
    every: bool = False
    convert: Callable[[Any], Any] = lambda value: value
    otherwise: Any = None  # what a getter this Paddle lacks (or one that raises) is taken to say
    when: Callable[[dict[str, Any]], bool] | None = None  # read only where the settings read before say so


@dataclass(frozen=True)
class PredictorField:
    """The setting in ``PredictorConfig``: its field (type, default as code; ``default`` None: required), its
    rank among the fields, how a configuration's name shows it (``label``, ranked by ``label_rank``), the
    Config calls that build it (``calls`` of its value and the whole configuration, ranked by
    ``call_rank``), whether a GPU predictor keeps those calls (``device_neutral``) and, for a switch, its name
    for people (``said``: what a known problem's condition or workaround says is on or off)."""

    name: str
    kind: str
    default: str | None
    rank: int
    call_rank: int
    calls: Callable[[Any, Any], list[Call]]
    label: Callable[[Any], str] | None = None
    label_rank: int = 0
    device_neutral: bool = False
    from_service: Callable[[Any], Any] | None = None  # the predictor's value of the service's declared one
    said: str | None = None


@dataclass(frozen=True)
class Knob:
    """One setting of the service (see the module's words)."""

    name: str
    kind: str
    default: str
    config: str  # its --config line: ``threads: 8  # set_cpu_math_library_num_threads``
    setters: tuple[Setter, ...] = ()
    read: Read | None = None
    recorded: str | None = None  # where the record keeps it: a RecordedConfig field, ``cpu.x`` for its PredictorConfig's
    predictor: PredictorField | None = None
    positive: bool = False  # a count: at least 1
    in_source: bool = True  # read in the service's source (a list built call by call is not)
    from_record: Callable[[Any], Any] | None = None  # the service's setting as a recorded configuration says it, where not just ``recorded``

    @property
    def setter(self) -> str:
        """The Config method that sets it (the first where several do)."""
        return self.setters[0].method


def _switch(words: str) -> Callable[[Any], str]:
    return lambda on: f"{words} {'on' if on else 'off'}"


def _when(method: str, on: Callable[[Any], bool], *args: Any) -> Callable[[Any, Any], list[Call]]:
    """The call ``method(*args)`` where ``on(value)``, else none."""
    return lambda value, config: [(method, list(args))] if on(value) else []


def _given(method: str) -> Callable[[Any, Any], list[Call]]:
    """The call ``method(value)``."""
    return lambda value, config: [(method, [value])]


def _onednn(on: bool, config: Any) -> list[Call]:
    return [("enable_mkldnn", [])] if on else [("disable_mkldnn", [])]


def _onednn_cache(capacity: int | None, config: Any) -> list[Call]:
    return [("set_mkldnn_cache_capacity", [ONEDNN_CACHE_DEFAULT if capacity is None else capacity])] if config.onednn else []


def _bf16(precision: Precision, config: Any) -> list[Call]:
    return [("enable_mkldnn_bfloat16", [])] if config.onednn and precision == Precision.BF16 else []


def _cache_capacity(row: str | None) -> int | None:
    return int(row) if row and row.isdigit() and int(row) > 0 else None


def _trt_precision(mode: Any) -> Precision | None:
    name = str(mode or "").rpartition(".")[2]
    return Precision(TRT_PRECISION_NAMES[name]) if name in TRT_PRECISION_NAMES else None


def _on(row: str | None) -> bool:
    return row == TRUE


def _on_gpu(read: dict[str, Any]) -> bool:
    return read.get("device") == Device.GPU


def _with_tensorrt(read: dict[str, Any]) -> bool:
    return bool(read.get("tensorrt.enabled"))


MEASURED_PRECISIONS = (Precision.FP32, Precision.BF16)  # what a CPU predictor runs; other precisions are measured as fp32

KNOBS: tuple[Knob, ...] = (
    Knob("model", "str | None", "None", "model: ./inference          # directory or file prefix"),
    Knob("device", "Device", "Device.CPU", "device: cpu                 # cpu | gpu",
         (Setter("disable_gpu", fixed=Device.CPU), Setter("enable_use_gpu", fixed=Device.GPU)),
         Read(getter="use_gpu", convert=lambda gpu: Device.GPU if gpu else Device.CPU), recorded="device"),
    Knob("threads", "int | None", "None", "threads: 8                  # set_cpu_math_library_num_threads",
         (Setter("set_cpu_math_library_num_threads", Argument(0, "cpu_math_library_num_threads")),),
         Read(getter="cpu_math_library_num_threads", convert=lambda threads: int(threads or 1)), "cpu.threads",
         PredictorField("threads", "Positive", None, 0, 1, _given("set_cpu_math_library_num_threads"),
                        lambda threads: f"threads={threads}", 0, from_service=lambda service: service.math_threads),
         positive=True),
    Knob("instances", "int", "1", "instances: 2                # predictors: processes, clones or pool size (see layout)",
         positive=True),
    Knob("concurrency", "int | None", "None", "concurrency: 4              # concurrent requests the service accepts",
         positive=True),
    Knob("layout", "Layout | None", "None", """layout: processes           # how concurrent requests reach predictors, one of:
                            #   processes: `instances` worker processes, one predictor each
                            #   clone: one process, `instances` predictors from clone(),
                            #          one per worker thread
                            #   pool: one process, PredictorPool(config, instances)
                            #   lock: one predictor behind a lock (instances: 1)
                            #   shared: one predictor used by concurrent threads without
                            #           a lock (not thread-safe)
                            # default: processes when instances > 1, else lock"""),
    Knob("onednn", "bool | None", "None", "onednn: true                # enable_mkldnn / disable_mkldnn",
         (Setter("enable_mkldnn", fixed=True), Setter("disable_mkldnn", fixed=False)),
         Read(getter="mkldnn_enabled", convert=bool), "cpu.onednn",
         PredictorField("onednn", "bool", None, 1, 2, _onednn, _switch("oneDNN"), 1, said="oneDNN")),
    Knob("onednn_cache_capacity", "int | None", "None", "onednn_cache_capacity: 10   # set_mkldnn_cache_capacity",
         (Setter("set_mkldnn_cache_capacity", Argument(0, "capacity")),),
         Read(summary="mkldnn_cache_capacity", convert=_cache_capacity), "cpu.onednn_cache_capacity",
         PredictorField("onednn_cache_capacity", "int | None", "None", 5, 3, _onednn_cache,
                        lambda capacity: f"oneDNN cache {capacity if capacity is not None else 'default'}", 5,
                        from_service=lambda service: service.onednn_cache_capacity)),
    Knob("ir_optim", "bool | None", "None", "ir_optim: true              # switch_ir_optim",
         (Setter("switch_ir_optim", Argument(0, "x", True)),),
         Read(getter="ir_optim", convert=bool, otherwise=True), "cpu.ir_optim",
         PredictorField("ir_optim", "bool", "True", 3, 5, _given("switch_ir_optim"), _switch("IR optim"), 3, device_neutral=True, said="IR optim",
                        from_service=lambda service: True if service.ir_optim is None else service.ir_optim)),
    Knob("precision", "Precision", "Precision.FP32", "precision: fp32             # fp32 | bf16 | fp16 | int8",
         (Setter("enable_mkldnn_bfloat16", fixed=Precision.BF16), Setter("enable_onednn_bfloat16", fixed=Precision.BF16)),
         Read(noted=True, convert=lambda bf16: Precision.BF16 if bf16 else Precision.FP32), "cpu.precision",
         from_record=lambda recorded: recorded.cpu.precision if recorded.cpu.precision == Precision.BF16
         else (recorded.tensorrt_precision if recorded.tensorrt else None) or Precision.FP32,
         predictor=PredictorField("precision", "Precision", "Precision.FP32", 2, 4, _bf16, str, 2,
                        from_service=lambda service: service.precision if service.precision in MEASURED_PRECISIONS
                        else Precision.FP32)),
    Knob("feed_fetch_ops", "bool | None", "None", "feed_fetch_ops: false       # switch_use_feed_fetch_ops",
         (Setter("switch_use_feed_fetch_ops", Argument(0, "x", True)),),
         Read(getter="use_feed_fetch_ops_enabled", convert=bool), "cpu.feed_fetch",
         PredictorField("feed_fetch", "bool", "False", 4, 6, _given("switch_use_feed_fetch_ops"), _switch("feed/fetch ops"), 4,
                        device_neutral=True, said="feed/fetch ops", from_service=lambda service: bool(service.feed_fetch_ops))),
    Knob("memory_optim", "bool | None", "None", "memory_optim: true          # enable_memory_optim",
         (Setter("enable_memory_optim", Argument(0, "x", True)),),
         Read(summary="memory_optim", convert=_on), "cpu.memory_optim",
         PredictorField("memory_optim", "bool", "False", 6, 7, _when("enable_memory_optim", bool), _switch("memory optim"), 6,
                        device_neutral=True, said="memory optim", from_service=lambda service: bool(service.memory_optim))),
    Knob("optim_cache_dir", "str | None", "None", "optim_cache_dir: /cache     # set_optim_cache_dir",
         (Setter("set_optim_cache_dir", Argument(0, "opt_cache_dir")),),
         Read(noted=True, convert=lambda folder: str(folder) if folder is not None else None), "cpu.optim_cache_dir",
         PredictorField("optim_cache_dir", "str | None", "None", 8, 9,
                        lambda folder, config: [("set_optim_cache_dir", [folder])] if folder else [], device_neutral=True)),
    Knob("save_optim_model", "bool | None", "None", "save_optim_model: true      # enable_save_optim_model",
         (Setter("enable_save_optim_model", Argument(0, "save_optimized_model", True)),),
         Read(summary="save_optimized_model", convert=_on), "cpu.save_optim_model",
         PredictorField("save_optim_model", "bool", "False", 9, 10, _when("enable_save_optim_model", bool, True),
                        device_neutral=True)),
    Knob("use_optimized_model", "bool | None", "None", "use_optimized_model: true   # use_optimized_model",
         (Setter("use_optimized_model", Argument(0, "x", True)),),
         Read(summary="use_optimized_model", convert=_on), "cpu.use_optimized_model",
         PredictorField("use_optimized_model", "bool", "False", 10, 11, _when("use_optimized_model", bool, True),
                        device_neutral=True, said="the optimised-model cache")),
    Knob("warmup_runs", "int | None", "None", "warmup_runs: 3              # inferences run before the service reports ready"),
    Knob("batch_size", "int", "1", "batch_size: 1", positive=True),
    Knob("gpu_device_id", "int", "0", "gpu_device_id: 0",
         (Setter("enable_use_gpu", Argument(1, "device_id", 0)),), Read(getter="gpu_device_id", when=_on_gpu), "gpu_device_id"),
    Knob("gpu_memory_pool_mb", "int | None", "None", "gpu_memory_pool_mb: 1024    # enable_use_gpu(memory_pool_init_size_mb=...)",
         (Setter("enable_use_gpu", Argument(0, "memory_pool_init_size_mb")),),
         Read(getter="memory_pool_init_size_mb", when=_on_gpu), "gpu_memory_pool_mb"),
    Knob("delete_passes", "list[str]", "field(default_factory=list)", "delete_passes: [conv_bn_fuse_pass]   # config.delete_pass(name) for each",
         (Setter("delete_pass", Argument(0, "pass_name")),),
         Read(noted=True, every=True, convert=lambda names: tuple(str(name) for name in names or ())), "cpu.delete_passes",
         from_record=lambda recorded: list(recorded.cpu.delete_passes) or None,
         predictor=PredictorField("delete_passes", "tuple[str, ...]", "()", 7, 8,
                        lambda names, config: [("delete_pass", [name]) for name in names], device_neutral=True,
                        from_service=lambda service: tuple(service.delete_passes)), in_source=False),
    Knob("tensorrt.enabled", "bool", "False", """tensorrt:                   # enable_tensorrt_engine(...)
  enabled: true""", (Setter("enable_tensorrt_engine", fixed=True),), Read(getter="tensorrt_engine_enabled", convert=bool),
         "tensorrt", from_record=lambda recorded: recorded.tensorrt if recorded.device == Device.GPU else None),
    Knob("tensorrt.use_static", "bool", "False", "  use_static: true",
         (Setter("enable_tensorrt_engine", Argument(4, "use_static", False)),),
         Read(noted=True, convert=bool, when=_with_tensorrt), "tensorrt_use_static",
         from_record=lambda recorded: recorded.tensorrt_use_static if recorded.device == Device.GPU else None),
    Knob("tensorrt.precision", "Precision", "Precision.FP32", "  precision: fp16",
         (Setter("enable_tensorrt_engine", Argument(3, "precision_mode", "fp32")),),
         Read(getter="tensorrt_precision_mode", convert=_trt_precision, when=_with_tensorrt), "tensorrt_precision",
         from_record=lambda recorded: None),  # the record's precision is the service's, below
    Knob("tensorrt.min_subgraph_size", "int", "3", "  min_subgraph_size: 3",
         (Setter("enable_tensorrt_engine", Argument(2, "min_subgraph_size", 3)),)),
    Knob("tensorrt.max_batch_size", "int", "1", "  max_batch_size: 1",
         (Setter("enable_tensorrt_engine", Argument(1, "max_batch_size", 1)),)),
    Knob("tensorrt.workspace_mb", "int", "1024", "  workspace_mb: 1024",
         (Setter("enable_tensorrt_engine", Argument(0, "workspace_size", 1 << 30, lambda size: size >> 20)),)),
    Knob("tensorrt.dynamic_shape_file", "str | None", "None", "  dynamic_shape_file: shape_range_info.pbtxt"),
)
BY_NAME = {knob.name: knob for knob in KNOBS}
PREDICTOR_FIELDS = tuple(sorted((knob.predictor for knob in KNOBS if knob.predictor is not None), key=lambda field: field.rank))


def knob(name: str) -> Knob:
    return BY_NAME[name]


def settings_recorded(recorded: Any) -> dict[str, Any]:
    """The service's settings as one recorded configuration (``RecordedConfig``) says them, by setting;
    None where it says nothing of one."""
    values = {}
    for row in KNOBS:
        if row.from_record is not None:
            values[row.name] = row.from_record(recorded)
        elif row.recorded is not None:
            values[row.name] = attrgetter(row.recorded)(recorded)
    return values


def setter_arguments() -> dict[str, tuple[tuple[str, Setter], ...]]:
    """Per Config method, the settings it sets and how: what the source reader reads of a call."""
    table: dict[str, tuple[tuple[str, Setter], ...]] = {}
    for row in (row for row in KNOBS if row.in_source):
        for setter in row.setters:
            table[setter.method] = (*table.get(setter.method, ()), (row.name, setter))
    return table


def predictor_calls(config: Any) -> list[Call]:
    """The Config calls, in order, that build the CPU predictor configuration ``config``."""
    calls: list[Call] = [("disable_gpu", [])]
    for field in sorted(PREDICTOR_FIELDS, key=lambda field: field.call_rank):
        calls += field.calls(getattr(config, field.name), config)
    return calls


def device_neutral_calls() -> frozenset[str]:
    """The calls a GPU predictor keeps of a CPU configuration's (the rest are its math threads and oneDNN)."""
    return frozenset(setter.method for row in KNOBS if row.predictor is not None and row.predictor.device_neutral for setter in row.setters)


def switches() -> dict[str, str]:
    """Each switch of a CPU predictor's configuration (a bool field with a name for people) and that name."""
    return {field.name: field.said for field in PREDICTOR_FIELDS if field.kind == "bool" and field.said}


def setting_of(field: str) -> str:
    """The service's setting (its row's name) that a field of ``PredictorConfig`` runs: ``feed_fetch`` is ``feed_fetch_ops``."""
    return next(row.name for row in KNOBS if row.predictor is not None and row.predictor.name == field)


def labels() -> list[tuple[str, Callable[[Any], str]]]:
    """The fields a configuration's name shows, in order, each with how it shows it."""
    return [(field.name, field.label) for field in sorted(PREDICTOR_FIELDS, key=lambda field: field.label_rank) if field.label]


# ------------------------------------------------------------------------------ what PredictorConfig does

TENSORRT_PRECISIONS = {Precision(ours): theirs for theirs, ours in TRT_PRECISION_NAMES.items()}  # the doctor's -> PrecisionType


class _ProbedPaddle(Protocol):
    @property
    def mkldnn_default_on(self) -> bool | None: ...


class Probed(Protocol):
    """What :meth:`PredictorBehaviour.of_service` reads of the facts: the service's declared configuration and the probed Paddle."""

    @property
    def service(self) -> ServiceBehaviour: ...

    @property
    def paddle(self) -> _ProbedPaddle: ...


class PredictorBehaviour:
    """What ``PredictorConfig`` does, its base: the fields are the table's (facts/knobs.py); the two named
    here are the ones these methods read by name."""

    precision: Precision
    delete_passes: tuple[str, ...]
    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass, as each configuration is

    def __post_init__(self) -> None:
        """Its precision a Precision and its passes a tuple, however they were given (JSON gives a list)."""
        object.__setattr__(self, "precision", Precision(self.precision))
        object.__setattr__(self, "delete_passes", tuple(self.delete_passes))

    @classmethod
    def of_service(cls, facts: Probed) -> Self:
        """The service's configuration as a CPU predictor runs it: what it leaves unset is Paddle's default
        (oneDNN's, the one the probed Paddle says it turns on)."""
        service = facts.service
        onednn_default = facts.paddle.mkldnn_default_on if facts.paddle.mkldnn_default_on is not None else True
        values = {field.name: field.from_service(service) for field in PREDICTOR_FIELDS if field.from_service is not None}
        values["onednn"] = onednn_default if service.onednn is None else service.onednn
        return cls(**values)

    def vary(self, **changes: Any) -> Self:
        """This configuration with ``changes``; bf16 runs on oneDNN only, so it turns oneDNN on."""
        if changes.get("precision", self.precision) == Precision.BF16:
            changes["onednn"] = True
        return dataclasses.replace(self, **changes)

    def changes_from(self, other: Self) -> dict[str, Any]:
        """The settings in which this configuration differs from ``other``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) != getattr(other, f.name)}

    def label(self, relative_to: Self | None = None) -> str:
        """``threads=2, oneDNN on``: only what differs from ``relative_to`` when given."""
        parts = [show(getattr(self, name)) for name, show in labels()
                 if relative_to is None or getattr(self, name) != getattr(relative_to, name)]
        return ", ".join(parts) or "same as baseline"

    def key(self) -> str:
        """The same text for equal configurations: the name a worker keeps its predictor under."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    def config_calls(self) -> list[Call]:
        """The Config method calls, in order, that build this configuration on the CPU."""
        return predictor_calls(self)

    def snippet(self, program: str, params: str | None) -> str:
        """Ready-to-paste Python that builds this configuration."""
        model_args = [program, params] if params else [str(program).rsplit("/", 1)[0]]
        lines = ["import paddle.inference as paddle_infer", "", f"config = {python_call('paddle_infer.Config', model_args)}"]
        lines += [f"config.{python_call(method, args)}" for method, args in self.config_calls()]
        lines.append("predictor = paddle_infer.create_predictor(config)")
        return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ facts/predictor.py, written

HEADER = '''"""The service's configuration as it declares it (``ServiceConfig``, with its TensorRT part
``TensorRTSettings``) and a CPU predictor's configuration (``PredictorConfig``): written from the one
table of settings, ``facts/knobs.py``, by ``python -m paddle_doctor.facts`` (a test fails when this
file is stale); what they do is written in their bases, ``ServiceBehaviour`` (facts/service_config.py)
and ``PredictorBehaviour`` (facts/knobs.py). The predictor's configuration travels to the
predictor worker (``verify/protocol.py``), which builds Paddle's Config from the calls the recommended
snippet prints; this module runs there too (``verify/session.py`` WORKER_IMPORTS).

``None`` in ``ServiceConfig`` means "not said", and Paddle's own default applies. The ``--config
service.yaml`` file mirrors the ``paddle.inference.Config`` calls the service makes::

{keys}
"""

# This file is written by `python -m paddle_doctor.facts`; edit facts/knobs.py instead.

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..base.vocabulary import Device, Layout, Precision
from .knobs import (  # noqa: F401 (the configurations' names, in one place)
    MEASURED_PRECISIONS,
    ONEDNN_CACHE_DEFAULT,
    TENSORRT_PRECISIONS,
    Call,
    PredictorBehaviour,
)
from .service_config import ServiceBehaviour

if TYPE_CHECKING:
    from ..base.constraints import Positive


def __getattr__(name: str) -> Any:
    """``Positive``, for whoever resolves the field types (the decoder, the schema), loaded when asked:
    the worker, which runs this module without the rest of the doctor, never asks."""
    if name == "Positive":
        from ..base.constraints import Positive

        return Positive
    raise AttributeError(f"module {{__name__!r}} has no attribute {{name!r}}")
'''

CLASSES = {  # each class's docstring and the base that says what it does
    "TensorRTSettings": ('"""The service\'s ``enable_tensorrt_engine`` arguments (GPU only)."""', None),
    "ServiceConfig": (('"""How the service configures Paddle Inference, as declared: by flags, ``--config service.yaml``\n'
                       '    and its source (``Facts.service_origins`` says which); never probed.\n\n'
                       '    ``None`` means "not said", and Paddle\'s own default applies.\n    """'), "ServiceBehaviour"),
    "PredictorConfig": (('"""A CPU predictor\'s configuration. ``optim_cache_dir`` with ``save_optim_model`` writes the\n'
                         '    optimised program there; with ``use_optimized_model`` it loads it from there."""'), "PredictorBehaviour"),
}


def configs_module() -> str:
    """The text of facts/predictor.py, from the table."""
    keys = "\n".join("    " + line for row in KNOBS for line in row.config.splitlines())
    service = [(row.name, row.kind, row.default) for row in KNOBS if "." not in row.name]
    service.append(("tensorrt", "TensorRTSettings", "field(default_factory=TensorRTSettings)"))
    tensorrt = [(row.name.split(".", 1)[1], row.kind, row.default) for row in KNOBS if row.name.startswith("tensorrt.")]
    predictor = [(field.name, field.kind, field.default) for field in PREDICTOR_FIELDS]
    parts = [HEADER.format(keys=keys)]
    for name, fields in (("TensorRTSettings", tensorrt), ("ServiceConfig", service), ("PredictorConfig", predictor)):
        doc, base = CLASSES[name]
        lines = ["@dataclass(frozen=True)", f"class {name}({base}):" if base else f"class {name}:", f"    {doc}", ""]
        lines += [f"    {field}: {kind}" + (f" = {default}" if default is not None else "") for field, kind, default in fields]
        parts.append("\n\n" + "\n".join(lines) + "\n")
    return "".join(parts)


CONFIGS = Path(__file__).with_name("predictor.py")
