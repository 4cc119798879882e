"""The live process has the last word where it and the declared settings disagree: a process that
maps Paddle and no CUDA library runs on the CPU whatever the source says, and its busy threads are
its compute threads for PD-CPU-010/011 when no thread count is known. Table tests on the recorded
/proc trees (tests/fixtures/processes): fires / stays silent, and the report says which side won."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import FIXTURES, probe_process, report_json, run_doctor
from factories import by_rule, make_facts
from paddle_doctor.base.vocabulary import Device
from paddle_doctor.checks import cpu_budget
from paddle_doctor.facts import SourceFacts, SourceLocation, SourceSetting
from paddle_doctor.judge.gpu_support import uses_gpu
from paddle_doctor.judge.live_word import live_cpu, live_threads
from paddle_doctor.judge.registry import Need
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.service.resolve import resolve_service

PROCESSES = FIXTURES / "processes"
GPU_IN_SOURCE = SourceSetting(name="device", value="gpu", evaluated=True, location=SourceLocation("/srv/app.py", 6),
                              code="config.enable_use_gpu(500, 0)")
UNKNOWN_THREADS = SourceSetting(name="threads", value=None, evaluated=False, location=SourceLocation("/srv/app.py", 7),
                                code="config.set_cpu_math_library_num_threads(THREADS)")


def service_facts(tree: str, pid: int, settings=(), busy: int | None = None, **machine):
    """Facts of the process recorded in ``tree`` (its /proc/PID read by the real probe), with the source
    settings given and, where ``busy`` is given, the busy threads a live sample would have counted."""
    process = probe_process(ProbeContext(PROCESSES / tree), pid, sample_s=0)
    if busy is not None:
        process = dataclasses.replace(process, busy_threads=busy, sample_s=1.0)
    service, origins = resolve_service(source=SourceFacts(settings=list(settings)))
    return dataclasses.replace(make_facts(**machine), service_process=process, service=service, service_origins=origins)


@pytest.mark.parametrize("tree, pid, settings, on_gpu", [
    ("cpu-service", 5151, [GPU_IN_SOURCE], False),   # the source says GPU, the process maps no CUDA: the CPU
    ("one-service", 4242, [GPU_IN_SOURCE], True),    # the source says GPU, the process maps libcudart: the GPU
    ("cpu-service", 5151, [], False),                # nothing says GPU
])
def test_a_process_that_maps_no_cuda_library_runs_on_the_cpu_whatever_the_source_says(tree, pid, settings, on_gpu):
    facts = service_facts(tree, pid, settings)
    assert facts.service.device == (Device.GPU if settings else Device.CPU)
    assert uses_gpu(facts) is on_gpu
    said = live_cpu(facts)
    assert (said is None) is (tree == "one-service")
    if said and settings:
        assert "its live process 5151 maps Paddle and no CUDA library (/proc/5151/maps)" in said
        assert "device gpu (/srv/app.py:6 config.enable_use_gpu(500, 0))" in said and "the live process has the last word" in said


def test_the_gpu_checks_say_the_live_process_decided():
    said = Need.GPU_SERVICE.missing(service_facts("cpu-service", 5151, [GPU_IN_SOURCE]))
    assert said.startswith("the service runs on the CPU: its live process 5151 maps Paddle and no CUDA library")
    assert Need.GPU_SERVICE.missing(service_facts("one-service", 4242, [GPU_IN_SOURCE])) is None
    report = report_json(run_doctor("--root", str(PROCESSES / "cpu-service"), "--pid", "auto", "--json", "--no-paddle", "--no-gpu"))
    gpu = {f["rule_id"]: f for f in report["findings"] if f["check"] == "gpu_visibility"}
    assert gpu and all(f["status"] == "skip" and "the live process has the last word" in f["message"] for f in gpu.values())
    assert not any("a GPU service says device: gpu" in f["message"] for f in gpu.values())


@pytest.mark.parametrize("settings, busy, over, under, said", [
    # the source's count cannot be evaluated; 6 busy threads on 2 CPUs: over the budget
    ([UNKNOWN_THREADS], 6, "fail", "pass", "6 busy threads over 1 s in the live process 5151"),
    # the same with 1 busy thread on 4 CPUs: within it, and using at most half
    ([UNKNOWN_THREADS], 1, "pass", "warn", "1 busy threads over 1 s"),
    # not sampled (a recorded tree, or --root): the count stays unknown and both skip as before
    ([UNKNOWN_THREADS], None, "skip", "skip", None),
    # nothing sets the threads: the busy threads count instead of Paddle's default
    ([], 6, "fail", "pass", "no thread count is set anywhere"),
    # the source gives a count: it is judged, the busy threads do not replace it
    ([dataclasses.replace(UNKNOWN_THREADS, value=2, evaluated=True)], 6, "pass", "pass", None),
])
def test_busy_threads_count_for_the_budget_where_no_thread_count_is_known(settings, busy, over, under, said):
    cpus = 2 if over == "fail" or busy == 6 else 4
    facts = service_facts("cpu-service", 5151, settings, busy, cpuset=range(cpus))
    found = by_rule(cpu_budget.check(facts))
    assert (found["PD-CPU-010"].status, found["PD-CPU-011"].status) == (over, under)
    if said:
        finding = found["PD-CPU-010"] if over == "fail" else found["PD-CPU-011"]
        assert said in finding.observed and "the live process has the last word" in finding.observed
        assert finding.evidence["threads"] == busy
    if busy is None:
        assert "thread count is not known" in found["PD-CPU-010"].message


def test_live_threads_need_a_sample_with_busy_threads():
    assert live_threads(service_facts("cpu-service", 5151)) is None  # read under a root: no sample
    assert live_threads(service_facts("cpu-service", 5151, busy=0)) is None
    assert live_threads(service_facts("cpu-service", 5151, busy=3))[0] == 3
