"""GPU probes: NVML through the fake pynvml in a child process, the kernel driver's traces, the CUDA
libraries in the loader's view and the TensorRT cache folder, on the recorded GPU container root."""

from __future__ import annotations

import json
import stat
import sys

import jsonschema
import pytest
from conftest import facts_from_root, fixture_root, report_json, run_doctor
from gpu_helpers import GPU_ROOT, GPU_RULES, fake_paddle, run_with_fake_nvml, service_config
from paddle_doctor.probes.common import Reader
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.probes.gpu import probe_nvml
from paddle_doctor.probes.libraries import ld_conf_dirs, probe_libraries

PIP = "/usr/local/lib/python3.10/dist-packages/nvidia"
MiB = 1024 * 1024


def nvml_facts(scenario: str, *args: str) -> dict:
    result = run_with_fake_nvml("facts", "--no-paddle", "--root", str(fixture_root(GPU_ROOT)), "--gpu", *args, scenario=scenario)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)["gpu"]


def test_nvml_reports_driver_devices_processes_and_throttling():
    gpu = nvml_facts("a10-driver-550-shared")
    assert (gpu["status"], gpu["driver_version"], gpu["cuda_driver_version"]) == ("ok", "550.54.15", "12.4")
    (device,) = gpu["devices"]
    assert (device["name"], device["compute_capability"]) == ("NVIDIA A10", "8.6")
    assert (device["memory_total_bytes"], device["memory_free_bytes"]) == (24146608128, 24146608128 - 9126805504)
    assert [p["pid"] for p in device["processes"]] == [48211, 48377]
    assert device["processes"][0]["used_memory_bytes"] == 6 * 1024 * MiB
    assert device["persistence_mode"] is False
    assert device["throttle_reasons"] == ["sw_power_cap"]
    assert device["mig_mode"] is None and device["unsupported"] == ["mig_mode: Not Supported"]


def test_mig_mode_and_idle_clocks_of_an_h200():
    (device,) = nvml_facts("h200-driver-580")["devices"]
    assert (device["compute_capability"], device["mig_mode"], device["throttle_reasons"]) == ("9.0", False, ["gpu_idle"])


def test_each_nvml_init_failure_is_classified():
    expected = {
        "no-library": ("library_not_found", "NVML_ERROR_LIBRARY_NOT_FOUND (12)"),
        "driver-not-loaded": ("driver_not_loaded", "NVML_ERROR_DRIVER_NOT_LOADED (9)"),
        "driver-mismatch": ("driver_mismatch", "NVML_ERROR_LIB_RM_VERSION_MISMATCH (18)"),
        "no-permission": ("no_permission", "NVML_ERROR_NO_PERMISSION (4)"),
    }
    for scenario, (status, error) in expected.items():
        gpu = nvml_facts(scenario)
        assert (gpu["status"], gpu["nvml_error"]) == (status, error), scenario
        assert gpu["kernel_driver"] == "470.82.01"  # read from the root, whatever NVML says


def test_a_hanging_nvml_is_killed_at_the_timeout_and_the_report_still_comes_out(tmp_path):
    gpu = nvml_facts("hang", "--gpu-timeout", "1")
    assert gpu["status"] == "timeout"
    assert "did not answer within 1 s" in gpu["reason"]
    result = run_with_fake_nvml("--json", "--no-paddle", "--root", str(fixture_root(GPU_ROOT)), "--gpu", "--gpu-timeout", "1",
                                "--config", service_config(tmp_path, {"device": "gpu"}), scenario="hang")
    finding = next(f for f in report_json(result)["findings"] if f["rule_id"] == "PD-GPU-003")
    assert finding["status"] == "error" and "did not answer within 1 s" in finding["message"]
    assert result.returncode == 1


def test_without_nvidia_ml_py_the_probe_says_so(tmp_path):
    python = tmp_path / "python"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')  # -S: no site-packages, so no pynvml
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    facts = probe_nvml(ProbeContext("/"), str(python), timeout=30)
    assert facts.status == "no_pynvml"
    assert "nvidia-ml-py" in facts.reason


