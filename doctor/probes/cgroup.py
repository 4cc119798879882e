"""The container's CPU and memory limits from cgroup v1 or v2.

The process's cgroup comes from /proc/self/cgroup and is located under the cgroup mount found in
/proc/self/mountinfo (its root field strips the part of the path hidden from the container).
Quotas and memory limits are taken as the tightest along the path up to the mount, because a
limit set on a parent (a Kubernetes pod) binds the container as well.
"""

from __future__ import annotations

import posixpath
from dataclasses import replace

from ..base.cpus import parse_cpu_list
from ..facts import CgroupFacts, MemoryFacts, Mount
from ..facts.mounts import mount_for, option_size_bytes
from .common import Reader

SELF_CGROUP = "/proc/self/cgroup"
DEFAULT_MOUNT = "/sys/fs/cgroup"
V1_UNLIMITED = 1 << 62


def probe_cgroup(reader: Reader, mounts: list[Mount]) -> tuple[CgroupFacts, MemoryFacts]:
    memberships = _memberships(reader.text("cgroup", SELF_CGROUP, required=False) or "")
    version = _version(reader, mounts, memberships)
    if version == 2:
        cgroup, memory = _read_v2(reader, mounts, memberships)
    elif version == 1:
        cgroup, memory = _read_v1(reader, mounts, memberships)
    else:
        reader.note("cgroup", DEFAULT_MOUNT, "no cgroup filesystem found")
        cgroup, memory = CgroupFacts(version=version), MemoryFacts()
    shm = mount_for(mounts, "/dev/shm")
    if shm is not None and shm.mountpoint == "/dev/shm":
        memory = replace(memory, shm_bytes=option_size_bytes(shm.super_options) or option_size_bytes(shm.options))
    return cgroup, memory


def _memberships(text: str) -> dict[str, str]:
    """controller -> path; the v2 unified hierarchy is under the key ''."""
    found = {}
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(","):
            found[controller.removeprefix("name=")] = parts[2].strip()
    return found


def _v1_mount(mounts: list[Mount], controller: str) -> Mount | None:
    for mount in mounts:
        if mount.fstype == "cgroup" and controller in mount.super_options:
            return mount
    return None


def _version(reader: Reader, mounts: list[Mount], memberships: dict[str, str]) -> int | None:
    if mounts:
        if _v1_mount(mounts, "cpu") is not None:
            return 1
        if any(m.fstype == "cgroup2" for m in mounts):
            return 2
        return None
    if reader.path_test("cgroup", f"{DEFAULT_MOUNT}/cgroup.controllers"):
        return 2
    if reader.path_test("cgroup", f"{DEFAULT_MOUNT}/cpu") or reader.path_test("cgroup", f"{DEFAULT_MOUNT}/cpu,cpuacct"):
        return 1
    return None


def _locate(reader: Reader, mount: Mount | None, membership: str | None, fallback: str) -> tuple[str, str]:
    """(directory of this process's cgroup, the mount point above which we never walk)."""
    if mount is None:
        top = fallback
        root = "/"
    else:
        top, root = mount.mountpoint, mount.root
    path = membership or "/"
    if root != "/" and (path == root or path.startswith(root.rstrip("/") + "/")):
        path = path[len(root.rstrip("/")) :] or "/"
    directory = posixpath.normpath(posixpath.join(top, path.lstrip("/")))
    if not reader.path_test("cgroup", directory):
        directory = top
    return directory, top


def _ancestors(directory: str, top: str) -> list[str]:
    chain = [directory]
    while directory != top and directory.startswith(top):
        directory = posixpath.dirname(directory)
        chain.append(directory)
    return chain


Quota = tuple[int, int, str]  # (quota_us, period_us, the file that sets it)
Limit = tuple[int, str]  # (bytes, the file that sets it)


def _read_v2(reader: Reader, mounts, memberships) -> tuple[CgroupFacts, MemoryFacts]:
    mount = next((m for m in mounts if m.fstype == "cgroup2"), None)
    directory, top = _locate(reader, mount, memberships.get(""), DEFAULT_MOUNT)
    quota: Quota | None = None
    period: int | None = None  # of the first level that sets none, where no level sets a quota
    for level in _ancestors(directory, top):
        path = f"{level}/cpu.max"
        text = reader.text("cgroup", path, required=False)
        if text is None:
            continue
        fields = text.split()
        if len(fields) != 2 or not fields[1].isdigit() or not (fields[0] == "max" or fields[0].isdigit()):
            reader.note("cgroup", path, f"expected '<quota|max> <period>', found {text.strip()[:40]!r}")
            continue
        if fields[0] != "max":
            quota = _tighter_quota(quota, int(fields[0]), int(fields[1]), path)
        elif period is None:
            period = int(fields[1])
    cpuset = _read_cpuset(reader, [f"{directory}/cpuset.cpus.effective"])
    throttling = _read_cpu_stat(reader, f"{_quota_dir(quota, directory)}/cpu.stat", throttled_key="throttled_usec", scale=1)
    limit: Limit | None = None
    for level in _ancestors(directory, top):
        path = f"{level}/memory.max"
        text = reader.text("cgroup", path, required=False)
        if text is None or text.strip() == "max":
            continue
        try:
            limit = _tighter_limit(limit, int(text.strip()), path)
        except ValueError:
            reader.note("cgroup", path, f"expected a byte count or 'max', found {text.strip()[:40]!r}")
    usage = reader.integer("cgroup", f"{directory}/memory.current", required=False)
    return _cgroup(2, directory, quota, period, cpuset, throttling), _memory(limit, usage)


