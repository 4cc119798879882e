"""The report's profile: what tells one container from another beyond the host summary, so that
reports of many pods can be compared (``paddle-doctor fleet``). Derived from Facts, nothing probed."""

from __future__ import annotations

from dataclasses import dataclass

from ..base.schema import Positive
from ..facts import Facts
from ..facts.budget import service_threads
from ..facts.pinned import baseline_cache
from ..judge.gpu_support import dotted, trt_runtime, wheel_label


@dataclass
class Profile:
    """Threads per predictor x instances, the Paddle build, the GPU driver with its CUDA, the TensorRT
    the service loads, and the optimisation / engine cache; None where this container has none."""

    threads: Positive
    instances: Positive
    paddle_build: str
    gpu_driver: str | None
    cuda_driver: str | None
    tensorrt: str | None
    cache: str | None


def build_profile(facts: Facts) -> Profile:
    threads, _ = service_threads(facts)
    tensorrt, _ = trt_runtime(facts)
    return Profile(threads=threads, instances=facts.service.instances, paddle_build=wheel_label(facts),
                   gpu_driver=facts.gpu.driver_version or facts.gpu.kernel_driver, cuda_driver=facts.gpu.cuda_driver_version,
                   tensorrt=dotted(tensorrt) if tensorrt else None, cache=cache_state(facts))


def cache_state(facts: Facts) -> str | None:
    """``/cache/paddle: 3 files, 2 engines`` (with why it would be lost on restart), ``... missing``, or None."""
    record = baseline_cache(facts)
    if record is None:
        return None
    if not record.exists:
        return f"{record.path}: missing"
    kept = "" if record.persisted else f", lost on restart ({record.lost_on_restart or 'not on a mount'})"
    return f"{record.path}: {record.files} files, {record.engines} engines{kept}"
