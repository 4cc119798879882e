"""What the service asks of Paddle Inference (``ServiceConfig``), as declared, never probed, each value
with where it came from (``SettingOrigin``). The ``--config service.yaml`` file mirrors the
``paddle.inference.Config`` calls the service makes::

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

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..base.vocabulary import Device, Layout, Origin, Precision

PADDLE_DEFAULT_THREADS = 1  # what a predictor runs when set_cpu_math_library_num_threads is not called


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
class ServiceConfig:
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

    @property
    def math_threads(self) -> int:
        """Math threads per predictor: ``threads`` when said, else Paddle's default."""
        return self.threads if self.threads is not None else PADDLE_DEFAULT_THREADS


@dataclass
class SettingOrigin:
    """Where the service's value of one setting came from. ``origin``: flag, config or source;
    ``value`` is None when the source sets it in a way the doctor cannot evaluate (``detail`` says
    where and why), and then Paddle's default or a lower-precedence value stands."""

    name: str
    value: Any
    origin: Origin
    detail: str


def serving_layout(service: ServiceConfig) -> Layout:
    """The service's layout, or the one its instance count implies."""
    return service.layout or (Layout.PROCESSES if service.instances > 1 else Layout.LOCK)
