"""The Paddle probe against the real wheel, and against interpreters that are missing Paddle,
crash with a signal, or hang."""

import os
import signal
import stat
import sys
import venv
from pathlib import Path

import pytest
from conftest import report_json, run_doctor, statuses
from paddle_doctor.base.interpreter import Interpreter
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.probes.paddle_import import probe_paddle


def fake_python(tmp_path: Path, body: str) -> str:
    """An executable that stands in for a Python interpreter, for the crash and hang cases."""
    path = tmp_path / "python"
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_real_paddle_wheel_is_probed():
    facts = probe_paddle(ProbeContext("/"), Interpreter(sys.executable), timeout=120)
    assert facts.status == "ok", facts.reason
    assert facts.distribution == "paddlepaddle"
    assert facts.version.split(".")[0] == "3"
    assert facts.with_cuda is False
    assert facts.cuda_version == "False"
    assert facts.compiled_with_mkldnn is True
    assert facts.mkldnn_default_on is True
    assert facts.default_threads == 1
    assert facts.trt_compile_version == [0, 0, 0]
    assert (facts.tensorrt_version, facts.cuda_archs) == (None, [])  # 'None' and [] on the CPU wheel
    assert set(facts.supports) >= {"avx512f", "bfloat16", "int8"}
    assert facts.import_seconds > 0


def test_python_without_paddle_is_reported_missing(tmp_path):
    env_dir = tmp_path / "bare"
    venv.create(env_dir, with_pip=False)
    result = run_doctor("--json", "--python", str(env_dir / "bin" / "python"))
    report = report_json(result)
    assert statuses(report)["PD-PADDLE-001"] == "fail"
    assert report["host"]["paddle_status"] == "missing"
    assert result.returncode == 1


@pytest.mark.parametrize("sig", [signal.SIGILL, signal.SIGSEGV])
def test_import_killed_by_signal_becomes_a_finding(tmp_path, sig):
    meta = 'echo \'META {"distribution": "paddlepaddle", "version": "3.3.1", "python": "x"}\''
    python = fake_python(tmp_path, f"{meta}\nkill -{sig.name[3:]} $$")
    facts = probe_paddle(ProbeContext("/"), Interpreter(python), timeout=30)
    assert (facts.status, facts.signal, facts.version) == ("crashed", sig.name, "3.3.1")
    result = run_doctor("--json", "--python", python)
    report = report_json(result)
    crash = next(f for f in report["findings"] if f["rule_id"] == "PD-PADDLE-002")
    assert crash["status"] == "fail" and sig.name in crash["message"]
    assert result.returncode == 1


def test_hanging_import_is_cut_at_the_timeout(tmp_path):
    python = fake_python(tmp_path, "sleep 30")
    facts = probe_paddle(ProbeContext("/"), Interpreter(python), timeout=1)
    assert facts.status == "timeout"
    assert "1 s" in facts.reason


def test_failing_import_keeps_the_last_error_line(tmp_path):
    python = fake_python(tmp_path, "echo 'ImportError: libgomp.so.1: cannot open shared object file' >&2; exit 1")
    facts = probe_paddle(ProbeContext("/"), Interpreter(python), timeout=30)
    assert facts.status == "failed"
    assert "libgomp.so.1" in facts.reason


def test_a_paddle_directory_in_the_working_directory_does_not_shadow_the_wheel(tmp_path):
    (tmp_path / "paddle").mkdir()
    (tmp_path / "paddle" / "__init__.py").write_text("raise SystemExit('shadowed')\n")
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        facts = probe_paddle(ProbeContext("/"), Interpreter(sys.executable), timeout=120)
    finally:
        os.chdir(cwd)
    assert facts.status == "ok"
