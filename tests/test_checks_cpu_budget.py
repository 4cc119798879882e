"""PD-CPU-010/011/012/013/014: the CPU budget against threads, pools, throttling and binding."""

from dataclasses import replace

import pytest
from factories import by_rule, make_facts
from paddle_doctor.checks import core_binding, cpu_budget, cpu_quota, cpu_throttling, thread_pools
from paddle_doctor.facts import ProbeIssue, SettingOrigin
from paddle_doctor.judge.findings import Status


@pytest.mark.parametrize(
    "facts, over, under",
    [
        # 8 threads in a 2-CPU quota: oversubscribed
        (make_facts(quota=2, threads=8), "fail", "pass"),
        # 2 threads x 2 instances on a 1.5-CPU quota
        (make_facts(quota=1.5, threads=2, instances=2), "fail", "pass"),
        # the quota is fractional: 2 threads on 1.5 CPUs is already too many
        (make_facts(quota=1.5, threads=2), "fail", "pass"),
        # cpuset 0-1 limits, quota absent
        (make_facts(cpuset=[0, 1], threads=4), "fail", "pass"),
        # fits exactly
        (make_facts(quota=2, threads=2), "pass", "pass"),
        (make_facts(quota=4, threads=2, instances=2), "pass", "pass"),
        # Paddle's default of 1 thread on 8 CPUs: far below
        (make_facts(), "pass", "warn"),
        (make_facts(quota=4, threads=2), "pass", "warn"),
        # a 1-CPU budget can never be under-used by one thread
        (make_facts(quota=1), "pass", "pass"),
        # one thread is the least a service can run: a half-CPU quota is PD-CPU-016's finding, not this one
        (make_facts(quota=0.5, threads=1), "pass", "pass"),
        (make_facts(quota=0.5), "pass", "pass"),
        # but two instances of one thread each are still two threads on half a CPU
        (make_facts(quota=0.5, threads=1, instances=2), "fail", "pass"),
        (make_facts(quota=0.5, threads=8), "fail", "pass"),
    ],
)
def test_threads_against_budget(facts, over, under):
    found = by_rule(cpu_budget.check(facts))
    assert (found["PD-CPU-010"].status.value, found["PD-CPU-011"].status.value) == (over, under)


def test_oversubscription_names_budget_source_and_concrete_fix_values():
    facts = replace(make_facts(quota=1.5, threads=8, instances=1), service_origins=[SettingOrigin("threads", 8, "flag", "--threads")])
    found = by_rule(cpu_budget.check(facts))["PD-CPU-010"]
    assert found.observed == "8 threads (--threads) x 1 instance = 8"
    assert found.expected == "at most 1 in total"
    assert "cgroup quota 150000/100000" in found.message
    assert found.evidence["threads_per_instance"] == 1


def test_garbage_quota_file_makes_budget_an_error_with_path():
    facts = make_facts(threads=2)
    facts.issues.append(ProbeIssue("cgroup", "/sys/fs/cgroup/cpu.max", "expected '<quota|max> <period>', found 'x'"))
    found = cpu_budget.check(facts)
    assert {f.status for f in found} == {Status.ERROR}
    assert "/sys/fs/cgroup/cpu.max" in found[0].message


@pytest.mark.parametrize(
    "facts, status",
    [
        (make_facts(quota=2), "fail"),  # unset, OpenMP sees 8 CPUs in a 2-CPU quota
        (make_facts(quota=2, env={"OMP_NUM_THREADS": "8"}), "fail"),
        (make_facts(quota=2, env={"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "16"}), "fail"),
        (make_facts(quota=2, env={"OMP_NUM_THREADS": "two"}), "fail"),
        (make_facts(quota=2, env={"OMP_NUM_THREADS": "2"}), "pass"),
        (make_facts(quota=2, env={"OMP_NUM_THREADS": "2,1"}), "pass"),
        (make_facts(cpuset=[0, 1]), "pass"),  # OpenMP honours the affinity mask
        (make_facts(), "pass"),
    ],
)
def test_thread_pools(facts, status):
    (finding,) = thread_pools.check(facts)
    assert finding.status.value == status


@pytest.mark.parametrize(
    "throttled, status",
    [((1000, 300), "fail"), ((1000, 50), "fail"), ((1000, 3), "warn"), ((1000, 0), "pass"), ((0, 0), "pass"), (None, "skip")],
)
def test_throttling(throttled, status):
    (finding,) = cpu_throttling.check(make_facts(quota=2, throttled=throttled))
    assert finding.status.value == status


@pytest.mark.parametrize(
    "facts, status",
    [
        (make_facts(instances=2), "fail"),
        (make_facts(instances=2, env={"OMP_PROC_BIND": "close"}), "pass"),
        (make_facts(instances=2, env={"OMP_PROC_BIND": "false"}), "fail"),
        (make_facts(instances=2, affinity=[0, 1]), "pass"),
        (make_facts(instances=1), "pass"),
    ],
)
def test_core_binding(facts, status):
    (finding,) = core_binding.check(facts)
    assert finding.status.value == status


@pytest.mark.parametrize(
    "facts, status",
    [
        (make_facts(quota=0.5, threads=1), "fail"),
        (make_facts(quota=0.25), "fail"),
        (make_facts(quota=1), "pass"),
        (make_facts(quota=1.5, threads=8), "pass"),  # oversubscribed, but that is PD-CPU-010's
        (make_facts(), "pass"),  # no quota at all
        (make_facts(cpuset=[0]), "pass"),  # one CPU from a cpuset runs a thread at full speed
    ],
)
def test_quota_below_one_cpu(facts, status):
    (found,) = cpu_quota.check(facts)
    assert found.status.value == status
    if status == "fail":
        assert found.expected == "a quota of at least 1 CPU"
        assert f"{facts.cgroup.quota_us}/{facts.cgroup.period_us}" in found.observed


def test_half_cpu_quota_with_one_thread_reads_as_one_story():
    """PD-CPU-010 passes; PD-CPU-016 names the quota, with the period the thread is paused in."""
    facts = make_facts(quota=0.5, threads=1)
    over = by_rule(cpu_budget.check(facts))["PD-CPU-010"]
    (quota,) = cpu_quota.check(facts)
    assert over.status is Status.PASS and "1 compute threads fit" in over.message
    assert quota.status is Status.FAIL and "paused after 50 ms of every 100 ms period" in quota.message


def test_threads_read_from_the_source_are_named_with_their_line_and_variable_not_a_flag():
    where = "app.py:12 config.set_cpu_math_library_num_threads(THREADS); from INFER_THREADS (default 6, not set in /proc/9/environ)"
    facts = replace(make_facts(quota=2, threads=6), service_origins=[SettingOrigin("threads", 6, "source", where)])
    found = by_rule(cpu_budget.check(facts))["PD-CPU-010"]
    assert found.observed == f"6 threads ({where}) x 1 instance = 6" and found.evidence["threads_set_by"] == where
    facts = replace(facts, service_origins=[])  # hand-built facts say nothing of where: no flag is named
    assert "--threads" not in by_rule(cpu_budget.check(facts))["PD-CPU-010"].observed
