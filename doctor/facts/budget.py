"""The CPU budget: how many CPUs this container may really use, derived from Facts.

It is the smallest of the cgroup quota (quota / period), the cpuset, the process affinity and
the online CPUs. Paddle reads none of these; it uses whatever thread count it is given.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..base.cpus import format_cpu_list
from ..base.deferred import deferred_dataclass
from ..base.vocabulary import Effect, Experiment, Origin
from . import DeployedProcess, Facts
from .knobs import knob


@dataclass(frozen=True)
class Limit:
    """One limit on the CPUs this container may use, what it is and the file it was read from."""

    cpus: float
    what: str
    source: str | None = None


@dataclass(frozen=True)
class CpuBudget:
    """The CPUs this container may really use: the tightest of its limits, and all of them."""

    cpus: float
    limited_by: Limit
    limits: tuple[Limit, ...]
    visible_cpus: int | None

    @property
    def whole_cpus(self) -> int:
        """Threads that fit without oversubscription (at least 1)."""
        return max(1, int(self.cpus + 1e-9))

    def threads_per_instance(self, instances: int) -> int:
        """The most math threads each of ``instances`` predictors may run within the budget (at least 1)."""
        return max(1, self.whole_cpus // max(1, instances))

    def describe(self) -> str:
        return f"{self.cpus:g} CPUs ({self.limited_by.what})"


def cpu_budget(facts: Facts) -> CpuBudget | None:
    limits: list[Limit] = []
    group = facts.cgroup
    if group.quota_us and group.period_us:
        cpus = group.quota_us / group.period_us
        limits.append(Limit(cpus, f"cgroup quota {group.quota_us}/{group.period_us} µs", group.quota_file))
    if group.cpuset:
        limits.append(Limit(len(group.cpuset), f"cpuset {format_cpu_list(group.cpuset)}", group.cpuset_file))
    affinity = facts.process.affinity
    if affinity:
        limits.append(Limit(len(affinity), f"CPU affinity {format_cpu_list(affinity)}", facts.process.affinity_source))
    online = facts.cpu.online_cpus
    if online:
        limits.append(Limit(len(online), f"{len(online)} online CPUs", "/sys/devices/system/cpu/online"))
    elif facts.cpu.logical_cpus:
        limits.append(Limit(facts.cpu.logical_cpus, f"{facts.cpu.logical_cpus} CPUs in /proc/cpuinfo", facts.cpu.source))
    if not limits:
        return None
    tightest = min(limits, key=lambda limit: limit.cpus)
    visible = len(affinity) if affinity else (len(online) if online else facts.cpu.logical_cpus)
    return CpuBudget(tightest.cpus, tightest, tuple(limits), visible)


def deployed_workers(facts: Facts) -> list[DeployedProcess]:
    """The workers of the service's live deployment where it runs two or more (a preforking server, a
    pool of processes) and no flag or --config says how many instances it runs; empty otherwise."""
    declared = next((o for o in facts.service_origins if o.name == "instances" and o.value is not None), None)
    if declared is not None and declared.origin in (Origin.FLAG, Origin.CONFIG):
        return []
    workers = facts.service_process.workers()
    return workers if len(workers) > 1 else []


@deferred_dataclass(frozen=True)
class WorkerThreads:
    """The math threads the deployment's workers run at once, worker by worker (``each``, by ``pids``)."""

    pids: tuple[int, ...]
    each: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.each)

    def words(self) -> str:
        """``8 threads (2 workers × 4)``, or ``7 threads (2 workers: 4 + 3)`` where they differ."""
        count = len(self.each)
        if len(set(self.each)) == 1:
            return f"{self.total} threads ({count} workers × {self.each[0]})"
        return f"{self.total} threads ({count} workers: {' + '.join(map(str, self.each))})"


def worker_threads(facts: Facts, per_process: int, own: Callable[[DeployedProcess], int | None]) -> WorkerThreads | None:
    """The threads of each of the live deployment's workers: its ``own`` count (its record's, its busy
    threads), else ``per_process``, the count of the process read in depth; None where there are no workers."""
    workers = deployed_workers(facts)
    if not workers:
        return None
    return WorkerThreads(tuple(worker.pid for worker in workers), tuple(own(worker) or per_process for worker in workers))


def service_instances(facts: Facts) -> int:
    """The instances that compete for the budget: the live deployment's workers, else the instances declared."""
    return len(deployed_workers(facts)) or facts.service.instances


def advised_threads(facts: Facts) -> int | None:
    """The math threads per predictor every fix of the report advises, one number for them all: the
    recommended configuration's where measuring found one, else the count the threads experiment measured
    fastest where it confirmed one, else the CPU budget's share per instance; None where the budget is unknown."""
    budget = cpu_budget(facts)
    if budget is None:
        return None
    verification = facts.verification
    if verification is not None and verification.recommendation is not None:
        return verification.recommendation.config.threads
    experiment = verification.experiment(Experiment.THREADS) if verification is not None else None
    if experiment is not None and experiment.measured:
        threads = {arm.label: arm.config.threads for arm in experiment.arms}
        faster = [c for c in experiment.comparisons if c.verdict == Effect.IMPROVED and not c.changes_outputs and c.candidate in threads]
        if faster:
            return threads[max(faster, key=lambda c: c.ratio).candidate]
    return budget.threads_per_instance(service_instances(facts))


def service_threads(facts: Facts) -> tuple[int, str]:
    """Math threads per predictor and where that number comes from."""
    threads = facts.service.math_threads
    if facts.service.threads is not None:
        return threads, facts.said_by("threads") or "the service's setting"
    return threads, f"Paddle's default ({knob('threads').setter} not called)"