def test_kernel_driver_and_device_nodes_are_read_under_the_root():
    facts = facts_from_root(GPU_ROOT)
    assert facts.gpu.status == "not_probed"
    assert facts.gpu.kernel_driver == "470.82.01"
    assert facts.gpu.device_nodes == ["/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia0", "/dev/nvidiactl"]
    assert facts.issues == []
    cpu_host = facts_from_root("intel-avx512-v2-max").gpu
    assert (cpu_host.kernel_driver, cpu_host.device_nodes) == (None, [])


def test_libraries_resolve_in_the_loaders_order():
    reader = Reader(ProbeContext(fixture_root(GPU_ROOT)))
    libraries = probe_libraries(reader, {"LD_LIBRARY_PATH": "/opt/TensorRT-8.5.3.1/lib::relative"}, [f"{PIP}/cudnn/lib"])
    assert libraries.searched[:6] == [
        f"{PIP}/cudnn/lib", "/opt/TensorRT-8.5.3.1/lib", "/usr/local/cuda-11.8/targets/x86_64-linux/lib",
        "/usr/local/lib", "/usr/local/nvidia/lib", "/usr/local/nvidia/lib64"]
    found = {name: [(c.path, c.version) for c in copies] for name, copies in libraries.found.items()}
    assert found["libnvinfer"] == [("/opt/TensorRT-8.5.3.1/lib/libnvinfer.so.8.5.3", "8.5.3"),
                                   ("/usr/lib/x86_64-linux-gnu/libnvinfer.so.8.6.1", "8.6.1")]
    assert found["libcudnn"] == [(f"{PIP}/cudnn/lib/libcudnn.so.9", "9"), ("/usr/lib/x86_64-linux-gnu/libcudnn.so.8.6.0", "8.6.0")]
    assert found["libcudart"] == [("/usr/local/cuda-11.8/targets/x86_64-linux/lib/libcudart.so.11.8.89", "11.8.89")]
    assert found["libcublas"] == [("/usr/local/cuda-11.8/targets/x86_64-linux/lib/libcublas.so.11.11.3.6", "11.11.3.6")]
    assert reader.issues == []


def test_ld_so_conf_follows_relative_and_nested_includes(tmp_path):
    (tmp_path / "etc" / "ld.so.conf.d").mkdir(parents=True)
    (tmp_path / "etc" / "ld.so.conf").write_text("# comment\ninclude ld.so.conf.d/*.conf\n/opt/first/\n")
    (tmp_path / "etc" / "ld.so.conf.d" / "a.conf").write_text("/opt/a  # trailing comment\ninclude /etc/more.conf\n")
    (tmp_path / "etc" / "more.conf").write_text("/opt/nested\n")
    assert ld_conf_dirs(Reader(ProbeContext(tmp_path)), "/etc/ld.so.conf") == ["/opt/a", "/opt/nested", "/opt/first"]


def test_trt_cache_folder_stamp_and_shape_file_are_probed(tmp_path):
    root = str(fixture_root(GPU_ROOT))
    config = service_config(tmp_path, {"device": "gpu", "optim_cache_dir": "/cache/paddle", "tensorrt": {
        "enabled": True, "use_static": True, "dynamic_shape_file": "/cache/paddle/shape_range_info.pbtxt"}})
    cache = json.loads(run_doctor("facts", "--no-paddle", "--no-gpu", "--root", root, "--config", config).stdout)["trt_cache"]
    assert (cache["status"], cache["directory"], cache["source"], cache["exists"]) == ("probed", "/cache/paddle", "optim_cache_dir", True)
    assert cache["engines"] == ["trt_serialized_2c7d90e1f4", "trt_serialized_b81e6a3f09"]
    assert cache["stamp"] == {"tensorrt": "8.6.1", "gpu": "Tesla T4", "compute_capability": "7.5", "paddle": "2.6.1"}
    assert cache["shape_file_exists"] is True and cache["files"] == 4 and cache["list_error"] is None
    config = service_config(tmp_path, {"model": "/app/models/ocr/inference", "tensorrt": {"enabled": True, "use_static": True}})
    cache = json.loads(run_doctor("facts", "--no-paddle", "--no-gpu", "--root", root, "--config", config).stdout)["trt_cache"]
    assert (cache["directory"], cache["source"], cache["exists"], cache["checked_path"]) == (
        "/app/models/ocr/_opt_cache", "model", False, "/app/models/ocr")


