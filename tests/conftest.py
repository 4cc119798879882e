"""Shared test helpers: the real CLI in a subprocess, fixture roots, hand-built Facts."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paddle_doctor.context import ProbeContext
from paddle_doctor.facts import Facts, ServiceFacts
from paddle_doctor.probes import collect_facts

FIXTURES = Path(__file__).parent / "fixtures"
ROOTS = FIXTURES / "roots"
REPO = Path(__file__).resolve().parent.parent

# Every doctor the tests start looks for the service's process only where a test asks (--pid):
# Paddle processes of other tests running meanwhile must not become "the service".
os.environ.setdefault("PADDLE_DOCTOR_PID", "none")


def fixture_root(name: str) -> Path:
    path = ROOTS / name
    assert path.is_dir(), f"missing fixture tree {path}"
    return path


def facts_from_root(name: str, environ: dict[str, str] | None = None, **service) -> Facts:
    """Facts probed from a recorded fixture tree (no Paddle probe)."""
    return collect_facts(ProbeContext(fixture_root(name)), ServiceFacts(**service), None, 5.0, environ=environ or {})


def run_doctor(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
               unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """The installed CLI, exactly as a user runs it; ``unset`` drops variables of the test's own environment."""
    full_env = {name: value for name, value in os.environ.items() if name not in unset}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "paddle_doctor", *args],
        capture_output=True, text=True, env=full_env, timeout=timeout,
    )


def report_json(result: subprocess.CompletedProcess) -> dict:
    assert result.stdout, result.stderr
    return json.loads(result.stdout)


def report_with_its_exit(result: subprocess.CompletedProcess) -> dict:
    """The JSON report, checked to say the exit code the doctor really ended with (0 or 1 by its findings)."""
    report = report_json(result)
    assert result.returncode == report["exit_code"], (result.returncode, report["exit_code"], result.stderr[-1000:])
    return report


def statuses(report: dict) -> dict[str, str]:
    return {finding["rule_id"]: finding["status"] for finding in report["findings"]}


@pytest.fixture(scope="session")
def models(tmp_path_factory) -> dict[str, Path]:
    """The fixture models, built once per test session with the project's own paddle.jit.save code."""
    from paddle_doctor.modelzoo import BUILDS, build_model

    root = tmp_path_factory.mktemp("models")
    return {f"{kind}-{fmt}": build_model(kind, fmt, root / f"{kind}-{fmt}") for kind, formats in BUILDS.items() for fmt in formats}


@pytest.fixture(scope="session")
def report_schema() -> dict:
    return json.loads((REPO / "doctor" / "schemas" / "report.schema.json").read_text())


# Tests that need a real Paddle predictor, a Paddle import or a wheel build: the full suite runs them
# (.ci/run); `pytest -m "not slow"` leaves them out for the edit-test loop.
SLOW_FIXTURES = {"models"}
SLOW_MODULES = {"test_paddle_probe", "test_wheel", "test_faults_verify", "test_service_process", "test_cgroup_live"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or item.module.__name__ in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
