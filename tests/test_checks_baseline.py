"""PD-HEALTH-001..007: the live facts against what the baseline recorded, each rule firing and staying
silent on hand-built facts; and the uniform skip of a check whose needs the facts lack."""

from __future__ import annotations

import dataclasses

import pytest
from factories import by_rule, make_facts, recorded_baseline, run_check
from paddle_doctor.checks import (
    baseline_cache,
    baseline_cpu_budget,
    baseline_gpu,
    baseline_memory,
    baseline_paddle,
    baseline_throttling,
)
from paddle_doctor.facts import GpuFacts, HostFacts, MemoryFacts, Mount, TrtCacheFacts
from paddle_doctor.facts.baseline import BaselineCache, BaselineGpu
from paddle_doctor.judge.registry import Check, Need

GPU = BaselineGpu(kernel_driver="535.104.05", device_nodes=["/dev/nvidia0"], nvml_driver=None, devices=[], boot_id="boot-1")
CACHE = BaselineCache("/cache/paddle", exists=True, files=3, engines=2, mountpoint="/cache", fstype="ext4")
VOLUME = Mount(mountpoint="/cache", fstype="ext4", source="/dev/vdb", root="/", options=["rw"], super_options=["rw"])
OVERLAY = Mount(mountpoint="/", fstype="overlay", source="overlay", root="/", options=["rw"], super_options=["rw"])


def live(baseline, **facts_options):
    """Live facts (2 CPUs by quota, 1 thread, throttled 0 of 1000 periods unless said) with this baseline."""
    options = {"quota": 2.0, "threads": 1, "throttled": (1000, 0), **facts_options}
    return dataclasses.replace(make_facts(**options), memory=MemoryFacts(limit_bytes=2 << 30, limit_file="/sys/fs/cgroup/memory.max"),
                               baseline=baseline)


def with_gpu(facts, nodes=("/dev/nvidia0", "/dev/nvidiactl"), driver="535.104.05", boot="boot-1"):
    return dataclasses.replace(facts, gpu=GpuFacts(device_nodes=list(nodes), kernel_driver=driver), host=HostFacts(boot_id=boot),
                               service=dataclasses.replace(facts.service, device="gpu"))


def with_cache(facts, files=3, engines=2, mount=VOLUME, exists=True, directory="/cache/paddle"):
    return dataclasses.replace(facts, trt_cache=TrtCacheFacts(status="probed", directory=directory, source="optim_cache_dir",
                                                              exists=exists, files=files,
                                                              engines=[f"trt_serialized_{n}" for n in range(engines)]),
                               mounts=[OVERLAY, mount])


def status_of(check, facts, rule):
    found = by_rule(run_check(check.CHECK, facts))[rule]
    return found.status.value, found.message


