"""A container filesystem the doctor cannot read (permissions, a symlink loop as --root): error
findings and an unhealthy line naming the path, never an internal error. Run as a non-root user
against real unreadable files, since root reads everything."""

import json
import shutil

import pytest
from conftest import fixture_root, run_doctor
from nonroot import needs_root, run_doctor_as_nobody, shared_tmp  # noqa: F401 (a fixture)

NESTED = "v2-shm-large-nested"  # the process's cgroup is three folders below the mount


@pytest.fixture
def locked_cgroup(shared_tmp):
    root = shared_tmp / "root"
    shutil.copytree(fixture_root(NESTED), root)
    for path in [root, *root.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    (root / "sys/fs/cgroup").chmod(0)
    return root


@needs_root
def test_an_unreadable_cgroup_is_an_error_finding_naming_the_path(locked_cgroup):
    result = run_doctor_as_nobody("--root", str(locked_cgroup), "--json", "--no-paddle")
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    budget = next(f for f in report["findings"] if f["rule_id"] == "PD-CPU-010")
    assert budget["status"] == "error"
    assert "cannot read /sys/fs/cgroup/kubepods.slice/pod1/ctr: Permission denied" in budget["message"]


@needs_root
def test_the_healthcheck_says_what_it_cannot_read(locked_cgroup):
    result = run_doctor_as_nobody("healthcheck", "--root", str(locked_cgroup))
    assert result.returncode == 1
    assert result.stdout.startswith("unhealthy: cannot read /sys/fs/cgroup/"), result.stdout
    assert "internal error" not in result.stdout


def test_a_symlink_loop_as_root_is_one_line_naming_it(tmp_path):
    """A root must be a folder (issue #20): a loop is refused in one line before anything is probed."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    result = run_doctor("--root", str(tmp_path / "a"), "--json")
    assert result.returncode == 2 and result.stdout == "", result.stderr
    assert result.stderr == (f"paddle-doctor: error: --root {tmp_path / 'a'}: cannot be looked at: Too many levels of symbolic links; "
                             "expected a folder (a container's file system mounted here, or / for this machine)\n")
    health = run_doctor("healthcheck", "--root", str(tmp_path / "a"))
    assert health.returncode == 1
    assert health.stdout.startswith(f"unhealthy: --root {tmp_path / 'a'}: cannot be looked at") and "symbolic links" in health.stdout


def test_an_unreadable_file_that_no_check_needs_leaves_the_healthcheck_healthy(tmp_path):
    root = tmp_path / "root"
    shutil.copytree(fixture_root(NESTED), root)
    boot_id = root / "proc/sys/kernel/random/boot_id"
    boot_id.parent.mkdir(parents=True, exist_ok=True)
    boot_id.mkdir()  # reading a folder fails with EISDIR: there, but not readable as a file
    result = run_doctor("healthcheck", "--root", str(root), "--json")
    assert json.loads(result.stdout)["healthy"], result.stdout
