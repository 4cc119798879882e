"""GPU memory: does the memory pool the service reserves fit in the free memory of its GPU, and do other
processes hold that GPU?

Paddle reserves ``memory_pool_init_size_mb`` (``enable_use_gpu``) at start in every predictor
process, so the pool times the instances must fit in the GPU's free memory, with room left for
the batch's activations. NVML lists the compute processes on the GPU; inside a container their
ids are the host's.
Why: a pool larger than the free memory fails at start or under load with out-of-memory; other
processes on the same GPU take its memory and time slices, so latency follows their load.
Fix: a smaller pool (``config.enable_use_gpu(<MB>, <device>)``) and ``enable_memory_optim()``;
a GPU (or MIG slice) of the service's own.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.gpu import describe, no_service_gpu, service_gpu
from paddle_doctor.per_predictor import each_predictor
from paddle_doctor.registry import Check, Need

MEMORY, SHARED = "PD-MEM-002", "PD-GPU-010"
MiB = 1024 * 1024
POOL_SHARE_OF_FREE = 0.8


def check(facts: Facts) -> list[Finding]:
    reason = no_service_gpu(facts)
    if reason:
        return [skipped(rule, reason) for rule in (MEMORY, SHARED)]
    return [memory_finding(facts), shared_finding(facts)]


def memory_finding(facts: Facts) -> Finding:
    device, service = service_gpu(facts), facts.service
    if device.memory_free_bytes is None:
        return skipped(MEMORY, f"NVML did not give the memory of {describe(device)}")
    free_mb = device.memory_free_bytes // MiB
    total_mb = (device.memory_total_bytes or 0) // MiB
    pool = service.gpu_memory_pool_mb
    if pool is None:
        return passed(MEMORY, f"no memory_pool_init_size_mb given; {free_mb} of {total_mb} MiB free on {describe(device)}")
    need = pool * service.instances
    evidence = {"free_mb": free_mb, "total_mb": total_mb, "pool_mb": pool, "instances": service.instances,
                "batch_size": service.batch_size, "device_id": service.gpu_device_id,
                "suggested_pool_mb": max(1, int(free_mb * POOL_SHARE_OF_FREE / service.instances))}
    per = f"{pool} MiB x {service.instances} instance{'s' if service.instances != 1 else ''}"
    mig = " (MIG is on: the service's slice has less)" if device.mig_mode else ""
    if need > free_mb:
        return Finding(MEMORY, Status.FAIL, f"the memory pools ({per} = {need} MiB) exceed the {free_mb} MiB free on {describe(device)}{mig}",
                       observed=f"{need} MiB reserved at start", expected=f"well under {free_mb} MiB, leaving room for batch {service.batch_size}",
                       evidence=evidence)
    return passed(MEMORY, f"the memory pools ({per} = {need} MiB) fit in the {free_mb} MiB free on {describe(device)}{mig}", **evidence)


def shared_finding(facts: Facts) -> Finding:
    device = service_gpu(facts)
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
                   evidence={"pids": [p.pid for p in device.processes], "used_mb": used, "device_index": device.index})


CHECK = Check(name="gpu_memory", rules=(MEMORY, SHARED), run=each_predictor(check), requires=(Need.GPU_SERVICE,))
