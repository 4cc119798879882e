"""Integration: a real cgroup with a CPU quota, the doctor run inside it, the quota seen.

Creating cgroups needs root and a writable cgroup filesystem; where the test process may not,
the test is skipped and says why.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from paddle_doctor.probes.mounts import parse_mountinfo_line

QUOTA_US, PERIOD_US = 50000, 100000


def own_cgroup_dir() -> tuple[Path, int]:
    """The directory of this process's CPU cgroup, and the cgroup version."""
    mounts = [m for m in map(parse_mountinfo_line, Path("/proc/self/mountinfo").read_text().splitlines()) if m]
    memberships = {
        controller: line.split(":", 2)[2]
        for line in Path("/proc/self/cgroup").read_text().splitlines()
        for controller in line.split(":", 2)[1].split(",")
    }
    v1 = next((m for m in mounts if m.fstype == "cgroup" and "cpu" in m.super_options), None)
    if v1 is not None:
        relative = os.path.relpath(memberships["cpu"], v1.root)
        return Path(v1.mountpoint) / relative, 1
    v2 = next((m for m in mounts if m.fstype == "cgroup2"), None)
    if v2 is None:
        pytest.skip("no cgroup filesystem is mounted here")
    return Path(v2.mountpoint) / os.path.relpath(memberships[""], v2.root), 2


@pytest.fixture
def quota_cgroup():
    if os.geteuid() != 0:
        pytest.skip("creating a cgroup needs root; this test process is not root")
    parent, version = own_cgroup_dir()
    group = parent / f"paddle-doctor-test-{os.getpid()}"
    try:
        group.mkdir()
        if version == 1:
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(QUOTA_US))
        else:
            (group / "cpu.max").write_text(f"{QUOTA_US} {PERIOD_US}")
    except OSError as exc:
        if group.exists():
            group.rmdir()
        pytest.skip(f"cannot create a cgroup with a CPU quota under {parent}: {exc}")
    yield group
    group.rmdir()


def test_doctor_inside_a_real_quota_sees_it(quota_cgroup):
    script = f'echo $$ > "{quota_cgroup}/cgroup.procs" && exec "{sys.executable}" -m paddle_doctor "$@"'
    facts = subprocess.run(["sh", "-c", script, "sh", "facts", "--no-paddle"], capture_output=True, text=True, timeout=60)
    assert facts.returncode == 0, facts.stderr
    cgroup = json.loads(facts.stdout)["cgroup"]
    assert (cgroup["quota_us"], cgroup["period_us"]) == (QUOTA_US, PERIOD_US)
    assert cgroup["quota_file"].startswith(str(quota_cgroup))
    check = subprocess.run(["sh", "-c", script, "sh", "--json", "--no-paddle", "--threads", "2"],
                           capture_output=True, text=True, timeout=60)
    report = json.loads(check.stdout)
    assert report["host"]["cpu_budget"] == 0.5
    over = next(f for f in report["findings"] if f["rule_id"] == "PD-CPU-010")
    assert over["status"] == "fail" and "0.5 CPUs" in over["message"]
