"""A predictor configuration: the service's own (the baseline), a variation of it measured as a
fix, or the one recommended; the ``paddle.inference.Config`` calls that build it, and its name
for people.

The configuration itself travels to the predictor worker (``verify/protocol.py``), which builds
Paddle's Config from the same calls the recommended snippet prints (:meth:`PredictorConfig.config_calls`),
so what is measured is exactly what is recommended. Graph coverage builds the service's program
from the same calls (:func:`service_calls`, which adds the GPU's). This module also runs in the
worker, in the service's interpreter: it imports only the standard library, ``vocabulary`` and
``quoting`` (``verify/session.py`` WORKER_IMPORTS).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..base.quoting import python_call
from ..base.vocabulary import Device, Precision

if TYPE_CHECKING:
    from ..base.constraints import Positive
    from . import Facts

MEASURED_PRECISIONS = (Precision.FP32, Precision.BF16)  # what a CPU predictor runs; other precisions are measured as fp32
TENSORRT_PRECISIONS = {Precision.FP32: "Float32", Precision.FP16: "Half", Precision.INT8: "Int8", Precision.BF16: "Bfloat16"}
# calls the GPU configuration keeps from the CPU one (the rest are the CPU's math threads and oneDNN)
DEVICE_NEUTRAL_CALLS = ("switch_ir_optim", "switch_use_feed_fetch_ops", "enable_memory_optim", "delete_pass",
                        "set_optim_cache_dir", "enable_save_optim_model", "use_optimized_model")

Call = tuple[str, list[Any]]


def _switch(name: str) -> Callable[[Any], str]:
    return lambda on: f"{name} {'on' if on else 'off'}"


ONEDNN_CACHE_DEFAULT = 10  # Paddle's own: shapes whose oneDNN primitives are kept (PD-MEM-001's fix says it)
# the settings a configuration's name for people shows, in order, each as it shows it
LABELS: dict[str, Callable[[Any], str]] = {
    "threads": lambda threads: f"threads={threads}",
    "onednn": _switch("oneDNN"),
    "precision": str,
    "ir_optim": _switch("IR optim"),
    "feed_fetch": _switch("feed/fetch ops"),
    "onednn_cache_capacity": lambda capacity: f"oneDNN cache {capacity if capacity is not None else 'default'}",
    "memory_optim": _switch("memory optim"),
}


def __getattr__(name: str) -> Any:
    """``Positive``, for whoever resolves the field types (the decoder, the schema), loaded when asked:
    the worker, which runs this module without the rest of the doctor, never asks."""
    if name == "Positive":
        from ..base.constraints import Positive

        return Positive
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class PredictorConfig:
    """A CPU predictor's configuration. ``optim_cache_dir`` with ``save_optim_model`` writes the
    optimised program there; with ``use_optimized_model`` it loads it from there."""

    threads: Positive
    onednn: bool
    precision: Precision = Precision.FP32
    ir_optim: bool = True
    feed_fetch: bool = False
    onednn_cache_capacity: int | None = None
    memory_optim: bool = False
    delete_passes: tuple[str, ...] = ()
    optim_cache_dir: str | None = None
    save_optim_model: bool = False
    use_optimized_model: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "precision", Precision(self.precision))
        object.__setattr__(self, "delete_passes", tuple(self.delete_passes))

    @classmethod
    def of_service(cls, facts: Facts) -> PredictorConfig:
        """The service's configuration as a CPU predictor runs it: what it leaves unset is Paddle's default."""
        service = facts.service
        onednn_default = facts.paddle.mkldnn_default_on if facts.paddle.mkldnn_default_on is not None else True
        return cls(
            threads=service.math_threads,
            onednn=onednn_default if service.onednn is None else service.onednn,
            precision=service.precision if service.precision in MEASURED_PRECISIONS else Precision.FP32,
            ir_optim=True if service.ir_optim is None else service.ir_optim,
            feed_fetch=bool(service.feed_fetch_ops),
            onednn_cache_capacity=service.onednn_cache_capacity,
            memory_optim=bool(service.memory_optim),
            delete_passes=tuple(service.delete_passes),
        )

    def vary(self, **changes: Any) -> PredictorConfig:
        """This configuration with ``changes``; bf16 runs on oneDNN only, so it turns oneDNN on."""
        if changes.get("precision", self.precision) == Precision.BF16:
            changes["onednn"] = True
        return dataclasses.replace(self, **changes)

    def changes_from(self, other: PredictorConfig) -> dict[str, Any]:
        """The settings in which this configuration differs from ``other``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) != getattr(other, f.name)}

    def label(self, relative_to: PredictorConfig | None = None) -> str:
        """``threads=2, oneDNN on``: only what differs from ``relative_to`` when given."""
        parts = [show(getattr(self, name)) for name, show in LABELS.items()
                 if relative_to is None or getattr(self, name) != getattr(relative_to, name)]
        return ", ".join(parts) or "same as baseline"

    def key(self) -> str:
        """The same text for equal configurations: the name a worker keeps its predictor under."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    def config_calls(self) -> list[Call]:
        """The Config method calls, in order, that build this configuration on the CPU."""
        calls: list[Call] = [("disable_gpu", []), ("set_cpu_math_library_num_threads", [self.threads])]
        if self.onednn:
            calls.append(("enable_mkldnn", []))
            capacity = self.onednn_cache_capacity
            calls.append(("set_mkldnn_cache_capacity", [ONEDNN_CACHE_DEFAULT if capacity is None else capacity]))
            if self.precision == Precision.BF16:
                calls.append(("enable_mkldnn_bfloat16", []))
        else:
            calls.append(("disable_mkldnn", []))
        calls.append(("switch_ir_optim", [self.ir_optim]))
        calls.append(("switch_use_feed_fetch_ops", [self.feed_fetch]))
        if self.memory_optim:
            calls.append(("enable_memory_optim", []))
        calls.extend(("delete_pass", [name]) for name in self.delete_passes)
        if self.optim_cache_dir:
            calls.append(("set_optim_cache_dir", [self.optim_cache_dir]))
        if self.save_optim_model:
            calls.append(("enable_save_optim_model", [True]))
        if self.use_optimized_model:
            calls.append(("use_optimized_model", [True]))
        return calls

    def snippet(self, program: str, params: str | None) -> str:
        """Ready-to-paste Python that builds this configuration."""
        model_args = [program, params] if params else [str(program).rsplit("/", 1)[0]]
        lines = ["import paddle.inference as paddle_infer", "", f"config = {python_call('paddle_infer.Config', model_args)}"]
        lines += [f"config.{python_call(method, args)}" for method, args in self.config_calls()]
        lines.append("predictor = paddle_infer.create_predictor(config)")
        return "\n".join(lines) + "\n"


def service_calls(facts: Facts, **changes: Any) -> list[Call]:
    """The Config calls of the service's configuration, on the CPU or the GPU (with TensorRT); ``changes``
    are settings outside what the service runs (where the optimised program is written)."""
    calls = dataclasses.replace(PredictorConfig.of_service(facts), **changes).config_calls()
    service = facts.service
    if service.device != Device.GPU:
        return calls
    gpu: list[Call] = [("enable_use_gpu", [service.gpu_memory_pool_mb or 256, service.gpu_device_id])]
    trt = service.tensorrt
    if trt.enabled:
        gpu.append(("enable_tensorrt_engine", [trt.workspace_mb << 20, trt.max_batch_size, trt.min_subgraph_size,
                                               TENSORRT_PRECISIONS[trt.precision], False, False]))
    return gpu + [call for call in calls if call[0] in DEVICE_NEUTRAL_CALLS]
