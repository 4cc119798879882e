"""How busy the machine was while the races ran, and how far the baseline differs from itself.

CPU time is read before and after every race: /proc/stat's counters for the CPUs the worker may
run on, the worker's and the doctor's own CPU time (/proc/PID/stat) and the cgroup's throttling
(cpu.stat). What those CPUs spent neither idle nor on the doctor went to other processes (other
containers, the live service in the same container, a neighbour's build); of that, the live
service's own share is told apart where its process is readable here (the process probe's pid:
/proc/PID/stat sums its threads, the busy ones the probe counts among them); steal is time the
hypervisor gave to other machines. The counters are read after every round, so each race knows
how busy the machine was while it ran (``CpuShare.busy``).

A/A: every round runs the baseline twice, first and last (A B B A). The ratio of its two halves
is an A/A comparison. Its interval is as wide as the machine is noisy (and so is every
comparison's, which is why a busy machine decides less and its races run on within --budget);
where it excludes 1, the baseline differs from itself by that much (drift, order effects), and
no effect smaller than that difference (or than --min-effect) is decided: the noise floor.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from ..base.cpus import parse_cpu_list
from ..facts.verification import BUSY_SHARE, MIN_ROUNDS, ComparisonResult, MachineNoise
from ..probes.common import Reader
from ..probes.context import ProbeContext

STEAL_FIELD, IDLE_FIELDS = 7, (3, 4)  # /proc/stat: user nice system idle iowait irq softirq steal ...


@dataclass(frozen=True)
class CpuCounters:
    """Clock ticks of the CPUs measured on (all states, idle, steal), of the measuring processes and
    of the live service (None where it is not read), and the cgroup's throttled microseconds (None
    without counters)."""

    total: int
    idle: int
    steal: int
    measuring: int
    throttled_us: int | None
    service: int | None = None


def cpu_ticks(proc_stat: str, cpus: set[int]) -> tuple[int, int, int]:
    """(all, idle, steal) ticks of ``cpus`` from the text of /proc/stat."""
    total = idle = steal = 0
    for line in proc_stat.splitlines():
        name, _, values = line.partition(" ")
        if not name.startswith("cpu") or not name[3:].isdigit() or int(name[3:]) not in cpus:
            continue
        ticks = [int(value) for value in values.split()[:8]]
        total += sum(ticks)
        idle += sum(ticks[i] for i in IDLE_FIELDS)
        steal += ticks[STEAL_FIELD] if len(ticks) > STEAL_FIELD else 0
    return total, idle, steal


def process_ticks(pid_stat: str) -> int:
    """User and system ticks of a process, all its threads, from the text of /proc/PID/stat."""
    fields = pid_stat.rpartition(")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime, stime: fields 14 and 15, the name and pid are cut off


class CpuMeter:
    """Reads the counters for a worker process and the doctor itself (``own_pid``) under ``root``,
    and the live service's (``service_pid``) where one is given."""

    def __init__(self, worker_pid: int, root: str = "/", own_pid: int | None = None, service_pid: int | None = None):
        self.root = root
        self.reader = Reader(ProbeContext(root))
        self.pids = (worker_pid, own_pid or os.getpid())
        self.service_pid = service_pid
        status = self.reader.text("noise", f"/proc/{worker_pid}/status", required=False) or ""
        allowed = next((line.split(":", 1)[1].strip() for line in status.splitlines() if line.startswith("Cpus_allowed_list:")), "")
        self.cpus = set(parse_cpu_list(allowed)) if allowed else set(range(os.cpu_count() or 1))

    def read(self) -> CpuCounters | None:
        from .load import read_throttling

        stat = self.reader.text("noise", "/proc/stat", required=False)
        processes = [text for pid in self.pids if (text := self.reader.text("noise", f"/proc/{pid}/stat", required=False))]
        if not stat or len(processes) < len(self.pids):
            return None
        total, idle, steal = cpu_ticks(stat, self.cpus)
        throttling = read_throttling(self.root)
        service = self.reader.text("noise", f"/proc/{self.service_pid}/stat", required=False) if self.service_pid else None
        return CpuCounters(total, idle, steal, sum(process_ticks(text) for text in processes),
                           throttling[2] if throttling else None, process_ticks(service) if service else None)


@dataclass
class CpuShare:
    """Clock ticks over the races so far: all, spent by other processes (``service`` of them by the
    live service, None where it was not read), stolen; throttled µs."""

    total: int = 0
    others: int = 0
    steal: int = 0
    throttled_us: int | None = None
    service: int | None = None

    def add(self, before: CpuCounters | None, after: CpuCounters | None) -> None:
        if before is None or after is None or after.total <= before.total:
            return
        busy = (after.total - after.idle) - (before.total - before.idle)
        steal = after.steal - before.steal
        measuring = after.measuring - before.measuring
        others = max(0, busy - steal - measuring)
        self.total += after.total - before.total
        self.steal += steal
        self.others += others
        if before.throttled_us is not None and after.throttled_us is not None:
            self.throttled_us = (self.throttled_us or 0) + after.throttled_us - before.throttled_us
        if before.service is not None and after.service is not None:
            # the service's threads may run on CPUs the worker may not: only as much as went to others here
            self.service = (self.service or 0) + min(others, max(0, after.service - before.service))

    @property
    def busy(self) -> bool:
        """Whether other processes took at least BUSY_SHARE of the CPU time counted."""
        return bool(self.total) and self.others / self.total >= BUSY_SHARE

    @property
    def others_share(self) -> float | None:
        """The share of the CPU time counted that other processes took; None where none was counted."""
        return round(self.others / self.total, 4) if self.total else None


def noise_floor(aa: ComparisonResult | None, min_effect: float) -> float:
    """The smallest effect a verdict may decide: --min-effect, or, when the baseline measurably differs
    from itself (its A/A interval excludes 1: drift or order effects within the rounds), that difference."""
    if aa is None or aa.rounds < MIN_ROUNDS or aa.ci_low <= 1.0 <= aa.ci_high:
        return min_effect
    return max(min_effect, max(aa.ratio, 1.0 / aa.ratio) - 1.0)


def machine_noise(share: CpuShare, aa: ComparisonResult | None, min_effect: float) -> MachineNoise:
    ticks = share.total or None
    return MachineNoise(
        others_share=share.others_share,
        steal_share=round(share.steal / ticks, 4) if ticks else None,
        throttled_s=round(share.throttled_us / 1e6, 3) if share.throttled_us is not None else None,
        aa=aa, floor=round(noise_floor(aa, min_effect), 4),
        service_share=round(share.service / ticks, 4) if ticks and share.service is not None else None)
