"""The NVIDIA driver against the CUDA version the Paddle wheel was built with.

Each CUDA toolkit needs a minimum driver (NVIDIA's table, in ``paddle_doctor.gpu``). Through
minor-version compatibility a driver at or above the first release of a CUDA major version runs
every toolkit of that major version (11.x from 450.80.02, 12.x from 525.60.13, 13.x from 580),
with some features, such as JIT compilation of newer PTX, needing the full minimum.
Why: below that, the first GPU call fails with "CUDA error(35), CUDA driver version is
insufficient for CUDA runtime version".
Fix: upgrade the host driver, install a Paddle wheel built for a CUDA the driver runs, or (data
centre GPUs) add the CUDA forward-compatibility package to the image.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.gpu import FULL_MINIMUM_DRIVER, MINOR_COMPAT_DRIVER, PADDLE_INDEX_TAG, gpu_wheel, version_tuple, wheel_label
from paddle_doctor.registry import Check

RULE = "PD-GPU-001"


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
    runs = [cuda_major for cuda_major, least in MINOR_COMPAT_DRIVER.items() if driver >= version_tuple(least)]
    evidence = {"driver": driver_text, "driver_cuda": gpu.cuda_driver_version, "wheel_cuda": f"{major}.{minor}",
                "required_driver": full or floor, "minor_compat_driver": floor,
                "index_tag": PADDLE_INDEX_TAG.get(max(runs, default=11), "cu118"),
                "compat_package": f"{major}-{minor}"}
    if driver < version_tuple(floor):
        needs = f"{floor} for any CUDA {major}.x" + (f", {full} for all of {cuda}" if full else "")
        return [Finding(RULE, Status.FAIL, f"driver {driver_text} is too old for the {cuda} wheel (it needs {needs})",
                        observed=f"driver {driver_text}" + (f" (CUDA {gpu.cuda_driver_version})" if gpu.cuda_driver_version else ""),
                        expected=f"driver >= {floor}", evidence=evidence)]
    if full and driver < version_tuple(full):
        return [passed(RULE, f"driver {driver_text} runs the {cuda} wheel through minor-version compatibility "
                             f"(>= {floor} for CUDA {major}.x); {full} would give every {cuda} feature, "
                             "such as JIT of newer PTX", **evidence)]
    return [passed(RULE, f"driver {driver_text} meets the minimum for the {cuda} wheel ({full or floor})", **evidence)]


CHECK = Check(name="gpu_driver", rules=(RULE,), run=check)
