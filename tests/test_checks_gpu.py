"""GPU and TensorRT rules end to end: the real CLI on a recorded GPU container root, with NVML answered
by the fake pynvml (tests/fixtures/nvml/*.json) and Paddle by recorded builds (tests/fixtures/paddle/).

Each case names the rules that differ from a healthy T4 container; every other GPU/TensorRT rule
must pass. So each case proves that the right finding fires with the right fix, and nothing else.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field

import pytest
from conftest import fixture_root, report_with_its_exit, statuses
from gpu_helpers import GPU_ROOT, GPU_RULES, fake_paddle, run_with_fake_nvml, service_config
from paddle_doctor.report.report import PLACEHOLDER

HEALTHY_SERVICE = {
    "device": "gpu",
    "model": "/models/det/inference",
    "optim_cache_dir": "/cache/paddle",
    "gpu_memory_pool_mb": 1024,
    "tensorrt": {"enabled": True, "use_static": True, "precision": "fp16",
                 "dynamic_shape_file": "/cache/paddle/shape_range_info.pbtxt"},
}
NO_TRT = {"tensorrt": {"enabled": False}}
FRESH_CACHE = {"optim_cache_dir": "/cache/fresh"}  # no engines yet, so no stamp to compare
NO_GPU_FACTS = dict.fromkeys(("PD-GPU-004", "PD-GPU-010", "PD-MEM-002", "PD-PREC-002", "PD-PREC-003"), "skip")
NVML_DOWN = dict.fromkeys(("PD-GPU-003", "PD-GPU-006", "PD-GPU-007", "PD-GPU-008"), "skip")
CPU_SERVICE = dict.fromkeys(GPU_RULES, "skip")


@dataclass
class Case:
    scenario: str
    recording: str = "gpu-cu118-trt86"
    expected: dict[str, str] = field(default_factory=dict)
    fix: tuple[str, str] | None = None  # (rule, text its fix must contain)
    service: dict | None = field(default_factory=dict)  # None: no --config at all
    paddle: dict = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    root: str = GPU_ROOT
    remove: tuple[str, ...] = ()  # paths to take out of a copy of the root
    args: tuple[str, ...] = ()


CASES = {
    # --- the cases the issue names
    "driver 470 runs a CUDA 11.8 wheel through minor-version compatibility": Case("t4-driver-470"),
    "driver 470 is too old for a CUDA 12.6 wheel": Case(
        "t4-driver-470", "gpu-cu126-pip", {"PD-GPU-001": "fail"},
        fix=("PD-GPU-001", "host NVIDIA driver >= 560.28.03 for CUDA 12.6 (now 470.82.01)")),
    "no NVML library: started without the NVIDIA runtime": Case(
        "no-library", expected={**NVML_DOWN, **NO_GPU_FACTS, "PD-GPU-006": "fail"},
        fix=("PD-GPU-006", "docker run --gpus all"), remove=("dev",)),
    "NVIDIA kernel driver not loaded": Case(
        "driver-not-loaded", expected={**NVML_DOWN, **NO_GPU_FACTS, "PD-GPU-001": "skip", "PD-GPU-007": "fail"},
        fix=("PD-GPU-007", "sudo modprobe nvidia && nvidia-smi"), remove=("dev", "proc/driver")),
    "TensorRT 8.6 compiled, 8.5 at runtime": Case(
        "t4-driver-470", expected={"PD-TRT-005": "fail", "PD-TRT-004": "skip"},
        fix=("PD-TRT-005", "TensorRT 8.6.x first on the loader's path"), service=FRESH_CACHE,
        paddle={"trt_runtime_version": [8, 5, 3]}, env={"LD_LIBRARY_PATH": "/opt/TensorRT-8.5.3.1/lib"}),
    "compute capability 6.1 asked for FP16": Case(
        "p4-driver-535", expected={"PD-PREC-003": "fail", "PD-TRT-004": "skip"},
        fix=("PD-PREC-003", "precision_mode=PrecisionType.Float32"), service=FRESH_CACHE),
    "engine cache on the container's overlay layer": Case(
        "t4-driver-470", expected={"PD-TRT-002": "fail", "PD-TRT-004": "skip", "PD-TRT-006": "skip"},
        fix=("PD-TRT-002", "docker run -v paddle-cache:/app/models/ocr/_opt_cache ..."),
        service={"model": "/app/models/ocr/inference", "optim_cache_dir": None,
                 "tensorrt": {**HEALTHY_SERVICE["tensorrt"], "dynamic_shape_file": None}}),
    "engine cache on a read-only mount": Case(
        "t4-driver-470", expected={"PD-TRT-003": "fail", "PD-TRT-004": "skip", "PD-TRT-006": "skip"},
        fix=("PD-TRT-003", "docker run -v paddle-cache:/models/det/_opt_cache:rw ..."),
        service={"optim_cache_dir": None, "tensorrt": {**HEALTHY_SERVICE["tensorrt"], "dynamic_shape_file": None}}),
    "engine cache built by another TensorRT": Case(
        "t4-driver-470", expected={"PD-TRT-004": "fail"},
        fix=("PD-TRT-004", "docker run -v paddle-cache-t4-trt8.6.1:/cache/paddle-trt85 ..."),
        service={"optim_cache_dir": "/cache/paddle-trt85"}),
    "GPU wheel on a host without a GPU": Case(
        "no-library", expected={**CPU_SERVICE, "PD-GPU-005": "fail"},
        fix=("PD-GPU-005", "pip uninstall -y paddlepaddle-gpu && python -m pip install paddlepaddle==3.*"),
        service=None, root="intel-avx512-v2-max"),
    # --- more ways NVML fails
    "a wedged driver hangs NVML: cut at the timeout": Case(
        "hang", expected=dict.fromkeys(NVML_DOWN, "error") | NO_GPU_FACTS, args=("--gpu-timeout", "2")),
    "no permission on the device nodes": Case(
        "no-permission", expected={**NVML_DOWN, **NO_GPU_FACTS, "PD-GPU-008": "fail"},
        fix=("PD-GPU-008", "--group-add")),
    "driver upgraded without a reboot": Case(
        "driver-mismatch", expected={**NVML_DOWN, **NO_GPU_FACTS, "PD-GPU-007": "fail"}, fix=("PD-GPU-007", "sudo reboot")),
    "capabilities lack compute": Case(
        "t4-driver-470", expected={"PD-GPU-009": "fail"}, fix=("PD-GPU-009", "NVIDIA_DRIVER_CAPABILITIES=compute,utility"),
        env={"NVIDIA_DRIVER_CAPABILITIES": "utility"}),
    "capabilities lack utility, so NVML is missing": Case(
        "no-library", expected={**NVML_DOWN, **NO_GPU_FACTS, "PD-GPU-009": "fail"},
        fix=("PD-GPU-009", "-e NVIDIA_DRIVER_CAPABILITIES=compute,utility"), env={"NVIDIA_DRIVER_CAPABILITIES": "compute"}),
    # --- devices, wheel and hardware
    "NVIDIA_VISIBLE_DEVICES=none leaves no GPU": Case(
        "no-devices", expected={**NO_GPU_FACTS, "PD-GPU-003": "fail"}, fix=("PD-GPU-003", "NVIDIA_VISIBLE_DEVICES=all"),
        env={"NVIDIA_VISIBLE_DEVICES": "none"}),
    "CUDA_VISIBLE_DEVICES hides the GPU": Case(
        "t4-driver-470", expected={**NO_GPU_FACTS, "PD-GPU-003": "fail"}, env={"CUDA_VISIBLE_DEVICES": "-1"}),
    "device_id beyond the visible GPUs": Case(
        "t4-driver-470", expected={**NO_GPU_FACTS, "PD-GPU-003": "fail"}, service={"gpu_device_id": 1}),
    "CPU wheel in a GPU container": Case(
        "t4-driver-470", "cpu", expected={**CPU_SERVICE, "PD-GPU-005": "fail"},
        fix=("PD-GPU-005", "pip install paddlepaddle-gpu -i https://www.paddlepaddle.org.cn/packages/stable/cu118/"),
        service=None),
    "CPU wheel on a CPU host": Case(
        "no-library", "cpu", expected={**CPU_SERVICE, "PD-GPU-005": "pass"}, service=None, root="intel-avx512-v2-max"),
    "H200 not among the wheel's architectures": Case(
        "h200-driver-580", expected={"PD-GPU-004": "fail", "PD-TRT-004": "skip"}, fix=("PD-GPU-004", "sm_90"),
        service=FRESH_CACHE),
    "cuDNN 8 found for a cuDNN 9 wheel": Case(
        "t4-driver-470", "gpu-cu126-pip", {"PD-GPU-001": "fail", "PD-GPU-002": "fail"},
        fix=("PD-GPU-002", 'pip install "nvidia-cudnn-cu12==9.*"'), paddle={"cuda_lib_dirs": []}),
    # --- memory, sharing and precision
    "other processes hold the GPU": Case(
        "a10-driver-550-shared", "gpu-cu126-pip", {"PD-GPU-010": "warn", "PD-TRT-004": "skip"},
        fix=("PD-GPU-010", "nvidia-smi --query-compute-apps"), service=FRESH_CACHE),
    "memory pools exceed the free memory": Case(
        "t4-driver-470", expected={"PD-MEM-002": "fail"}, fix=("PD-MEM-002", "config.enable_use_gpu(6044, 0)"),
        service={"gpu_memory_pool_mb": 12000, "instances": 2}),
    "FP32 on a GPU with tensor cores": Case(
        "t4-driver-470", expected={"PD-PREC-002": "fail"}, fix=("PD-PREC-002", "PrecisionType.Half"),
        service={"tensorrt": {**HEALTHY_SERVICE["tensorrt"], "precision": "fp32"}}),
    # --- TensorRT settings
    "use_static off": Case(
        "t4-driver-470", expected={"PD-TRT-001": "fail", "PD-TRT-002": "skip", "PD-TRT-003": "skip", "PD-TRT-006": "skip"},
        fix=("PD-TRT-001", "use_static=True"),
        service={"tensorrt": {**HEALTHY_SERVICE["tensorrt"], "use_static": False, "dynamic_shape_file": None}}),
    "shape-range file missing": Case(
        "t4-driver-470", expected={"PD-TRT-006": "fail"},
        fix=("PD-TRT-006", "config.enable_tuned_tensorrt_dynamic_shape('/cache/paddle/missing.pbtxt', True)"),
        service={"tensorrt": {**HEALTHY_SERVICE["tensorrt"], "dynamic_shape_file": "/cache/paddle/missing.pbtxt"}}),
    "TensorRT off: no TensorRT rule applies, and FP32 leaves the tensor cores idle": Case(
        "t4-driver-470", expected={**{f"PD-TRT-00{n}": "skip" for n in range(1, 7)}, "PD-PREC-002": "fail"}, service=NO_TRT),
}


def run_case(case: Case, tmp_path) -> dict:
    root = fixture_root(case.root)
    if case.remove:
        root = shutil.copytree(root, tmp_path / "root")
        for relative in case.remove:
            shutil.rmtree(root / relative)
    args = ["--json", "--root", str(root), "--gpu", "--python", fake_paddle(tmp_path, case.recording, **case.paddle), *case.args]
    if case.service is not None:
        args += ["--config", service_config(tmp_path, {**HEALTHY_SERVICE, **case.service})]
    result = run_with_fake_nvml(*args, scenario=case.scenario, env=case.env)
    return report_with_its_exit(result)


@pytest.mark.parametrize("name", CASES)
def test_gpu_case(name, tmp_path):
    case = CASES[name]
    report = run_case(case, tmp_path)
    found = statuses(report)
    expected = {rule: case.expected.get(rule, "pass") for rule in GPU_RULES}
    assert {rule: found[rule] for rule in GPU_RULES} == expected
    if case.fix:
        rule, text = case.fix
        finding = next(f for f in report["findings"] if f["rule_id"] == rule)
        codes = [change["code"] for change in finding["fix"]["changes"]]
        assert any(text in code for code in codes), codes
        assert not any(PLACEHOLDER.search(code) for code in codes), f"unfilled placeholder in {codes}"