CASES = [
    # PD-HEALTH-001: the budget shrank below the threads (as PD-CPU-010 judges), or not
    (baseline_cpu_budget, "PD-HEALTH-001", live(recorded_baseline(budget_cpus=4.0), quota=2.0, threads=3),
     "fail", "cpu budget shrank from 4 to 2 CPUs"),
    (baseline_cpu_budget, "PD-HEALTH-001", live(recorded_baseline(budget_cpus=4.0), quota=2.0, threads=2),
     "pass", "cpu budget 2 >= 2 threads (was 4 at baseline)"),
    (baseline_cpu_budget, "PD-HEALTH-001", live(recorded_baseline(budget_cpus=2.0), quota=0.5, threads=1),
     "pass", "cpu budget 0.5 < 1 threads (a quota below one CPU: PD-CPU-016) (was 2 at baseline)"),
    (baseline_cpu_budget, "PD-HEALTH-001", live(recorded_baseline(budget_cpus=2.0), quota=2.0, threads=4),
     "pass", "cpu budget 2 < 4 threads"),  # too many threads from the start: PD-CPU-010's, not a change
    # PD-HEALTH-002: throttling since the baseline
    (baseline_throttling, "PD-HEALTH-002", live(recorded_baseline(throttled=(1000, 0)), throttled=(2000, 100)),
     "fail", "throttled in 10.0% of 1000 CPU periods since baseline (limit 5%)"),
    (baseline_throttling, "PD-HEALTH-002", live(recorded_baseline(throttled=(1000, 900)), throttled=(2000, 920)),
     "pass", "throttled 2.0% of 1000 periods since baseline"),
    (baseline_throttling, "PD-HEALTH-002", live(recorded_baseline(throttled=(1000, 0)), throttled=(5, 0)),
     "fail", "throttling counters went backwards"),
    (baseline_throttling, "PD-HEALTH-002", live(recorded_baseline(throttled=(None, None))),
     "skip", "no throttling counters to compare"),
    # PD-HEALTH-003: the memory limit
    (baseline_memory, "PD-HEALTH-003", live(recorded_baseline(memory=4 << 30)),
     "fail", "memory limit lowered from 4.0 GiB to 2.0 GiB since baseline"),
    (baseline_memory, "PD-HEALTH-003", live(recorded_baseline(memory=1 << 30)), "pass", "memory limit 2.0 GiB (raised since baseline)"),
    (baseline_memory, "PD-HEALTH-003", live(recorded_baseline(memory=None)), "fail", "memory limit lowered from unlimited to 2.0 GiB"),
    # PD-HEALTH-004/005: the GPUs and their driver
    (baseline_gpu, "PD-HEALTH-004", with_gpu(live(recorded_baseline(gpu=GPU))), "pass", "/dev/nvidia0 as at baseline"),
    (baseline_gpu, "PD-HEALTH-004", with_gpu(live(recorded_baseline(gpu=GPU)), nodes=["/dev/nvidiactl"]),
     "fail", "the GPU service sees no GPU: no /dev/nvidiaN in the container (baseline: /dev/nvidia0)"),
    (baseline_gpu, "PD-HEALTH-004", with_gpu(live(recorded_baseline(gpu=dataclasses.replace(GPU, device_nodes=["/dev/nvidia0", "/dev/nvidia1"])))),
     "fail", "GPU gone since baseline: /dev/nvidia1 no longer present"),
    (baseline_gpu, "PD-HEALTH-004", live(recorded_baseline(gpu=None)), "skip", "the baseline records no GPU service"),
    (baseline_gpu, "PD-HEALTH-005", with_gpu(live(recorded_baseline(gpu=GPU))), "pass", "driver 535.104.05 as at baseline"),
    (baseline_gpu, "PD-HEALTH-005", with_gpu(live(recorded_baseline(gpu=GPU)), driver="550.54.15"),
     "fail", "NVIDIA driver changed from 535.104.05 to 550.54.15 since baseline"),
    (baseline_gpu, "PD-HEALTH-005", with_gpu(live(recorded_baseline(gpu=GPU)), driver=None),
     "fail", "the NVIDIA kernel driver 535.104.05 is no longer loaded"),
    (baseline_gpu, "PD-HEALTH-005", with_gpu(live(recorded_baseline(gpu=GPU)), driver="550.54.15", boot="boot-2"),
     "pass", "driver 550.54.15; the baseline is from another boot of the host"),
    # PD-HEALTH-006: the cache
    (baseline_cache, "PD-HEALTH-006", with_cache(live(recorded_baseline(cache=CACHE))), "pass", "cache /cache/paddle: 3 files, 2 engines"),
    (baseline_cache, "PD-HEALTH-006", with_cache(live(recorded_baseline(cache=CACHE)), files=1, engines=0),
     "fail", "cache /cache/paddle lost its 2 TensorRT engines"),
    (baseline_cache, "PD-HEALTH-006", with_cache(live(recorded_baseline(cache=CACHE)), files=0, engines=0, exists=False),
     "fail", "cache /cache/paddle is gone (baseline: 3 files, 2 engines)"),
    (baseline_cache, "PD-HEALTH-006", with_cache(live(recorded_baseline(cache=CACHE)), mount=OVERLAY),
     "fail", "cache /cache/paddle is no longer on its volume (/cache, ext4); now on overlay"),
    (baseline_cache, "PD-HEALTH-006", with_cache(live(recorded_baseline(cache=CACHE)), directory="/srv/other"),
     "fail", "the service no longer uses cache /cache/paddle (its config changed since baseline); re-create the baseline"),
    (baseline_cache, "PD-HEALTH-006", live(recorded_baseline(cache=None)), "skip", "the baseline records no cache"),
    # PD-HEALTH-007: the Paddle build
    (baseline_paddle, "PD-HEALTH-007", live(recorded_baseline()), "pass", "paddlepaddle 3.3.1 as at baseline"),
    (baseline_paddle, "PD-HEALTH-007", live(recorded_baseline(paddle_now="paddlepaddle 3.4.0")),
     "fail", "Paddle build changed since baseline: was paddlepaddle 3.3.1, now paddlepaddle 3.4.0"),
    (baseline_paddle, "PD-HEALTH-007", live(recorded_baseline(paddle_now=None, paddle_now_problem="/x/METADATA is gone")),
     "fail", "now /x/METADATA is gone"),
    (baseline_paddle, "PD-HEALTH-007", live(recorded_baseline(installed=None, paddle_now=None)),
     "skip", "the baseline records no Paddle build to compare"),
]


@pytest.mark.parametrize("check, rule, facts, status, words", CASES,
                         ids=[f"{case[1]}-{case[3]}-{n}" for n, case in enumerate(CASES)])
def test_each_baseline_rule_fires_and_stays_silent(check, rule, facts, status, words):
    found_status, message = status_of(check, facts, rule)
    assert found_status == status and words in message, message


BASELINE_CHECKS = (baseline_cpu_budget, baseline_throttling, baseline_memory, baseline_gpu, baseline_cache, baseline_paddle)


@pytest.mark.parametrize("check", BASELINE_CHECKS, ids=lambda module: module.CHECK.name)
def test_without_a_baseline_each_comparison_is_skipped_saying_how_to_give_one(check):
    for finding in run_check(check.CHECK, live(None)):
        assert finding.status.value == "skip"
        assert finding.message == ("judged by 'paddle-doctor healthcheck --baseline PATH' in the running container, "
                                   "against what 'paddle-doctor baseline --out PATH' recorded there; no baseline here")


def test_a_check_missing_what_it_requires_is_skipped_with_the_uniform_message_and_never_run():
    ran = []
    needy = Check(name="needy", rules=("PD-CPU-015",), run=lambda facts: ran.append(facts) or [],
                  requires=(Need.MEASUREMENTS, Need.SOURCE))
    (finding,) = run_check(needy, make_facts())
    assert finding.status.value == "skip" and not ran
    assert finding.message == ("not measured: give --model to measure on the real predictor; "
                               "no service source was read (--source FILE, or --pid for the script the service runs)")
    assert not needy.fast and Check(name="cheap", rules=(), run=lambda facts: [], requires=(Need.BASELINE,)).fast


def test_a_cpu_service_skips_the_gpu_checks_saying_why():
    from paddle_doctor.checks import gpu_memory

    (memory, shared) = run_check(gpu_memory.CHECK, make_facts(device="cpu"))
    assert memory.status.value == shared.status.value == "skip"
    assert memory.message.startswith("the service runs on the CPU (device cpu;")
    assert memory.message.endswith("; a GPU service says device: gpu in --config")
