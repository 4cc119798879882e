"""The service's declared configuration: what it asks of Paddle Inference, as its flags, its
``--config`` file and its source say (never probed), and where each value came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..vocabulary import Device, Layout, Origin, Precision

PADDLE_DEFAULT_THREADS = 1  # what a predictor runs when set_cpu_math_library_num_threads is not called


@dataclass
class TensorRTSettings:
    """The service's ``enable_tensorrt_engine`` arguments (GPU only)."""

    enabled: bool = False
    use_static: bool = False
    precision: Precision = Precision.FP32
    min_subgraph_size: int = 3
    max_batch_size: int = 1
    workspace_mb: int = 1024
    dynamic_shape_file: str | None = None


@dataclass
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
