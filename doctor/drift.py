"""Live cheap facts against the baseline: what must have stayed true since the container started.

Each comparison is an :class:`Invariant`; the healthcheck is unhealthy when one does not hold.
Throttling is judged over the CFS periods since the baseline, not since the cgroup was created, so
a container throttled during its start-up is not unhealthy for the rest of its life.
"""

from __future__ import annotations

from dataclasses import dataclass

from .baseline import Baseline, cache_record, gpu_nodes, read_installed, size_text
from .budget import cpu_budget, service_threads
from .context import ProbeContext
from .facts import Facts

THROTTLED_LIMIT = 0.05  # share of the CFS periods since the baseline in which the quota throttled us
MIN_PERIODS = 10  # fewer periods since the baseline say nothing about throttling


@dataclass
class Invariant:
    """One comparison of a live fact with the baseline."""

    name: str
    ok: bool
    message: str
    rule: str | None = None


def compare(baseline: Baseline, facts: Facts, ctx: ProbeContext) -> list[Invariant]:
    """Live cheap facts against the baseline: what must have stayed true."""
    return [
        _compare_cpu(baseline, facts),
        _compare_throttling(baseline, facts),
        _compare_memory(baseline, facts),
        *([_compare_gpu(baseline, facts)] if baseline.gpu else []),
        *([_compare_cache(baseline, facts)] if baseline.cache else []),
        *([_compare_paddle(baseline, ctx)] if baseline.paddle.metadata_file else []),
    ]


def _compare_cpu(baseline: Baseline, facts: Facts) -> Invariant:
    budget = cpu_budget(facts)
    total = service_threads(facts)[0] * facts.service.instances
    if budget is None:
        return Invariant("cpu_budget", False, "cannot establish the CPU budget now (no cgroup, cpuset or CPU count readable)", "PD-CPU-010")
    before = baseline.cpu.budget_cpus
    # as PD-CPU-010 judges it: in whole CPUs, one thread being the least a service runs
    if before is not None and budget.cpus < before and total > budget.whole_cpus:
        return Invariant("cpu_budget", False, f"cpu budget shrank from {before:g} to {budget.describe()}, "
                         f"below {total} threads", "PD-CPU-010")
    return Invariant("cpu_budget", True, cpu_summary(facts, before), "PD-CPU-010")


def _compare_throttling(baseline: Baseline, facts: Facts) -> Invariant:
    before, now = baseline.throttling, facts.cgroup
    if None in (before.nr_periods, before.nr_throttled, now.nr_periods, now.nr_throttled):
        return Invariant("throttling", True, "no throttling counters to compare", "PD-CPU-012")
    periods, throttled = now.nr_periods - before.nr_periods, now.nr_throttled - before.nr_throttled
    if periods < 0 or throttled < 0:
        return Invariant("throttling", False, "throttling counters went backwards since the baseline (another cgroup); "
                         "re-create the baseline", "PD-CPU-012")
    if periods < MIN_PERIODS:
        judged = "not throttled" if not throttled else f"throttled in {throttled} of them, too few to judge"
        return Invariant("throttling", True, f"{periods} CPU quota periods since baseline, {judged}", "PD-CPU-012")
    ratio = throttled / periods
    if ratio >= THROTTLED_LIMIT:
        return Invariant("throttling", False, f"throttled in {ratio:.1%} of {periods} CPU periods since baseline "
                         f"(limit {THROTTLED_LIMIT:.0%})", "PD-CPU-012")
    return Invariant("throttling", True, f"throttled {ratio:.1%} of {periods} periods since baseline", "PD-CPU-012")


def _compare_memory(baseline: Baseline, facts: Facts) -> Invariant:
    before, now = baseline.memory.limit_bytes, facts.memory.limit_bytes
    if now is not None and (before is None or now < before):
        return Invariant("memory_limit", False, f"memory limit lowered from {size_text(before)} to {size_text(now)} since baseline")
    return Invariant("memory_limit", True, f"memory limit {size_text(now)}" + (" (raised since baseline)" if now != before else ""))


