"""What ``paddle-doctor baseline`` recorded, as facts: the checks that compare the live container
with the baseline (``checks/baseline_*.py``) read it from ``Facts.baseline``."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.deferred import deferred_dataclass


@dataclass(frozen=True)
class BaselineCpu:
    """The CPU budget at baseline, against the threads the service runs."""

    budget_cpus: float | None
    limited_by: str | None
    limit_file: str | None
    threads: int
    threads_source: str
    instances: int

    @property
    def total_threads(self) -> int:
        return self.threads * self.instances


@dataclass(frozen=True)
class BaselineMemory:
    """The memory limit at baseline."""

    limit_bytes: int | None
    limit_file: str | None


@dataclass(frozen=True)
class BaselineThrottling:
    """The cgroup's throttling counters at baseline; the healthcheck judges the periods since."""

    nr_periods: int | None
    nr_throttled: int | None


@dataclass(frozen=True)
class BaselinePaddle:
    """The Paddle build at baseline, and the METADATA file the healthcheck reads it from again."""

    status: str
    distribution: str | None
    version: str | None
    with_cuda: bool | None
    cuda_version: str | None
    compiled_with_mkldnn: bool | None
    metadata_file: str | None
    installed: str | None  # "name version" as the METADATA file says


@deferred_dataclass(frozen=True)
class BaselineCache:
    """The optimisation / engine cache at baseline: where it is, what it holds, the mount it sits on."""

    path: str
    exists: bool
    files: int
    engines: int
    mountpoint: str | None
    fstype: str | None
    error: str | None = None
    lost_on_restart: str | None = None  # why the folder does not outlive the container; None on a volume

    @property
    def persisted(self) -> bool:
        """On a volume or bind mount, not in the container's writable layer or in memory."""
        return self.fstype is not None and self.lost_on_restart is None


@deferred_dataclass(frozen=True)
class BaselineGpu:
    """The GPUs of a GPU service as the cheap probes see them (the healthcheck does not ask NVML):
    the kernel driver's version and the ``/dev/nvidiaN`` nodes; NVML's names for the record.
    ``boot_id``: the host's boot the driver version belongs to (a baseline from an image build or
    from before a reboot says nothing about the driver now)."""

    kernel_driver: str | None
    device_nodes: list[str]
    nvml_driver: str | None
    devices: list[str]
    boot_id: str | None


@dataclass(frozen=True)
class BaselineFacts:
    """The recorded state the live facts are compared with. ``file``: the baseline it was read from;
    ``paddle_now``: the Paddle build read again from the recorded METADATA file (``name version``),
    or None with ``paddle_now_problem`` saying why it could not be."""

    file: str
    cpu: BaselineCpu
    memory: BaselineMemory
    throttling: BaselineThrottling
    paddle: BaselinePaddle
    gpu: BaselineGpu | None
    cache: BaselineCache | None
    paddle_now: str | None = None
    paddle_now_problem: str | None = None
