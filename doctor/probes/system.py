"""Host identity, container detection, process CPU affinity and the (redacted) environment."""

from __future__ import annotations

import os
import sys
from dataclasses import replace

from ..base.cpus import parse_cpu_list
from ..base.redact import redact_environment
from ..facts import ContainerFacts, HostFacts, Mount, ProcessFacts
from .common import Reader

CGROUP_MARKERS = {"kubepods": "kubernetes", "docker": "docker", "libpod": "podman", "containerd": "containerd", "lxc": "lxc"}
BOOT_ID = "/proc/sys/kernel/random/boot_id"


def probe_host(reader: Reader) -> HostFacts:
    hostname: str | None
    if reader.ctx.is_live:
        uname = os.uname()
        hostname, kernel, machine = uname.nodename, uname.release, uname.machine
    else:
        written = reader.text("host", "/etc/hostname", required=False)
        hostname, kernel, machine = written.strip() if written else None, None, None
    boot_id = (reader.text("host", BOOT_ID, required=False) or "").strip() or None
    return HostFacts(hostname=hostname, kernel=kernel, machine=machine, python=sys.version.split()[0], boot_id=boot_id)


def probe_container(reader: Reader, mounts: list[Mount], env: dict[str, str]) -> ContainerFacts:
    evidence: list[str] = []
    runtime = None
    if reader.path_test("container", "/.dockerenv"):
        evidence.append("/.dockerenv exists")
        runtime = "docker"
    if reader.path_test("container", "/run/.containerenv"):
        evidence.append("/run/.containerenv exists")
        runtime = "podman"
    if "KUBERNETES_SERVICE_HOST" in env:
        evidence.append("KUBERNETES_SERVICE_HOST is set")
        runtime = "kubernetes"
    for path in ("/proc/1/cgroup", "/proc/self/cgroup"):
        cgroup_text = reader.text("container", path, required=False) or ""
        marker = next((m for m in CGROUP_MARKERS if m in cgroup_text), None)
        if marker:
            evidence.append(f"{path} mentions {marker}")
            runtime = runtime or CGROUP_MARKERS[marker]
            break
    root = next((m for m in reversed(mounts) if m.mountpoint == "/"), None)
    if root is not None and root.fstype in ("overlay", "aufs", "fuse-overlayfs"):
        evidence.append(f"/ is on {root.fstype}")
    return ContainerFacts(detected=bool(evidence), runtime=runtime, evidence=evidence)


def probe_process(reader: Reader) -> ProcessFacts:
    facts = _affinity(reader)
    if reader.ctx.is_live:
        return replace(facts, euid=os.geteuid(), groups=sorted({os.getegid(), *os.getgroups()}))
    return facts


def _affinity(reader: Reader) -> ProcessFacts:
    text = reader.text("process", "/proc/self/status", required=False)
    if text is not None:
        for line in text.splitlines():
            if line.startswith("Cpus_allowed_list:"):
                try:
                    return ProcessFacts(parse_cpu_list(line.split(":", 1)[1]), "/proc/self/status")
                except ValueError:
                    reader.note("process", "/proc/self/status", f"bad Cpus_allowed_list: {line[:60]!r}")
                    return ProcessFacts()
    if reader.ctx.is_live and hasattr(os, "sched_getaffinity"):
        return ProcessFacts(sorted(os.sched_getaffinity(0)), "sched_getaffinity")
    return ProcessFacts()


def live_environment() -> dict[str, str]:
    return redact_environment(dict(os.environ))

