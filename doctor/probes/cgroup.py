"""The container's CPU and memory limits from cgroup v1 or v2.

The process's cgroup comes from /proc/self/cgroup and is located under the cgroup mount found in
/proc/self/mountinfo (its root field strips the part of the path hidden from the container).
Quotas and memory limits are taken as the tightest along the path up to the mount, because a
limit set on a parent (a Kubernetes pod) binds the container as well.
"""

from __future__ import annotations

import posixpath

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
    cgroup, memory = CgroupFacts(version=version), MemoryFacts()
    if version == 2:
        _read_v2(reader, mounts, memberships, cgroup, memory)
    elif version == 1:
        _read_v1(reader, mounts, memberships, cgroup, memory)
    else:
        reader.note("cgroup", DEFAULT_MOUNT, "no cgroup filesystem found")
    shm = mount_for(mounts, "/dev/shm")
    if shm is not None and shm.mountpoint == "/dev/shm":
        memory.shm_bytes = option_size_bytes(shm.super_options) or option_size_bytes(shm.options)
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


def _read_v2(reader: Reader, mounts, memberships, cgroup: CgroupFacts, memory: MemoryFacts) -> None:
    mount = next((m for m in mounts if m.fstype == "cgroup2"), None)
    directory, top = _locate(reader, mount, memberships.get(""), DEFAULT_MOUNT)
    cgroup.cpu_dir = directory
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
            _keep_tighter_quota(cgroup, int(fields[0]), int(fields[1]), path)
        elif cgroup.period_us is None:
            cgroup.period_us = int(fields[1])
    _read_cpuset(reader, cgroup, [f"{directory}/cpuset.cpus.effective"])
    _read_cpu_stat(reader, cgroup, f"{_quota_dir(cgroup, directory)}/cpu.stat", throttled_key="throttled_usec", scale=1)
    for level in _ancestors(directory, top):
        path = f"{level}/memory.max"
        text = reader.text("cgroup", path, required=False)
        if text is None or text.strip() == "max":
            continue
        try:
            _keep_tighter_memory(memory, int(text.strip()), path)
        except ValueError:
            reader.note("cgroup", path, f"expected a byte count or 'max', found {text.strip()[:40]!r}")
    memory.usage_bytes = reader.integer("cgroup", f"{directory}/memory.current", required=False)


def _read_v1(reader: Reader, mounts, memberships, cgroup: CgroupFacts, memory: MemoryFacts) -> None:
    directory, top = _locate(reader, _v1_mount(mounts, "cpu"), memberships.get("cpu"), f"{DEFAULT_MOUNT}/cpu")
    cgroup.cpu_dir = directory
    for level in _ancestors(directory, top):
        quota = reader.integer("cgroup", f"{level}/cpu.cfs_quota_us", required=False)
        period = reader.integer("cgroup", f"{level}/cpu.cfs_period_us", required=False)
        if period and cgroup.period_us is None:
            cgroup.period_us = period
        if quota is not None and quota > 0 and period:
            _keep_tighter_quota(cgroup, quota, period, f"{level}/cpu.cfs_quota_us")
    cpuset_dir, _ = _locate(reader, _v1_mount(mounts, "cpuset"), memberships.get("cpuset"), f"{DEFAULT_MOUNT}/cpuset")
    _read_cpuset(reader, cgroup, [f"{cpuset_dir}/cpuset.effective_cpus", f"{cpuset_dir}/cpuset.cpus"])
    _read_cpu_stat(reader, cgroup, f"{_quota_dir(cgroup, directory)}/cpu.stat", throttled_key="throttled_time", scale=1000)
    mem_dir, mem_top = _locate(reader, _v1_mount(mounts, "memory"), memberships.get("memory"), f"{DEFAULT_MOUNT}/memory")
    for level in _ancestors(mem_dir, mem_top):
        path = f"{level}/memory.limit_in_bytes"
        limit = reader.integer("cgroup", path, required=False)
        if limit is not None and limit < V1_UNLIMITED:
            _keep_tighter_memory(memory, limit, path)
    memory.usage_bytes = reader.integer("cgroup", f"{mem_dir}/memory.usage_in_bytes", required=False)


def _quota_dir(cgroup: CgroupFacts, directory: str) -> str:
    """Throttling is counted where the binding quota is set (a pod's quota throttles the pod)."""
    return posixpath.dirname(cgroup.quota_file) if cgroup.quota_file else directory


def _keep_tighter_quota(cgroup: CgroupFacts, quota: int, period: int, path: str) -> None:
    if period <= 0:
        return
    if cgroup.quota_us is None or quota / period < cgroup.quota_us / (cgroup.period_us or period):
        cgroup.quota_us, cgroup.period_us, cgroup.quota_file = quota, period, path


def _keep_tighter_memory(memory: MemoryFacts, limit: int, path: str) -> None:
    if memory.limit_bytes is None or limit < memory.limit_bytes:
        memory.limit_bytes, memory.limit_file = limit, path


def _read_cpuset(reader: Reader, cgroup: CgroupFacts, candidates: list[str]) -> None:
    for path in candidates:
        text = reader.text("cgroup", path, required=False)
        if text is None or not text.strip():
            continue
        try:
            cgroup.cpuset, cgroup.cpuset_file = parse_cpu_list(text), path
        except ValueError:
            reader.note("cgroup", path, f"not a CPU list: {text.strip()[:40]!r}")
        return


def _read_cpu_stat(reader: Reader, cgroup: CgroupFacts, path: str, throttled_key: str, scale: int) -> None:
    text = reader.text("cgroup", path, required=False)
    if text is None:
        return
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            values[parts[0]] = int(parts[1])
    if "nr_periods" not in values or "nr_throttled" not in values:
        reader.note("cgroup", path, "no nr_periods / nr_throttled counters in it")
        return
    cgroup.nr_periods, cgroup.nr_throttled = values["nr_periods"], values["nr_throttled"]
    if throttled_key in values:
        cgroup.throttled_usec = values[throttled_key] // scale
