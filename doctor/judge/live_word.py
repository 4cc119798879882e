"""Where what the service declares (its flags, --config, record or source) and its live process
disagree, the live process has the last word: a service whose process maps no CUDA library runs on
the CPU whatever its source says, and the threads that burn CPU in it are its compute threads when
no thread count is known. Pure functions of Facts; each says which side won and why."""

from __future__ import annotations

from ..base.vocabulary import Device, LibraryKind, ProcessStatus
from ..facts import Facts

GPU_LIBRARIES = (LibraryKind.CUDA, LibraryKind.CUDNN, LibraryKind.TENSORRT)


def live_cpu(facts: Facts) -> str | None:
    """Why the service runs on the CPU whatever its settings say: its live process has Paddle mapped
    and no CUDA, cuDNN or TensorRT library; None when the process was not read or maps one."""
    process = facts.service_process
    if process.status != ProcessStatus.PROBED or not process.libraries_source:
        return None
    kinds = {library.kind for library in process.libraries}
    if LibraryKind.PADDLE not in kinds or kinds.intersection(GPU_LIBRARIES):
        return None
    declared = facts.said_by("device")
    said = f"device gpu ({declared})" if facts.service.device == Device.GPU and declared else f"device {facts.service.device}"
    return (f"its live process {process.pid} maps Paddle and no CUDA library ({process.libraries_source}), whatever the "
            f"settings say ({said}); the live process has the last word")


def live_threads(facts: Facts) -> tuple[int, str] | None:
    """The compute threads of the live process (those that burned CPU over the sample) and, in words,
    where they were seen; None when the process was not sampled or none was busy."""
    process = facts.service_process
    if process.status != ProcessStatus.PROBED or not process.busy_threads:
        return None
    sample = f" over {process.sample_s:g} s" if process.sample_s else ""
    return process.busy_threads, (f"{process.busy_threads} busy threads{sample} in the live process {process.pid} "
                                  f"({process.threads_source or f'/proc/{process.pid}/task'})")
