"""Shared test helpers: the real CLI (see cli_runs), fixture roots, hand-built Facts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runs import import_what_a_run_imports, run_doctor, run_doctor_process  # noqa: F401 (the tests import them from here)
from paddle_doctor.facts import Facts, ServiceConfig
from paddle_doctor.probes import collect_facts
from paddle_doctor.probes.context import ProbeContext

FIXTURES = Path(__file__).parent / "fixtures"
ROOTS = FIXTURES / "roots"
REPO = Path(__file__).resolve().parent.parent

# Every doctor the tests start looks for the service's process only where a test asks (--pid):
# Paddle processes of other tests running meanwhile must not become "the service".
os.environ.setdefault("PADDLE_DOCTOR_PID", "none")
import_what_a_run_imports(ROOTS / "intel-noavx2-v1-quota")


# The suite beside a competing busy loop pinned to this CPU (scripts/test runs the whole suite so):
# a noisy machine is part of what is tested.
BUSY_LOOP = "PADDLE_DOCTOR_TEST_BUSY_LOOP"
SPIN = "import os, sys\nos.sched_setaffinity(0, {int(sys.argv[1])})\nprint('spinning', flush=True)\nwhile True:\n    pass\n"


# started by a launcher that exits at once: the busy loop is no child of the test session, whose tests
# check that they leave no child behind
LAUNCH = "import subprocess, sys\nprint(subprocess.Popen([sys.executable, '-c', sys.argv[1], sys.argv[2]]).pid, flush=True)\n"


@pytest.fixture(scope="session", autouse=True)
def competing_busy_loop():
    """With PADDLE_DOCTOR_TEST_BUSY_LOOP=CPU, a busy loop pinned to that CPU, seen spinning before
    the first test, for the whole session; its pid, or None without it."""
    cpu = os.environ.get(BUSY_LOOP)
    if cpu is None:
        yield None
        return
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCH, SPIN, cpu], stdout=subprocess.PIPE, text=True)
    assert launcher.stdout is not None
    pid = int(launcher.stdout.readline())
    try:
        launcher.wait(timeout=30)
        assert launcher.stdout.readline().strip() == "spinning"  # the busy loop writes to the launcher's pipe
        yield pid
    finally:
        os.kill(pid, signal.SIGKILL)
        launcher.stdout.close()


def probe_process(ctx: ProbeContext, pid: int | None, sample_s: float = 1.0):
    """A service process probed as the doctor probes it: its reads, then the ``sample_s`` wait for its busy threads."""
    from paddle_doctor.probes.process import open_service_process

    facts, sample = open_service_process(ctx, pid, sample_s)
    return sample.finish(facts) if sample is not None else facts


def fixture_root(name: str) -> Path:
    path = ROOTS / name
    assert path.is_dir(), f"missing fixture tree {path}"
    return path


def facts_from_root(name: str, environ: dict[str, str] | None = None, **service) -> Facts:
    """Facts probed from a recorded fixture tree (no Paddle probe)."""
    return collect_facts(ProbeContext(fixture_root(name)), ServiceConfig(**service), None, 5.0, environ=environ or {})


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
    from paddle_doctor.verify.modelzoo import BUILDS, build_model

    root = tmp_path_factory.mktemp("models")
    return {f"{kind}-{fmt}": build_model(kind, fmt, root / f"{kind}-{fmt}") for kind, formats in BUILDS.items() for fmt in formats}


@pytest.fixture(scope="session")
def report_schema() -> dict:
    return json.loads((REPO / "doctor" / "schemas" / "report.schema.json").read_text())


# Tests that import Paddle, run a real predictor or measurement, build a model or a wheel, or drive a
# real service: the full suite runs them (scripts/test); `pytest -m "not slow"` leaves them out for the
# edit-test loop. Those that use one of these fixtures or sit in one of these modules are marked here,
# the others carry the mark themselves.
SLOW_FIXTURES = {"models", "measured_cnn", "live_baseline_file"}
SLOW_MODULES = {"test_paddle_probe", "test_wheel", "test_faults_verify", "test_service_process", "test_cgroup_live"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())) or item.module.__name__ in SLOW_MODULES:
            item.add_marker(pytest.mark.slow)
