"""GPU driver: is the NVIDIA driver new enough for the CUDA version the Paddle wheel was built with?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import (
    FULL_MINIMUM_DRIVER,
    MINOR_COMPAT_DRIVER,
    PADDLE_INDEX_TAG,
    gpu_wheel,
    version_tuple,
    wheel_label,
)
from paddle_doctor.judge.registry import Check

RULE = "PD-GPU-001"


@evidence
class DriverEvidence(Evidence):
    driver: str | None
    driver_cuda: str | None
    wheel_cuda: str
    required_driver: str
    minor_compat_driver: str
    index_tag: str
    compat_package: str


def check(facts: Facts) -> list[Finding]:
    if gpu_wheel(facts) is not True:
        return [skipped(RULE, f"no GPU build of Paddle: {wheel_label(facts)}")]
    wheel_cuda = version_tuple(facts.paddle.cuda_version)
    if wheel_cuda is None or len(wheel_cuda) < 2:
        return [skipped(RULE, f"the wheel's CUDA version {facts.paddle.cuda_version!r} cannot be read")]
    gpu = facts.gpu
    driver_text = gpu.driver_version or gpu.kernel_driver
    driver = version_tuple(driver_text)
    if driver is None:
        return [skipped(RULE, f"the driver version is unknown: {gpu.reason or 'NVML gave none'}")]
    major, minor = wheel_cuda[:2]
    floor = MINOR_COMPAT_DRIVER.get(major)
    if floor is None:
        return [skipped(RULE, f"no driver table entry for CUDA {major}.x")]
    full = FULL_MINIMUM_DRIVER.get((major, minor))
    cuda = f"CUDA {major}.{minor}"
    runs = [cuda_major for cuda_major, least in MINOR_COMPAT_DRIVER.items() if driver >= _version(least)]
    evidence = DriverEvidence(driver_text, gpu.cuda_driver_version, f"{major}.{minor}", full or floor, floor,
                              PADDLE_INDEX_TAG.get(max(runs, default=11), "cu118"), f"{major}-{minor}")
    if driver < _version(floor):
        needs = f"{floor} for any CUDA {major}.x" + (f", {full} for all of {cuda}" if full else "")
        return [Finding(RULE, Status.FAIL, f"driver {driver_text} is too old for the {cuda} wheel (it needs {needs})",
                        observed=f"driver {driver_text}" + (f" (CUDA {gpu.cuda_driver_version})" if gpu.cuda_driver_version else ""),
                        expected=f"driver >= {floor}", evidence=evidence)]
    if full and driver < _version(full):
        return [passed(RULE, f"driver {driver_text} runs the {cuda} wheel through minor-version compatibility "
                             f"(>= {floor} for CUDA {major}.x); {full} would give every {cuda} feature, "
                             "such as JIT of newer PTX", evidence)]
    return [passed(RULE, f"driver {driver_text} meets the minimum for the {cuda} wheel ({full or floor})", evidence)]


def _version(table_entry: str) -> tuple[int, ...]:
    """A driver version of the tables in paddle_doctor.judge.gpu_support, which are all dotted numbers."""
    version = version_tuple(table_entry)
    if version is None:
        raise ValueError(f"not a driver version: {table_entry!r}")
    return version


CHECK = Check(name="gpu_driver", rules=(RULE,), run=check, evidence={RULE: DriverEvidence})
