"""GPU test helpers: the fake NVML module, recorded Paddle builds and the CLI run against both."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import yaml
from conftest import FIXTURES, run_doctor

FAKE_NVML = FIXTURES / "fake_nvml"
GPU_ROOT = "gpu-t4-docker-cu118"
GPU_ENV = ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES", "LD_LIBRARY_PATH",
           "PADDLE_DOCTOR_FAKE_NVML")
GPU_RULES = (
    "PD-GPU-001", "PD-GPU-002", "PD-GPU-003", "PD-GPU-004", "PD-GPU-005", "PD-GPU-006", "PD-GPU-007",
    "PD-GPU-008", "PD-GPU-009", "PD-GPU-010", "PD-MEM-002", "PD-PREC-002", "PD-PREC-003",
    "PD-TRT-001", "PD-TRT-002", "PD-TRT-003", "PD-TRT-004", "PD-TRT-005", "PD-TRT-006",
)


def fake_paddle(folder: Path, recording: str, **overrides) -> str:
    """An interpreter stand-in that prints what the Paddle child printed for a recorded build."""
    data = json.loads((FIXTURES / "paddle" / f"{recording}.json").read_text())
    output = folder / f"{recording}.out"
    output.write_text(f"META {json.dumps(data['meta'])}\nRESULT {json.dumps({**data['result'], **overrides})}\n")
    python = folder / f"python-{recording}"
    python.write_text(f"#!/bin/sh\ncat '{output}'\n")
    python.chmod(python.stat().st_mode | stat.S_IEXEC)
    return str(python)


def service_config(folder: Path, settings: dict) -> str:
    path = folder / "service.yaml"
    path.write_text(yaml.safe_dump(settings))
    return str(path)


def fake_nvml_env(scenario: Path) -> dict[str, str]:
    """The environment that puts the fake pynvml first on the NVML child's path, answering from ``scenario``."""
    path = os.pathsep.join(filter(None, [str(FAKE_NVML), os.environ.get("PYTHONPATH")]))
    return {"PYTHONPATH": path, "PADDLE_DOCTOR_FAKE_NVML": str(scenario)}


def run_with_fake_nvml(*args: str, scenario: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The CLI with the fake pynvml answering from the recorded ``scenario``."""
    scenario_env = fake_nvml_env(FIXTURES / "nvml" / f"{scenario}.json")
    return run_doctor(*args, env={**scenario_env, **(env or {})}, unset=GPU_ENV)