def _read_v1(reader: Reader, mounts, memberships) -> tuple[CgroupFacts, MemoryFacts]:
    directory, top = _locate(reader, _v1_mount(mounts, "cpu"), memberships.get("cpu"), f"{DEFAULT_MOUNT}/cpu")
    quota: Quota | None = None
    first_period: int | None = None
    for level in _ancestors(directory, top):
        level_quota = reader.integer("cgroup", f"{level}/cpu.cfs_quota_us", required=False)
        period = reader.integer("cgroup", f"{level}/cpu.cfs_period_us", required=False)
        if period and first_period is None:
            first_period = period
        if level_quota is not None and level_quota > 0 and period:
            quota = _tighter_quota(quota, level_quota, period, f"{level}/cpu.cfs_quota_us")
    cpuset_dir, _ = _locate(reader, _v1_mount(mounts, "cpuset"), memberships.get("cpuset"), f"{DEFAULT_MOUNT}/cpuset")
    cpuset = _read_cpuset(reader, [f"{cpuset_dir}/cpuset.effective_cpus", f"{cpuset_dir}/cpuset.cpus"])
    throttling = _read_cpu_stat(reader, f"{_quota_dir(quota, directory)}/cpu.stat", throttled_key="throttled_time", scale=1000)
    mem_dir, mem_top = _locate(reader, _v1_mount(mounts, "memory"), memberships.get("memory"), f"{DEFAULT_MOUNT}/memory")
    limit: Limit | None = None
    for level in _ancestors(mem_dir, mem_top):
        path = f"{level}/memory.limit_in_bytes"
        bytes_ = reader.integer("cgroup", path, required=False)
        if bytes_ is not None and bytes_ < V1_UNLIMITED:
            limit = _tighter_limit(limit, bytes_, path)
    usage = reader.integer("cgroup", f"{mem_dir}/memory.usage_in_bytes", required=False)
    return _cgroup(1, directory, quota, first_period, cpuset, throttling), _memory(limit, usage)


def _cgroup(version: int, directory: str, quota: Quota | None, period: int | None,
            cpuset: tuple[list[int], str] | None, throttling: tuple[int, int, int | None] | None) -> CgroupFacts:
    """The CPU facts read: the tightest quota (with its period, else the ``period`` found), the cpuset and the counters."""
    nr_periods, nr_throttled, throttled_usec = throttling or (None, None, None)
    return CgroupFacts(version=version, cpu_dir=directory, quota_us=quota[0] if quota else None,
                       period_us=quota[1] if quota else period, quota_file=quota[2] if quota else None,
                       cpuset=cpuset[0] if cpuset else None, cpuset_file=cpuset[1] if cpuset else None,
                       nr_periods=nr_periods, nr_throttled=nr_throttled, throttled_usec=throttled_usec)


def _memory(limit: Limit | None, usage: int | None) -> MemoryFacts:
    return MemoryFacts(limit_bytes=limit[0] if limit else None, limit_file=limit[1] if limit else None, usage_bytes=usage)


def _quota_dir(quota: Quota | None, directory: str) -> str:
    """Throttling is counted where the binding quota is set (a pod's quota throttles the pod)."""
    return posixpath.dirname(quota[2]) if quota else directory


def _tighter_quota(best: Quota | None, quota: int, period: int, path: str) -> Quota | None:
    if period <= 0:
        return best
    if best is None or quota / period < best[0] / best[1]:
        return quota, period, path
    return best


def _tighter_limit(best: Limit | None, limit: int, path: str) -> Limit:
    return (limit, path) if best is None or limit < best[0] else best


def _read_cpuset(reader: Reader, candidates: list[str]) -> tuple[list[int], str] | None:
    """The CPUs of the first candidate file that lists any, and that file."""
    for path in candidates:
        text = reader.text("cgroup", path, required=False)
        if text is None or not text.strip():
            continue
        try:
            return parse_cpu_list(text), path
        except ValueError:
            reader.note("cgroup", path, f"not a CPU list: {text.strip()[:40]!r}")
        return None
    return None


def _read_cpu_stat(reader: Reader, path: str, throttled_key: str, scale: int) -> tuple[int, int, int | None] | None:
    """(nr_periods, nr_throttled, the time throttled in microseconds) from a cpu.stat file; None where it has no counters."""
    text = reader.text("cgroup", path, required=False)
    if text is None:
        return None
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    if "nr_periods" not in values or "nr_throttled" not in values:
        reader.note("cgroup", path, "no nr_periods / nr_throttled counters in it")
        return None
    throttled = values[throttled_key] // scale if throttled_key in values else None
    return values["nr_periods"], values["nr_throttled"], throttled
