"""The service's configuration as it declares it (``ServiceConfig``, with its TensorRT part
``TensorRTSettings``) and a CPU predictor's configuration (``PredictorConfig``): written from the one
table of settings, ``facts/knobs.py``, by ``python -m paddle_doctor.facts`` (a test fails when this
file is stale); what they do is written in their bases, ``ServiceBehaviour`` (facts/service_config.py)
and ``PredictorBehaviour`` (facts/knobs.py). The predictor's configuration travels to the
predictor worker (``verify/protocol.py``), which builds Paddle's Config from the calls the recommended
snippet prints; this module runs there too (``verify/session.py`` WORKER_IMPORTS).

``None`` in ``ServiceConfig`` means "not said", and Paddle's own default applies. The ``--config
service.yaml`` file mirrors the ``paddle.inference.Config`` calls the service makes::

    model: ./inference          # directory or file prefix
    device: cpu                 # cpu | gpu
    threads: 8                  # set_cpu_math_library_num_threads
    instances: 2                # predictors: processes, clones or pool size (see layout)
    concurrency: 4              # concurrent requests the service accepts
    layout: processes           # how concurrent requests reach predictors, one of:
                                #   processes: `instances` worker processes, one predictor each
                                #   clone: one process, `instances` predictors from clone(),
                                #          one per worker thread
                                #   pool: one process, PredictorPool(config, instances)
                                #   lock: one predictor behind a lock (instances: 1)
                                #   shared: one predictor used by concurrent threads without
                                #           a lock (not thread-safe)
                                # default: processes when instances > 1, else lock
    onednn: true                # enable_mkldnn / disable_mkldnn
    onednn_cache_capacity: 10   # set_mkldnn_cache_capacity
    ir_optim: true              # switch_ir_optim
    precision: fp32             # fp32 | bf16 | fp16 | int8
    feed_fetch_ops: false       # switch_use_feed_fetch_ops
    memory_optim: true          # enable_memory_optim
    optim_cache_dir: /cache     # set_optim_cache_dir
    save_optim_model: true      # enable_save_optim_model
    use_optimized_model: true   # use_optimized_model
    warmup_runs: 3              # inferences run before the service reports ready
    batch_size: 1
    gpu_device_id: 0
    gpu_memory_pool_mb: 1024    # enable_use_gpu(memory_pool_init_size_mb=...)
    delete_passes: [conv_bn_fuse_pass]   # config.delete_pass(name) for each
    tensorrt:                   # enable_tensorrt_engine(...)
      enabled: true
      use_static: true
      precision: fp16
      min_subgraph_size: 3
      max_batch_size: 1
      workspace_mb: 1024
      dynamic_shape_file: shape_range_info.pbtxt
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
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class TensorRTSettings:
    """The service's ``enable_tensorrt_engine`` arguments (GPU only)."""

    enabled: bool = False
    use_static: bool = False
    precision: Precision = Precision.FP32
    min_subgraph_size: int = 3
    max_batch_size: int = 1
    workspace_mb: int = 1024
    dynamic_shape_file: str | None = None


@dataclass(frozen=True)
class ServiceConfig(ServiceBehaviour):
    """How the service configures Paddle Inference, as declared: by flags, ``--config service.yaml``
    and its source (``Facts.service_origins`` says which); never probed.

    ``None`` means "not said", and Paddle's own default applies.
    """

    model: str | None = None
    device: Device = Device.CPU
    threads: int | None = None
    instances: int = 1
    concurrency: int | None = None
    layout: Layout | None = None
    onednn: bool | None = None
    onednn_cache_capacity: int | None = None
    ir_optim: bool | None = None
    precision: Precision = Precision.FP32
    feed_fetch_ops: bool | None = None
    memory_optim: bool | None = None
    optim_cache_dir: str | None = None
    save_optim_model: bool | None = None
    use_optimized_model: bool | None = None
    warmup_runs: int | None = None
    batch_size: int = 1
    gpu_device_id: int = 0
    gpu_memory_pool_mb: int | None = None
    delete_passes: list[str] = field(default_factory=list)
    tensorrt: TensorRTSettings = field(default_factory=TensorRTSettings)


@dataclass(frozen=True)
class PredictorConfig(PredictorBehaviour):
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
