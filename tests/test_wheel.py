"""The built wheel, installed into a fresh virtual environment, works on its own.

It installs only under the ``paddle_doctor`` namespace (``doctor`` and ``checks`` are names of
unrelated PyPI distributions), carries rules.yaml and the JSON schema, and runs where Paddle is
not installed at all.
"""

import json
import subprocess
import sys
import venv
import zipfile

import pytest

from conftest import REPO, fixture_root


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(REPO)],
                   check=True, capture_output=True, timeout=300)
    (path,) = out.glob("paddle_doctor-*.whl")
    return path


def test_wheel_installs_only_the_unique_namespace(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    top_level = {name.split("/")[0] for name in names}
    assert top_level == {"paddle_doctor", "paddle_doctor_record.pth", next(n for n in top_level if n.endswith(".dist-info"))}
    assert "paddle_doctor/rules.yaml" in names
    assert "paddle_doctor/schemas/report.schema.json" in names
    assert "paddle_doctor/checks/cpu_budget.py" in names
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    assert "[paddle_doctor.checks]" in entry_points and "paddle-doctor = paddle_doctor.entry:main" in entry_points


def test_wheel_runs_in_a_fresh_venv_without_paddle(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    pip = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr
    result = subprocess.run([str(env_dir / "bin" / "paddle-doctor"), "--json"], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)
    report = json.loads(result.stdout)
    found = {f["rule_id"]: f["status"] for f in report["findings"]}
    assert found["PD-PADDLE-001"] == "fail"  # no Paddle in this venv
    assert report["host"]["paddle_status"] == "missing"
    assert result.returncode == 1
    assert subprocess.run([str(env_dir / "bin" / "paddle-doctor"), "explain", "PD-CPU-010"],
                          capture_output=True, timeout=60).returncode == 0
    healthcheck = subprocess.run([str(env_dir / "bin" / "paddle-doctor"), "healthcheck", "--root",
                                  str(fixture_root("intel-noavx2-v1-quota")), "--threads", "8"],
                                 capture_output=True, text=True, timeout=60)
    assert healthcheck.stdout.startswith("unhealthy: PD-CPU-010 8 compute threads on a budget of 2 CPUs")
    assert healthcheck.returncode == 1


def test_wheel_starts_the_record_hook_only_when_asked(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True, timeout=600)
    probe = "import sys; print(sorted(m for m in sys.modules if m.startswith(('paddle_doctor', 'paddle'))))"
    off = subprocess.run([str(env_dir / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin"})
    on = subprocess.run([str(env_dir / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=60,
                        env={"PATH": "/usr/bin:/bin", "PADDLE_DOCTOR_RECORD": "1"})
    assert off.stdout.strip() == "[]", off.stderr
    assert "'paddle_doctor.record.hook'" in on.stdout and "'paddle'" not in on.stdout, on.stderr