@pytest.mark.parametrize("settings, directory", [
    ({"model": "/app/models/ocr/inference", "save_optim_model": True}, "/app/models/ocr/_opt_cache"),
    ({"optim_cache_dir": "/cache/fresh"}, "/cache/fresh"),
    ({"model": "/app/models/ocr/inference"}, None),
], ids=["save-optim-model", "optim-cache-dir", "no-cache"])
def test_the_optimisation_cache_is_probed_without_tensorrt_too(tmp_path, settings, directory):
    config = service_config(tmp_path, settings)
    root = str(fixture_root(GPU_ROOT))
    cache = json.loads(run_doctor("facts", "--no-paddle", "--no-gpu", "--root", root, "--config", config).stdout)["trt_cache"]
    assert cache["directory"] == directory and cache["status"] == ("probed" if directory else "not_probed")
    if directory is None:
        assert "uses no cache" in cache["reason"]


def test_a_cache_folder_that_cannot_be_looked_at_is_recorded_not_a_crash(tmp_path):
    """An OSError on the way to the folder (no permission on a parent, for one; here a name too long,
    which fails for root as well) leaves the cache unlisted, with the reason."""
    folder = "/cache/" + "x" * 300
    config = service_config(tmp_path, {"optim_cache_dir": folder, "save_optim_model": True})
    result = run_doctor("facts", "--no-paddle", "--no-gpu", "--root", str(fixture_root(GPU_ROOT)), "--config", config)
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    cache = facts["trt_cache"]
    assert (cache["status"], cache["exists"], cache["checked_path"]) == ("probed", False, "/cache")
    assert cache["list_error"] == f"cannot list {folder}: File name too long"
    assert any(issue["probe"] == "trt_cache" for issue in facts["issues"])


def test_a_broken_stamp_means_the_doctor_cannot_tell(tmp_path):
    root = tmp_path / "root"
    (root / "cache").mkdir(parents=True)
    (root / "cache" / "trt_serialized_0a1b").write_text("")
    (root / "cache" / "paddle-doctor-cache.json").write_text("{not json")
    config = service_config(tmp_path, {"optim_cache_dir": "/cache", "tensorrt": {"enabled": True, "use_static": True}})
    report = report_json(run_doctor("--json", "--no-gpu", "--root", str(root), "--config", config))
    stale = next(f for f in report["findings"] if f["rule_id"] == "PD-TRT-004")
    assert stale["status"] == "skip" and "cannot tell" in stale["message"] and "not JSON" in stale["message"]


def test_gpu_facts_replay_gives_identical_findings(tmp_path):
    root = str(fixture_root(GPU_ROOT))
    python = fake_paddle(tmp_path, "gpu-cu126-pip")
    config = service_config(tmp_path, {"device": "gpu", "optim_cache_dir": "/cache/paddle-trt85",
                                       "tensorrt": {"enabled": True, "use_static": True, "precision": "fp16"}})
    args = ("--root", root, "--gpu", "--python", python, "--config", config)
    snapshot = tmp_path / "facts.json"
    assert run_with_fake_nvml("facts", *args, "--output", str(snapshot), scenario="t4-driver-470").returncode == 0
    live = report_json(run_with_fake_nvml("--json", *args, scenario="t4-driver-470"))
    replay = report_json(run_doctor("check", "--json", "--facts", str(snapshot)))
    assert live["findings"] == replay["findings"]
    fired = {f["rule_id"] for f in replay["findings"] if f["rule_id"] in GPU_RULES and f["status"] not in ("pass", "skip")}
    assert fired == {"PD-GPU-001", "PD-TRT-004"}


def test_gpu_report_validates_and_names_the_gpu_in_the_host_summary(tmp_path, report_schema):
    args = ("--json", "--root", str(fixture_root(GPU_ROOT)), "--gpu", "--python", fake_paddle(tmp_path, "gpu-cu118-trt86"))
    report = report_json(run_with_fake_nvml(*args, scenario="t4-driver-470"))
    jsonschema.validate(report, report_schema)
    assert report["host"]["gpu"] == "1 x Tesla T4 (compute capability 7.5); driver 470.82.01 (CUDA 11.4)"
    report = report_json(run_with_fake_nvml(*args, scenario="no-library"))
    assert report["host"]["gpu"] == "none reachable: nvmlInit failed: NVML Shared Library Not Found; kernel driver 470.82.01"
