"""GPU memory: does the service's memory pool fit its GPU's free memory, and do other processes hold that GPU?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Device
from paddle_doctor.facts import Facts, GpuDevice
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import describe, judged_gpu
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check, Need

MEMORY, SHARED = "PD-MEM-002", "PD-GPU-010"
MiB = 1024 * 1024
POOL_SHARE_OF_FREE = 0.8


@evidence
class PoolEvidence(Evidence):
    free_mb: int
    total_mb: int
    pool_mb: int
    instances: int
    batch_size: int | None
    device_id: int
    suggested_pool_mb: int


@evidence
class SharedGpuEvidence(Evidence):
    pids: list[int]
    used_mb: int
    device_index: int


def check(facts: Facts) -> list[Finding]:
    device = judged_gpu(facts)
    if isinstance(device, str):
        return [skipped(rule, device) for rule in (MEMORY, SHARED)]
    return [memory_finding(facts, device), shared_finding(device)]


def memory_finding(facts: Facts, device: GpuDevice) -> Finding:
    service = facts.service
    if device.memory_free_bytes is None:
        return skipped(MEMORY, f"NVML did not give the memory of {describe(device)}")
    free_mb = device.memory_free_bytes // MiB
    total_mb = (device.memory_total_bytes or 0) // MiB
    pool = service.gpu_memory_pool_mb
    if pool is None:
        return passed(MEMORY, f"no memory_pool_init_size_mb given; {free_mb} of {total_mb} MiB free on {describe(device)}")
    need = pool * service.instances
    evidence = PoolEvidence(free_mb, total_mb, pool, service.instances, service.batch_size, service.gpu_device_id,
                            max(1, int(free_mb * POOL_SHARE_OF_FREE / service.instances)))
    per = f"{pool} MiB x {service.instances} instance{'s' if service.instances != 1 else ''}"
    mig = " (MIG is on: the service's slice has less)" if device.mig_mode else ""
    if need > free_mb:
        return Finding(MEMORY, Status.FAIL, f"the memory pools ({per} = {need} MiB) exceed the {free_mb} MiB free on {describe(device)}{mig}",
                       observed=f"{need} MiB reserved at start", expected=f"well under {free_mb} MiB, leaving room for batch {service.batch_size}",
                       evidence=evidence)
    return passed(MEMORY, f"the memory pools ({per} = {need} MiB) fit in the {free_mb} MiB free on {describe(device)}{mig}", evidence)


def shared_finding(device: GpuDevice) -> Finding:
    if device.processes is None:
        return skipped(SHARED, f"NVML did not list the processes on {describe(device)}")
    if not device.processes:
        return passed(SHARED, f"no other compute process runs on {describe(device)}")
    used = sum(process.used_memory_bytes or 0 for process in device.processes) // MiB
    pids = ", ".join(str(process.pid) for process in device.processes)
    count = len(device.processes)
    return Finding(SHARED, Status.WARN,
                   f"{count} compute process{'es' if count != 1 else ''} (host pids {pids}) hold {used} MiB on {describe(device)}; "
                   "if one of them is this service, that one is expected",
                   observed=f"{count} processes on the GPU", expected="the GPU to the service alone",
                   evidence=SharedGpuEvidence([p.pid for p in device.processes], used, device.index))


CHECK = Check(name="gpu_memory", rules=(MEMORY, SHARED), run=each_predictor(check, on=Device.GPU), requires=(Need.GPU_SERVICE,),
              evidence={MEMORY: PoolEvidence, SHARED: SharedGpuEvidence})
