"""Probes on recorded container roots: CPU, cgroup v1/v2 budget, memory, mounts, throttling."""

import pytest
from conftest import facts_from_root
from paddle_doctor.base.cpus import format_cpu_list, parse_cpu_list
from paddle_doctor.facts.budget import cpu_budget
from paddle_doctor.probes.mounts import parse_mountinfo_line

GiB = 1024**3


@pytest.mark.parametrize(
    "root, cgroup_version, budget, limited_by, memory_limit, shm",
    [
        ("intel-noavx2-v1-quota", 1, 2.0, "cgroup quota 200000/100000 µs", 4 * GiB, 64 * 1024**2),
        ("intel-avx512-v2-max", 2, 8.0, "cpuset 0-7", None, 64 * 1024**2),
        ("amd-avx512bf16-v2-quota", 2, 1.5, "cgroup quota 150000/100000 µs", 2 * GiB, 64 * 1024**2),
        ("arm-v2-cpuset", 2, 2.0, "cpuset 0-1", None, 64 * 1024**2),
        ("intel-noavx-v1-noquota", 1, 4.0, "cpuset 0-3", None, 64 * 1024**2),
        ("qemu-masked-v2-quota", 2, 2.0, "cgroup quota 200000/100000 µs", None, 64 * 1024**2),
        ("intel-spr-amx-v2-cpuset", 2, 2.0, "cpuset 2-3", 8 * GiB, 64 * 1024**2),
        ("v1-cpuset-0-1", 1, 2.0, "cpuset 0-1", None, 64 * 1024**2),
        ("v2-shm-large-nested", 2, 1.0, "cgroup quota 100000/100000 µs", None, GiB),
    ],
)
def test_budget_memory_and_shm(root, cgroup_version, budget, limited_by, memory_limit, shm):
    facts = facts_from_root(root)
    found = cpu_budget(facts)
    assert facts.cgroup.version == cgroup_version
    assert (found.cpus, found.limited_by.what) == (budget, limited_by)
    assert facts.memory.limit_bytes == memory_limit
    assert facts.memory.shm_bytes == shm
    assert facts.issues == []


def test_v1_quota_is_read_from_the_controller_mount_not_a_guessed_path():
    facts = facts_from_root("intel-noavx2-v1-quota")
    assert facts.cgroup.quota_file == "/sys/fs/cgroup/cpu,cpuacct/cpu.cfs_quota_us"
    assert (facts.cgroup.nr_periods, facts.cgroup.nr_throttled, facts.cgroup.throttled_usec) == (4821, 312, 18734502)


def test_v2_quota_on_a_parent_cgroup_binds_and_its_throttling_is_read_there():
    facts = facts_from_root("v2-shm-large-nested")
    assert facts.cgroup.cpu_dir == "/sys/fs/cgroup/kubepods.slice/pod1/ctr"
    assert facts.cgroup.quota_file == "/sys/fs/cgroup/kubepods.slice/pod1/cpu.max"
    assert (facts.cgroup.nr_periods, facts.cgroup.nr_throttled) == (8400, 1260)


def test_throttling_counters_v2():
    facts = facts_from_root("amd-avx512bf16-v2-quota")
    assert (facts.cgroup.nr_periods, facts.cgroup.nr_throttled, facts.cgroup.throttled_usec) == (12000, 3100, 95000000)


@pytest.mark.parametrize(
    "root, arch, model, must_have, must_lack",
    [
        ("intel-noavx2-v1-quota", "x86_64", "Intel(R) Xeon(R) CPU E5-2670 0 @ 2.60GHz", {"avx"}, {"avx2"}),
        ("intel-avx512-v2-max", "x86_64", None, {"avx2", "avx512f", "avx512_vnni", "hypervisor"}, {"avx512_bf16", "amx_bf16"}),
        ("amd-avx512bf16-v2-quota", "x86_64", None, {"avx512_bf16", "avx512f"}, {"amx_bf16"}),
        ("intel-spr-amx-v2-cpuset", "x86_64", None, {"amx_bf16", "amx_tile", "avx512_bf16"}, set()),
        ("intel-noavx-v1-noquota", "x86_64", None, {"sse4_2"}, {"avx", "avx2"}),
        ("arm-v2-cpuset", "aarch64", "ARM Neoverse-N1", {"asimd"}, {"avx"}),
    ],
)
def test_cpuinfo(root, arch, model, must_have, must_lack):
    cpu = facts_from_root(root).cpu
    assert cpu.arch == arch and cpu.source == "/proc/cpuinfo"
    if model:
        assert cpu.model_name == model
    assert must_have <= set(cpu.flags)
    assert not must_lack & set(cpu.flags)
    assert cpu.logical_cpus == len(cpu.online_cpus)


def test_garbage_files_become_issues_with_paths_not_exceptions():
    facts = facts_from_root("garbage-files")
    reasons = {issue.path: issue.reason for issue in facts.issues}
    assert reasons["/proc/cpuinfo"] == "file is empty"
    assert "not a number here" in reasons["/sys/fs/cgroup/cpu.max"]
    assert "banana" in reasons["/sys/fs/cgroup/memory.max"]
    assert "not text" in reasons["/sys/fs/cgroup/cpu.stat"]
    assert facts.cgroup.quota_us is None and facts.memory.limit_bytes is None


def test_missing_root_files_are_issues(tmp_path):
    from paddle_doctor.facts import ServiceConfig
    from paddle_doctor.probes import collect_facts
    from paddle_doctor.probes.context import ProbeContext

    facts = collect_facts(ProbeContext(tmp_path), ServiceConfig(), None, 5.0, environ={})
    assert any(issue.path == "/proc/cpuinfo" for issue in facts.issues)
    assert cpu_budget(facts) is None


def test_container_detection_from_cgroup_and_overlay():
    facts = facts_from_root("intel-noavx2-v1-quota")
    assert facts.container.detected and facts.container.runtime == "docker"
    assert "/ is on overlay" in facts.container.evidence


@pytest.mark.parametrize("text, cpus", [("0-3", [0, 1, 2, 3]), ("0,2,4-5\n", [0, 2, 4, 5]), ("", []), ("7", [7])])
def test_cpu_lists(text, cpus):
    assert parse_cpu_list(text) == cpus
    assert parse_cpu_list(format_cpu_list(cpus)) == cpus


@pytest.mark.parametrize("text", ["3-1", "a-b", "x"])
def test_bad_cpu_lists(text):
    with pytest.raises(ValueError):
        parse_cpu_list(text)


def test_mountinfo_escapes_and_optional_fields():
    line = r"36 35 98:0 /mnt1 /mnt/my\040cache rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue"
    mount = parse_mountinfo_line(line)
    assert mount.mountpoint == "/mnt/my cache" and mount.fstype == "ext3" and mount.root == "/mnt1"
    assert parse_mountinfo_line("garbage") is None
