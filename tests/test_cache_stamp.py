"""`paddle-doctor stamp-cache`: the stamp beside freshly built engines names this TensorRT and GPU,
PD-TRT-004 then passes on this machine and fails on another; engines another machine stamped are
not restamped without --force; and nothing is written when there is nothing true to write."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import fixture_root, report_json
from gpu_helpers import GPU_ROOT, fake_paddle, run_with_fake_nvml, service_config

SERVICE = {"device": "gpu", "optim_cache_dir": "/cache/fresh", "tensorrt": {"enabled": True, "use_static": True}}
T4_TRT86 = {"compute_capability": "7.5", "gpu": "Tesla T4", "paddle": "2.6.1", "tensorrt": "8.6.1"}


@pytest.fixture
def root(tmp_path):
    """The recorded T4 container (Paddle 2.6.1 with TensorRT 8.6.1), engines just built in /cache/fresh."""
    copy = shutil.copytree(fixture_root(GPU_ROOT), tmp_path / "root")
    (copy / "cache/fresh/trt_serialized_5e6f").write_text("engine")
    return copy


def doctor(root, tmp_path, *args, scenario="t4-driver-470", settings=SERVICE, nvml=True):
    """The CLI on the container root, with the recorded Paddle build and the fake NVML answering."""
    return run_with_fake_nvml(*args, "--root", str(root), "--gpu" if nvml else "--no-gpu",
                              "--python", fake_paddle(tmp_path, "gpu-cu118-trt86"),
                              "--config", service_config(tmp_path, settings), scenario=scenario)


def stale_rule(root, tmp_path, scenario="t4-driver-470") -> dict:
    report = report_json(doctor(root, tmp_path, "--json", scenario=scenario))
    return next(f for f in report["findings"] if f["rule_id"] == "PD-TRT-004")


def one_line_error(result) -> str:
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    (line,) = result.stderr.splitlines()
    return line


def test_stamping_fresh_engines_records_this_tensorrt_and_gpu(root, tmp_path):
    assert stale_rule(root, tmp_path)["status"] == "skip"  # no stamp: cannot tell
    result = doctor(root, tmp_path, "stamp-cache")
    assert result.returncode == 0, result.stderr
    assert result.stdout == ("paddle-doctor: /cache/fresh/paddle-doctor-cache.json written: "
                             "compute_capability 7.5, gpu Tesla T4, paddle 2.6.1, tensorrt 8.6.1\n")
    assert json.loads((root / "cache/fresh/paddle-doctor-cache.json").read_text()) == T4_TRT86
    assert not list((root / "cache/fresh").glob(".*.tmp"))
    assert stale_rule(root, tmp_path)["status"] == "pass"
    # the same cache seen from an A10 host: built for another GPU
    moved = stale_rule(root, tmp_path, scenario="a10-driver-550-shared")
    assert moved["status"] == "fail" and "gpu Tesla T4 (here NVIDIA A10)" in moved["message"]


def test_a_stamp_that_already_says_so_is_left_alone(root, tmp_path):
    stamp = root / "cache/paddle/paddle-doctor-cache.json"
    before = stamp.read_bytes()
    result = doctor(root, tmp_path, "stamp-cache", settings={**SERVICE, "optim_cache_dir": "/cache/paddle"})
    assert result.returncode == 0, result.stderr
    assert "/cache/paddle/paddle-doctor-cache.json already says so" in result.stdout
    assert stamp.read_bytes() == before


def test_a_stamp_from_another_paddle_with_the_same_tensorrt_and_gpu_is_left_alone(root, tmp_path):
    """PD-TRT-004 judges the TensorRT version and the GPU; the Paddle version is on record only."""
    stamp = root / "cache/fresh/paddle-doctor-cache.json"
    stamp.write_text(json.dumps({**T4_TRT86, "paddle": "2.5.2"}))
    before = stamp.read_bytes()
    result = doctor(root, tmp_path, "stamp-cache")
    assert result.returncode == 0 and "already says so" in result.stdout and "paddle 2.5.2" in result.stdout, result.stderr
    assert stamp.read_bytes() == before


def test_engines_stamped_by_another_machine_are_not_restamped_without_force(root, tmp_path):
    stamp = root / "cache/fresh/paddle-doctor-cache.json"
    stamp.write_text(json.dumps({"tensorrt": "8.5.3", "gpu": "NVIDIA A10", "compute_capability": "8.6"}))
    before = stamp.read_bytes()
    line = one_line_error(doctor(root, tmp_path, "stamp-cache"))
    assert line == ("paddle-doctor: error: /cache/fresh/paddle-doctor-cache.json says the 1 engines were built for "
                    "tensorrt 8.5.3 (here 8.6.1), gpu NVIDIA A10 (here Tesla T4), compute_capability 8.6 (here 7.5); "
                    "rebuild them here (remove trt_serialized_* and warm up) or pass --force")
    assert stamp.read_bytes() == before
    assert doctor(root, tmp_path, "stamp-cache", "--force").returncode == 0
    assert json.loads(stamp.read_text()) == T4_TRT86


@pytest.mark.parametrize("change, nvml, settings, expected", [
    (lambda root: (root / "cache/fresh/trt_serialized_5e6f").unlink(), True, SERVICE,
     "no serialized engines (trt_serialized_*) in /cache/fresh: run the warm-up that builds them with use_static=True first"),
    (None, True, {**SERVICE, "tensorrt": {"enabled": False}},
     "the service does not enable TensorRT (tensorrt.enabled in --config): there are no engines to stamp"),
    (None, False, SERVICE, "cannot tell the gpu here, so the stamp would say nothing"),
], ids=["no-engines", "no-tensorrt", "gpu-unknown"])
def test_nothing_is_written_when_there_is_nothing_true_to_stamp(root, tmp_path, change, nvml, settings, expected):
    if change:
        change(root)
    line = one_line_error(doctor(root, tmp_path, "stamp-cache", settings=settings, nvml=nvml))
    assert line.startswith("paddle-doctor: error: ") and expected in line
    assert not (root / "cache/fresh/paddle-doctor-cache.json").exists()


def test_a_stamp_that_cannot_be_written_is_a_one_line_error(root, tmp_path):
    (root / "cache/fresh/paddle-doctor-cache.json").mkdir()  # fails for root too, unlike mode bits
    line = one_line_error(doctor(root, tmp_path, "stamp-cache"))
    assert line.startswith("paddle-doctor: error: ") and "cannot write the stamp (Is a directory)" in line
    assert not list((root / "cache/fresh").glob(".*.tmp"))