def _compare_gpu(baseline: Baseline, facts: Facts) -> Invariant:
    """A GPU service must see a GPU, keep the ``/dev/nvidiaN`` nodes it started with, and keep the
    kernel driver its CUDA libraries were loaded against (after an upgrade under the running
    container CUDA fails with "driver/library version mismatch"). What this cannot see: a GPU
    that fell off the bus keeps its node; only NVML, which the healthcheck does not call, tells."""
    before, driver, nodes = baseline.gpu, facts.gpu.kernel_driver, gpu_nodes(facts)
    if not nodes:
        lost = f" (baseline: {', '.join(before.device_nodes)})" if before.device_nodes else ""
        return Invariant("gpu", False, f"the GPU service sees no GPU: no /dev/nvidiaN in the container{lost}", "PD-GPU-003")
    gone = sorted(set(before.device_nodes) - set(nodes))
    if gone:
        return Invariant("gpu", False, f"GPU gone since baseline: {', '.join(gone)} no longer present", "PD-GPU-003")
    same_boot = None in (before.boot_id, facts.host.boot_id) or before.boot_id == facts.host.boot_id
    if not same_boot:
        return Invariant("gpu", True, f"{', '.join(nodes)} with driver {driver or 'unknown'}; the baseline is from another "
                         "boot of the host (image build, or before a reboot), so the driver is not compared: "
                         "record the baseline in the entrypoint", "PD-GPU-003")
    if before.kernel_driver and driver is None:
        return Invariant("gpu", False, f"the NVIDIA kernel driver {before.kernel_driver} is no longer loaded "
                         "(/proc/driver/nvidia/version is gone)", "PD-GPU-007")
    if before.kernel_driver and driver != before.kernel_driver:
        return Invariant("gpu", False, f"NVIDIA driver changed from {before.kernel_driver} to {driver} since baseline: "
                         "the container's CUDA libraries no longer match it; restart the container", "PD-GPU-007")
    return Invariant("gpu", True, f"{', '.join(nodes)} with driver {driver or 'unknown'} as at baseline", "PD-GPU-003")


def _compare_cache(baseline: Baseline, facts: Facts) -> Invariant:
    before, now = baseline.cache, cache_record(facts)
    where = f"cache {before.path}"
    if now is None or now.path != before.path:
        return Invariant("cache", False, f"the service no longer uses {where} (its config changed since baseline); "
                         "re-create the baseline")
    if now.error:
        return Invariant("cache", False, now.error, "PD-TRT-003")
    if before.exists and not now.exists:
        return Invariant("cache", False, f"{where} is gone (baseline: {before.files} files, {before.engines} engines)", "PD-TRT-001")
    if before.engines and not now.engines:
        return Invariant("cache", False, f"{where} lost its {before.engines} TensorRT engines", "PD-TRT-001")
    if before.files and not now.files:
        return Invariant("cache", False, f"{where} was emptied (baseline: {before.files} files)", "PD-START-001")
    if before.persisted and not now.persisted:
        return Invariant("cache", False, f"{where} is no longer on its volume ({before.mountpoint}, {before.fstype}); "
                         f"now on {now.fstype}", "PD-TRT-002")
    return Invariant("cache", True, f"{where}: {now.files} files, {now.engines} engines" if now.exists else f"{where} absent, as at baseline")


def _compare_paddle(baseline: Baseline, ctx: ProbeContext) -> Invariant:
    before = baseline.paddle
    now, problem = read_installed(ctx, before.metadata_file)
    if now != before.installed:
        return Invariant("paddle_build", False, f"Paddle build changed since baseline: was {before.installed}, now {now or problem}")
    return Invariant("paddle_build", True, f"{now} as at baseline")


def cpu_summary(facts: Facts, before: float | None = None) -> str:
    """'cpu budget 2 >= 2 threads', with the baseline's budget when it differs."""
    budget = cpu_budget(facts)
    total = service_threads(facts)[0] * facts.service.instances
    if budget is None:
        return f"{total} threads, cpu budget unknown"
    changed = f" (was {before:g} at baseline)" if before is not None and budget.cpus != before else ""
    below_one = " (a quota below one CPU: PD-CPU-016)" if budget.cpus < 1 else ""
    return f"cpu budget {budget.cpus:g} {'>=' if budget.cpus >= total else '<'} {total} threads{below_one}{changed}"
