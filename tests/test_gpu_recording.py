"""scripts/gpu-check, and the replay of what it recorded on a real H200.

The script is run here with the fake pynvml, so that it is known to work before it meets the GPU
machine. The replay test reads tests/fixtures/gpu/h200-facts.json, recorded by the script on an
NVIDIA H200 (driver 580, CUDA 13) that has no Paddle GPU wheel; it skips until that recording
exists.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from conftest import FIXTURES, REPO, report_json, run_doctor, statuses
from gpu_helpers import FAKE_NVML, GPU_ENV, GPU_RULES
from paddle_doctor.facts.loading import load_facts
from test_layout import python_without_the_project

RECORDING = FIXTURES / "gpu" / "h200-facts.json"
TRT_RULES = [rule for rule in GPU_RULES if rule.startswith("PD-TRT-")]


@pytest.mark.slow  # the script probes Paddle
def test_gpu_check_script_runs_the_doctor_from_the_source_tree(tmp_path):
    python, bare = python_without_the_project()  # paddle_doctor is not importable: the script runs it from the tree
    env = {name: value for name, value in os.environ.items() if name not in GPU_ENV and name != "PYTHONPATH"}
    env.update(PYTHON=python, PYTHONPATH=f"{FAKE_NVML}:{bare['PYTHONPATH']}", PYTHONNOUSERSITE="1",
               PADDLE_DOCTOR_FAKE_NVML=str(FIXTURES / "nvml" / "h200-driver-580.json"))
    result = subprocess.run(["bash", str(REPO / "scripts" / "gpu-check"), str(tmp_path)], capture_output=True, text=True,
                            env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "GPU 0: NVIDIA H200, compute capability 9.0" in result.stdout
    facts = json.loads((tmp_path / "facts.json").read_text())
    assert facts["service"]["device"] == "gpu" and facts["gpu"]["driver_version"] == "580.65.06"
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["check_errors"] == []
    assert statuses(report)["PD-PREC-002"] == "fail"  # the checks were found from checks/__init__.py's list
    assert "PD-PREC-002" in (tmp_path / "report.txt").read_text()


@pytest.mark.skipif(not RECORDING.exists(), reason=(
    "no recording from a real GPU yet: run scripts/gpu-check on the H200 machine and copy OUTDIR/facts.json "
    "to tests/fixtures/gpu/h200-facts.json"))
def test_replay_of_a_real_h200_without_a_paddle_gpu_wheel():
    facts = load_facts(RECORDING)
    assert facts.gpu.status == "ok", facts.gpu.reason
    device = facts.gpu.devices[facts.service.gpu_device_id]
    assert "H200" in device.name and device.compute_capability == "9.0"
    assert int(facts.gpu.driver_version.split(".")[0]) >= 580
    assert facts.service.device == "gpu" and facts.paddle.with_cuda is not True
    report = report_json(run_doctor("check", "--json", "--facts", str(RECORDING)))
    expected = {
        # NVML reached the driver and sees the GPU
        "PD-GPU-003": "pass", "PD-GPU-006": "pass", "PD-GPU-007": "pass", "PD-GPU-008": "pass", "PD-GPU-009": "pass",
        # no GPU build of Paddle: nothing to compare with the driver, cuDNN or the architectures
        "PD-GPU-001": "skip", "PD-GPU-002": "skip", "PD-GPU-004": "skip",
        # the service is declared a GPU service: a CPU wheel there is a mismatch; no Paddle at all cannot be compared
        "PD-GPU-005": "fail" if facts.paddle.status == "ok" else "skip",
        # a lent machine runs nothing else, unless NVML listed compute processes
        "PD-GPU-010": "warn" if device.processes else "pass",
        "PD-MEM-002": "pass",  # a 1 GiB pool on 141 GB
        "PD-PREC-002": "fail",  # FP32 on a GPU with tensor cores
        "PD-PREC-003": "pass",
        **dict.fromkeys(TRT_RULES, "skip"),  # TensorRT is not enabled
    }
    assert {rule: statuses(report)[rule] for rule in GPU_RULES} == expected
