"""The GPU checks' tables on hand-built Facts: driver minimums, precision by compute capability,
architectures in the wheel, CUDA_VISIBLE_DEVICES, and cache writability by mount flag and mode bits."""

from __future__ import annotations

from dataclasses import replace

import pytest
from factories import by_rule, make_facts, paddle_ok
from paddle_doctor.checks import gpu_driver, gpu_precision, gpu_wheel, trt_cache
from paddle_doctor.facts import GpuDevice, GpuFacts, Mount, TensorRTSettings, TrtCacheFacts
from paddle_doctor.judge.gpu_support import cuda_visible, version_tuple


def gpu_facts(cuda="11.8", driver="535.104.05", capability="7.5", archs=(61, 70, 75, 80, 86), **service):
    facts = make_facts(paddle=paddle_ok(distribution="paddlepaddle-gpu", with_cuda=True, cuda_version=cuda,
                                        cudnn_version="8.6.0", cuda_archs=list(archs)), device="gpu", **service)
    return replace(facts, gpu=GpuFacts(status="ok", driver_version=driver, cuda_driver_version="12.2",
                                       devices=[GpuDevice(index=0, name="Test GPU", compute_capability=capability)]))


@pytest.mark.parametrize(
    "driver, cuda, status",
    [
        ("450.80.02", "11.8", "pass"),  # the 11.x minor-version compatibility floor
        ("450.80.01", "11.2", "fail"),
        ("520.61.05", "11.8", "pass"),
        ("525.60.12", "12.0", "fail"),
        ("525.60.13", "12.6", "pass"),  # below 560.28.03, but minor-version compatibility carries it
        ("535.104.05", "12.2", "pass"),  # 12.2 is not in the table: the floor decides
        ("575.51.03", "13.0", "fail"),
        ("580.65.06", "13.0", "pass"),
    ],
)
def test_driver_against_the_wheels_cuda(driver, cuda, status):
    (finding,) = gpu_driver.check(gpu_facts(cuda=cuda, driver=driver))
    assert finding.status.value == status


def test_driver_version_falls_back_to_the_kernel_module_when_nvml_is_missing():
    facts = replace(gpu_facts(cuda="12.6"), gpu=GpuFacts(status="library_not_found", reason="nvmlInit failed", kernel_driver="470.82.01"))
    (finding,) = gpu_driver.check(facts)
    assert finding.status.value == "fail" and "470.82.01" in finding.message


@pytest.mark.parametrize(
    "capability, precision, status",
    [
        ("6.1", "fp16", "fail"),  # GP104: FP16 at a fraction of FP32 speed
        ("6.0", "fp16", "pass"),
        ("5.2", "fp16", "fail"),
        ("5.3", "fp16", "pass"),
        ("6.1", "int8", "pass"),
        ("6.0", "int8", "fail"),
        ("7.5", "bf16", "fail"),
        ("8.0", "bf16", "pass"),
        ("3.7", "fp32", "pass"),
    ],
)
def test_precision_against_compute_capability(capability, precision, status):
    facts = gpu_facts(capability=capability, tensorrt=TensorRTSettings(enabled=True, precision=precision))
    assert by_rule(gpu_precision.check(facts))["PD-PREC-003"].status.value == status


@pytest.mark.parametrize(
    "capability, fp16_unused",
    [("7.0", "fail"), ("9.0", "fail"), ("6.1", "pass"), ("5.3", "pass")],
)
def test_fp32_leaves_tensor_cores_idle_from_7_0(capability, fp16_unused):
    assert by_rule(gpu_precision.check(gpu_facts(capability=capability)))["PD-PREC-002"].status.value == fp16_unused


@pytest.mark.parametrize(
    "capability, archs, status",
    [
        ("8.6", (80,), "pass"),  # an sm_80 kernel runs on 8.6
        ("8.9", (86,), "pass"),
        ("9.0", (86, 89), "fail"),
        ("7.0", (75,), "fail"),  # a higher minor does not run on a lower one
        ("7.5", (), "skip"),  # the wheel does not say
    ],
)
def test_compute_capability_against_the_wheels_architectures(capability, archs, status):
    facts = gpu_facts(capability=capability, archs=archs)
    assert by_rule(gpu_wheel.check(facts))["PD-GPU-004"].status.value == status


@pytest.mark.parametrize(
    "value, visible",
    [(None, None), ("", []), ("-1", []), ("0,1", ["0", "1"]), ("1,-1,0", ["1"]), ("GPU-8f3a", ["GPU-8f3a"]), ("NoDevFiles", [])],
)
def test_cuda_visible_devices(value, visible):
    assert cuda_visible({} if value is None else {"CUDA_VISIBLE_DEVICES": value}) == visible


def test_cuda_visible_devices_maps_the_service_device_to_nvml_numbering():
    facts = gpu_facts(env={"CUDA_VISIBLE_DEVICES": "1"})
    facts = replace(facts, gpu=replace(facts.gpu, devices=[GpuDevice(0, "GPU zero", "6.1"), GpuDevice(1, "GPU one", "8.6")]))
    assert "GPU 1 GPU one" in by_rule(gpu_precision.check(facts))["PD-PREC-002"].message


@pytest.mark.parametrize("text, version", [("12.6", (12, 6)), ("535.104.05", (535, 104, 5)), ("v8.6.1.6", (8, 6, 1, 6)),
                                           ("False", None), (None, None)])
def test_version_tuple(text, version):
    assert version_tuple(text) == version


def cache_facts(mode, uid=1000, gid=1000, euid=None, groups=(), options=("rw",)):
    facts = make_facts(tensorrt=TensorRTSettings(enabled=True, use_static=True))
    return replace(facts, mounts=[Mount("/", "overlay", "overlay", "/", ["rw"], ["rw"]),
                                  Mount("/cache", "ext4", "/dev/sdb1", "/vol", list(options), ["rw"])],
                   trt_cache=TrtCacheFacts(status="probed", directory="/cache/paddle", source="optim_cache_dir", exists=True,
                                           checked_path="/cache/paddle", mode=mode, uid=uid, gid=gid),
                   process=replace(facts.process, euid=euid, groups=list(groups)))


@pytest.mark.parametrize(
    "facts, status",
    [
        (cache_facts(0o755, euid=1000), "pass"),  # owner
        (cache_facts(0o755, euid=1001), "fail"),  # another user, no write bit for others
        (cache_facts(0o775, euid=1001, groups=(1000,)), "pass"),  # group member with group write
        (cache_facts(0o555, euid=1000), "fail"),  # read-only by mode bits
        (cache_facts(0o555, euid=0), "pass"),  # root writes past mode bits
        (cache_facts(0o777, euid=0, options=("ro", "relatime")), "fail"),  # but not on a read-only mount
        (cache_facts(0o555), "fail"),  # offline (--root): judged for the owner
        (cache_facts(0o755), "pass"),
    ],
)
def test_cache_writability_by_mount_flag_and_mode_bits(facts, status):
    assert by_rule(trt_cache.check(facts))["PD-TRT-003"].status.value == status


def test_a_cache_on_tmpfs_is_not_persisted():
    facts = cache_facts(0o755)
    facts.mounts[1] = Mount("/cache", "tmpfs", "tmpfs", "/", ["rw"], ["rw", "size=1g"])
    assert by_rule(trt_cache.check(facts))["PD-TRT-002"].status.value == "fail"
