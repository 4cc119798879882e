"""GPU facts interpreted for the GPU and TensorRT checks: the wheel's CUDA, whether this host has an
NVIDIA GPU, which GPU the service runs on, and the driver table. Pure functions of Facts."""

from __future__ import annotations

import re

from ..base.vocabulary import Device, GpuStatus, PaddleStatus
from ..facts import Facts, GpuDevice
from .live_word import live_cpu

# Minimum Linux driver for each CUDA toolkit: NVIDIA, "CUDA Toolkit and Corresponding Driver
# Versions" (CUDA Toolkit release notes), as gathered in shared/paddle-notes.md.
FULL_MINIMUM_DRIVER = {
    (11, 2): "460.27.03",
    (11, 6): "510.39.01",
    (11, 7): "515.43.04",
    (11, 8): "520.61.05",
    (12, 0): "525.60.13",
    (12, 3): "545.23.06",
    (12, 6): "560.28.03",
    (12, 9): "575.51.03",
    (13, 0): "580.65.06",
}
# Minor-version compatibility (NVIDIA, "CUDA Compatibility"): every toolkit of a major version runs
# on this driver; some features (PTX JIT of newer code) still need the full minimum above.
MINOR_COMPAT_DRIVER = {11: "450.80.02", 12: "525.60.13", 13: "580"}
# Paddle's package-index folder per CUDA major (www.paddlepaddle.org.cn/packages/stable/<tag>/).
PADDLE_INDEX_TAG = {11: "cu118", 12: "cu126"}
HIDE_ALL = ("", "-1", "none", "NoDevFiles")
LEADING_VERSION = re.compile(r"\s*v?(\d+(?:\.\d+)*)")


def version_tuple(text: object) -> tuple[int, ...] | None:
    """'12.6' -> (12, 6); '535.104.05' -> (535, 104, 5); None when nothing numeric leads."""
    match = LEADING_VERSION.match(str(text)) if text is not None else None
    return tuple(int(part) for part in match.group(1).split(".")) if match else None


def dotted(version: tuple[int, ...] | list[int]) -> str:
    return ".".join(str(part) for part in version)


def gpu_wheel(facts: Facts) -> bool | None:
    """True for a CUDA build of Paddle, False for a CPU build, None when Paddle was not probed."""
    return bool(facts.paddle.with_cuda) if facts.paddle.status == PaddleStatus.OK else None


def wheel_label(facts: Facts) -> str:
    paddle = facts.paddle
    if paddle.status != PaddleStatus.OK:
        return f"Paddle {paddle.status.replace('_', ' ')}"
    kind = f"CUDA {paddle.cuda_version}" if paddle.with_cuda else "CPU-only"
    return f"{paddle.distribution or 'paddle'} {paddle.version} ({kind})"


def host_gpu(facts: Facts) -> str:
    """'present', 'absent' or 'unknown': does this host have an NVIDIA GPU, reachable or not?"""
    gpu = facts.gpu
    if gpu.kernel_driver or gpu.device_nodes or gpu.status not in (GpuStatus.LIBRARY_NOT_FOUND, GpuStatus.NO_PYNVML, GpuStatus.NOT_PROBED):
        return "present"
    return "absent" if gpu.status == GpuStatus.LIBRARY_NOT_FOUND else "unknown"


def host_evidence(facts: Facts) -> str:
    gpu = facts.gpu
    if gpu.status == GpuStatus.OK:
        return f"NVML sees {len(gpu.devices)} GPU{'s' if len(gpu.devices) != 1 else ''}, driver {gpu.driver_version}"
    if gpu.kernel_driver:
        return f"the host runs NVIDIA driver {gpu.kernel_driver} (/proc/driver/nvidia/version) but NVML: {gpu.reason}"
    if gpu.device_nodes:
        return f"{', '.join(gpu.device_nodes)} exist but NVML: {gpu.reason}"
    if host_gpu(facts) == "absent":
        return "this host shows no NVIDIA GPU: no NVML library, no /proc/driver/nvidia, no /dev/nvidia*"
    return gpu.reason or f"NVML: {gpu.status}"


def uses_gpu(facts: Facts) -> bool:
    """The service runs on a GPU: its config says so, or the record of any of its predictors does (where
    it recorded them, the record alone says where they run), or a GPU wheel sits on a host with an
    NVIDIA GPU; unless its live process maps no CUDA library (the live process has the last word)."""
    record = facts.service_record
    known = [predictor.config for predictor in record.predictors if predictor.config is not None] if record and record.read else []
    if known:  # the record says where each predictor runs: no guess from the wheel and the host
        declared = facts.service.device == Device.GPU or any(config.device == Device.GPU for config in known)
    else:
        declared = facts.service.device == Device.GPU or (gpu_wheel(facts) is True and host_gpu(facts) == "present")
    return declared and live_cpu(facts) is None


