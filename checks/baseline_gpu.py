"""Baseline, GPU: does a GPU service still see the GPUs and the kernel driver it started with?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.facts.baseline import BaselineGpu
from paddle_doctor.facts.pinned import gpu_nodes
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check, Need, baseline_of

GPU_LOST, DRIVER_CHANGED = "PD-HEALTH-004", "PD-HEALTH-005"


def check(facts: Facts) -> list[Finding]:
    before = baseline_of(facts).gpu
    if before is None:
        return [skipped(rule, "the baseline records no GPU service") for rule in (GPU_LOST, DRIVER_CHANGED)]
    return [gpus_finding(facts, before), driver_finding(facts, before)]


def gpus_finding(facts: Facts, before: BaselineGpu) -> Finding:
    nodes = gpu_nodes(facts)
    if not nodes:
        lost = f" (baseline: {', '.join(before.device_nodes)})" if before.device_nodes else ""
        return Finding(GPU_LOST, Status.FAIL, f"the GPU service sees no GPU: no /dev/nvidiaN in the container{lost}")
    gone = sorted(set(before.device_nodes) - set(nodes))
    if gone:
        return Finding(GPU_LOST, Status.FAIL, f"GPU gone since baseline: {', '.join(gone)} no longer present")
    return passed(GPU_LOST, f"{', '.join(nodes)} as at baseline")


def driver_finding(facts: Facts, before: BaselineGpu) -> Finding:
    driver = facts.gpu.kernel_driver
    if None not in (before.boot_id, facts.host.boot_id) and before.boot_id != facts.host.boot_id:
        return passed(DRIVER_CHANGED, f"driver {driver or 'unknown'}; the baseline is from another boot of the host (image "
                                      "build, or before a reboot), so the driver is not compared: record the baseline in the entrypoint")
    if before.kernel_driver and driver is None:
        return Finding(DRIVER_CHANGED, Status.FAIL, f"the NVIDIA kernel driver {before.kernel_driver} is no longer loaded "
                                                    "(/proc/driver/nvidia/version is gone)")
    if before.kernel_driver and driver != before.kernel_driver:
        return Finding(DRIVER_CHANGED, Status.FAIL, f"NVIDIA driver changed from {before.kernel_driver} to {driver} since "
                                                    "baseline: the container's CUDA libraries no longer match it; restart the container",
                       observed=f"driver {driver}", expected=f"driver {before.kernel_driver}, as at baseline")
    return passed(DRIVER_CHANGED, f"driver {driver or 'unknown'} as at baseline")


CHECK = Check(name="baseline_gpu", rules=(GPU_LOST, DRIVER_CHANGED), run=check, requires=(Need.BASELINE,))
