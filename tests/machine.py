"""What a test that judges live timings assumes of the machine, observed while it measures.

A verdict measured on this machine (improved, regressed, no measurable effect, a gain in the summary,
a recommendation) holds only where the test's processes have the CPUs the case needs, the CPU can
run oneDNN, and nothing else takes the CPUs meanwhile. ``observed`` records those conditions around a
measurement; ``skip_unless`` skips a test whose assumptions they do not meet, saying which and why.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

# A busy loop that gets less of a CPU than this is sharing it: its timings say more about the neighbours.
LEAST_CPU_SHARE = 0.9
SHARE_PROBE_SECONDS = 0.3


@dataclass(frozen=True)
class Conditions:
    """The machine around one measurement: the worst of what was seen before and after it."""

    cpus: float  # CPUs this process may use: its affinity, capped by the cgroup's quota
    cpu_share: float  # the least share of a CPU that each of as many busy loops as CPUs got at once
    avx2: bool  # Paddle turns oneDNN off without AVX2

    def worst(self, other: Conditions) -> Conditions:
        return Conditions(min(self.cpus, other.cpus), min(self.cpu_share, other.cpu_share), self.avx2 and other.avx2)


def usable_cpus() -> float:
    cpus = float(len(os.sched_getaffinity(0)))
    try:
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()
    except (OSError, ValueError):
        return cpus
    return cpus if quota == "max" else min(cpus, int(quota) / int(period))


def cpu_share(loops: int, seconds: float = SHARE_PROBE_SECONDS) -> float:
    """The least share of a CPU that ``loops`` busy loops, run at once in processes of their own, each got."""
    readers = []
    for _ in range(loops):
        reader, writer = os.pipe()
        if os.fork() == 0:
            os.close(reader)
            os.write(writer, f"{_busy_share(seconds)}".encode())
            os._exit(0)
        os.close(writer)
        readers.append(reader)
    shares = []
    for reader in readers:
        with os.fdopen(reader) as pipe:
            shares.append(float(pipe.read() or 0))
        os.wait()
    return min(shares)


def _busy_share(seconds: float) -> float:
    wall_start, cpu_start = time.perf_counter(), time.process_time()
    while time.perf_counter() - wall_start < seconds:
        sum(range(1000))
    return (time.process_time() - cpu_start) / (time.perf_counter() - wall_start)


def has_avx2() -> bool:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(line.startswith("flags") and "avx2" in line.split() for line in text.splitlines())


def now() -> Conditions:
    cpus = usable_cpus()
    return Conditions(cpus=cpus, cpu_share=cpu_share(max(1, int(cpus))), avx2=has_avx2())


@dataclass
class Observation:
    conditions: Conditions  # before the block; once it has run, the worst of before and after


@contextmanager
def observed() -> Iterator[Observation]:
    """The machine's conditions around the block."""
    observation = Observation(now())
    yield observation
    observation.conditions = observation.conditions.worst(now())


def skip_unless(conditions: Conditions, cpus: int = 1, onednn: bool = False) -> None:
    """Skip the test, saying why, unless the measurement had ``cpus`` CPUs to itself (and AVX2 for oneDNN)."""
    if onednn and not conditions.avx2:
        pytest.skip("judges a oneDNN speed-up: needs a CPU with AVX2 (Paddle turns oneDNN off without it)")
    if conditions.cpus < cpus:
        pytest.skip(f"judges live timings: needs {cpus} CPUs for the test's processes, has {conditions.cpus:g}")
    if conditions.cpu_share < LEAST_CPU_SHARE:
        pytest.skip(f"judges live timings: busy loops on all {conditions.cpus:g} CPUs got only "
                    f"{conditions.cpu_share:.0%} of one each (needs {LEAST_CPU_SHARE:.0%}): other processes "
                    f"took the CPUs while it measured")