def cpu_service(facts: Facts) -> str:
    """Why the GPU rules do not apply: the skip reason when :func:`uses_gpu` is False."""
    live = live_cpu(facts)
    if live:
        return f"the service runs on the CPU: {live}"
    return f"the service runs on the CPU (device {facts.service.device}; {wheel_label(facts)}; {host_evidence(facts)})"


def cuda_visible(env: dict[str, str]) -> list[str] | None:
    """The GPUs CUDA_VISIBLE_DEVICES leaves to CUDA, in order; None when it is unset."""
    if "CUDA_VISIBLE_DEVICES" not in env:
        return None
    value = env["CUDA_VISIBLE_DEVICES"].strip()
    if value in HIDE_ALL:
        return []
    visible = []
    for entry in (part.strip() for part in value.split(",")):
        if not entry or entry.startswith("-"):
            break  # CUDA ignores an invalid entry and everything after it
        visible.append(entry)
    return visible


def service_gpu(facts: Facts) -> GpuDevice | None:
    """The GPU at the service's gpu_device_id, counted among those CUDA_VISIBLE_DEVICES leaves."""
    index = facts.service.gpu_device_id
    visible = cuda_visible(facts.env)
    if visible is not None:
        if index >= len(visible):
            return None
        if visible[index].isdigit():
            index = int(visible[index])
    return next((device for device in facts.gpu.devices if device.index == index), None)


def judged_gpu(facts: Facts) -> GpuDevice | str:
    """The service's GPU as NVML describes it, or why it cannot be judged."""
    if facts.gpu.status != GpuStatus.OK:
        return f"NVML gave no GPU facts ({facts.gpu.reason or facts.gpu.status}); see the GPU visibility rules"
    device = service_gpu(facts)
    return device if device is not None else f"GPU {facts.service.gpu_device_id}, the service's device, is not visible; see PD-GPU-003"


def compute_capability(device: GpuDevice) -> tuple[int, int] | None:
    version = version_tuple(device.compute_capability)
    return (version[0], version[1] if len(version) > 1 else 0) if version else None


def summary(facts: Facts) -> str | None:
    """One line for the report's host table; None when nothing about a GPU was probed or found."""
    gpu = facts.gpu
    if gpu.status == GpuStatus.OK and gpu.devices:
        names = sorted({f"{d.name} (compute capability {d.compute_capability})" for d in gpu.devices})
        return f"{len(gpu.devices)} x {', '.join(names)}; driver {gpu.driver_version} (CUDA {gpu.cuda_driver_version})"
    if gpu.status == GpuStatus.NOT_PROBED and not gpu.kernel_driver:
        return None
    driver = f"; kernel driver {gpu.kernel_driver}" if gpu.kernel_driver else ""
    return f"none reachable: {gpu.reason or gpu.status}{driver}"


def describe(device: GpuDevice) -> str:
    return f"GPU {device.index} {device.name or '(unnamed)'} (compute capability {device.compute_capability or '?'})"


def reported_version(version: list[int] | tuple[int, ...] | None) -> tuple[int, ...] | None:
    """A version Paddle reports, or None for Paddle's (0, 0, 0) meaning 'none'."""
    return tuple(version) if version and any(version) else None


def trt_runtime(facts: Facts) -> tuple[tuple[int, ...] | None, str]:
    """The TensorRT the service will load, and where that was seen."""
    reported = reported_version(facts.paddle.trt_runtime_version)
    if reported:
        return reported, "get_trt_runtime_version()"
    copies = facts.libraries.found.get("libnvinfer", [])
    if copies:
        return version_tuple(copies[0].version), copies[0].path
    return None, f"no libnvinfer.so* in {len(facts.libraries.searched)} folders the loader searches"


def engine_target(facts: Facts) -> dict[str, str | None]:
    """What TensorRT engines built here are built for: the TensorRT the service loads and its GPU
    (None where unknown). The ``paddle-doctor-cache.json`` stamp records this beside the engines."""
    runtime, device = trt_runtime(facts)[0], service_gpu(facts)
    return {"tensorrt": dotted(runtime) if runtime else None, "gpu": device.name if device else None,
            "compute_capability": device.compute_capability if device else None}


def stamp_differences(stamp: dict[str, str], here: dict[str, str | None]) -> list[str]:
    """``"tensorrt 8.5.1 (here 8.6.1)"`` for each key where a stamp and this machine both say something
    and disagree: GPU names case-insensitively, versions on their first three parts."""
    return [f"{key} {stamp[key]} (here {here[key]})" for key in here if _differs(key, stamp.get(key), here[key])]


def _differs(key: str, recorded: str | None, here: str | None) -> bool:
    if not recorded or not here:
        return False
    if key == "gpu":
        return recorded.strip().lower() != here.strip().lower()
    old, new = version_tuple(recorded), version_tuple(here)
    if old is None or new is None:
        return recorded != here
    shared = min(len(old), len(new), 3)
    return old[:shared] != new[:shared]
