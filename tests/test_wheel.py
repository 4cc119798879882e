"""The built wheel, installed into a fresh virtual environment, works on its own.

It installs only under the ``paddle_doctor`` namespace (``doctor`` and ``checks`` are names of
unrelated PyPI distributions), carries rules.yaml, the JSON schema and the recorder's C module, and
runs where Paddle is not installed at all. Without a compiler the install goes on and the recorder
notes runs in Python; ``PADDLE_DOCTOR_NO_EXTENSIONS=1`` builds a wheel for every Python.
"""

import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import venv
import zipfile
from pathlib import Path

import click
import pytest
from conftest import REPO, fixture_root


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    """The sdist, and the wheel built from it (as ``python -m build`` does), in one folder."""
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "build", "-q", "--outdir", str(out), str(REPO)],
                   check=True, capture_output=True, timeout=600)
    return out


@pytest.fixture(scope="module")
def wheel(dist):
    (path,) = dist.glob("paddle_doctor-*.whl")
    return path


def wheel_built(sdist: Path, out: Path, **env: str) -> Path:
    """The wheel built from ``sdist`` with ``env`` added to the build's environment."""
    subprocess.run([sys.executable, "-m", "build", "-q", "--wheel", "--outdir", str(out), str(sdist)],
                   check=True, capture_output=True, timeout=600, env={**os.environ, **env})
    (path,) = out.glob("paddle_doctor-*.whl")
    return path


@pytest.fixture(scope="module")
def wheel_for_every_python(dist, tmp_path_factory):
    (sdist,) = dist.glob("paddle_doctor-*.tar.gz")
    return wheel_built(sdist, tmp_path_factory.mktemp("pure"), PADDLE_DOCTOR_NO_EXTENSIONS="1")


def recorder_in(python: Path) -> str:
    """What notes the runs of a service recorded with this Python's paddle-doctor."""
    said = subprocess.run([str(python), "-c", "from paddle_doctor.recorder.live import Process; print(Process().recorder)"],
                          capture_output=True, text=True, timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert said.returncode == 0, said.stderr[-2000:]
    return said.stdout.strip()


def fresh_venv(where: Path, wheel: Path) -> Path:
    """A new venv with ``wheel`` (and nothing it depends on) installed: its Python."""
    venv.create(where, with_pip=True)
    subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", str(wheel)],
                   check=True, capture_output=True, timeout=600)
    return where / "bin" / "python"


def test_the_sdist_carries_the_top_level_data_and_no_link(dist):
    (sdist,) = dist.glob("paddle_doctor-*.tar.gz")
    with tarfile.open(sdist) as archive:
        members = {member.name.split("/", 1)[1]: member for member in archive.getmembers() if "/" in member.name}
    assert {"rules.yaml", "wrappers.yaml", "doctor/recorder/paddle_doctor_record.pth", "checks/__init__.py"} <= set(members)
    assert not any(member.issym() for member in members.values())


def test_wheel_installs_only_the_unique_namespace(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert any(name.startswith("paddle_doctor/recorder/_native.") and name.endswith(".so") for name in names)
    top_level = {name.split("/")[0] for name in names}
    assert top_level == {"paddle_doctor", "paddle_doctor_record.pth", next(n for n in top_level if n.endswith(".dist-info"))}
    assert "paddle_doctor/rules.yaml" in names and "paddle_doctor/wrappers.yaml" in names
    assert zipfile.ZipFile(wheel).read("paddle_doctor/rules.yaml") == (REPO / "rules.yaml").read_bytes()
    assert "paddle_doctor/schemas/report.schema.json" in names
    assert "paddle_doctor/checks/cpu_budget.py" in names
    # every package folder of the checkout is in the wheel (setup.py finds them: no list to keep in step)
    folders = {"paddle_doctor/" + "/".join(init.parent.relative_to(REPO / "doctor").parts) for init in (REPO / "doctor").rglob("__init__.py")}
    assert {folder.rstrip("/") + "/__init__.py" for folder in folders} <= set(names), folders
    entry_points = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith("entry_points.txt"))).decode()
    # the built-in checks are listed in code (paddle_doctor.checks.BUILT_IN), not published as entry points
    assert "[paddle_doctor.checks]" not in entry_points and "paddle-doctor = paddle_doctor.entry:main" in entry_points


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
    both = ("from paddle_doctor.judge.rules import load_rules\nfrom paddle_doctor.judge.wrappers import load_wrappers\n"
            "print(load_rules().source, len(load_rules().rules), load_wrappers().source, len(load_wrappers().wrappers))")
    read = subprocess.run([str(env_dir / "bin" / "python"), "-c", both], capture_output=True, text=True, timeout=60, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
    rules, rule_count, wrappers, wrapper_count = read.stdout.split()
    site = str(env_dir / "lib")
    assert rules.startswith(site) and rules.endswith("/site-packages/paddle_doctor/rules.yaml"), read.stderr
    assert wrappers.startswith(site) and wrappers.endswith("/site-packages/paddle_doctor/wrappers.yaml")
    assert int(rule_count) > 50 and int(wrapper_count) >= 7
    healthcheck = subprocess.run([str(env_dir / "bin" / "paddle-doctor"), "healthcheck", "--root",
                                  str(fixture_root("intel-noavx2-v1-quota")), "--threads", "8"],
                                 capture_output=True, text=True, timeout=60)
    assert healthcheck.stdout.startswith("unhealthy: PD-CPU-010 8 compute threads on a budget of 2 CPUs")
    assert healthcheck.returncode == 1


def older_python(version: str) -> str:
    """An interpreter of this version that runs (a pyenv shim on the PATH may not)."""
    candidates = [shutil.which(f"python{version}"), *sorted(glob.glob(os.path.expanduser(f"~/.pyenv/versions/{version}.*/bin/python{version}")))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True, timeout=60).returncode == 0:
            return candidate
    pytest.skip(f"no python{version} on this machine to try the wheel with")


def install_for(python: str, wheel, target, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", *extra, "--target", str(target), str(wheel)],
                          capture_output=True, text=True, timeout=300)


def test_requires_python_is_the_oldest_python_it_runs_on(wheel_for_every_python, tmp_path):
    """The floor the wheel declares is where the code really starts to work: 3.10 runs the doctor
    (its dependencies, pure Python, from this venv), 3.9 is refused at install, and forced, fails.
    (The C module is built for 3.10 and later in tests/test_record_native.py.)"""
    wheel = wheel_for_every_python
    assert wheel.name.endswith("-py3-none-any.whl")
    metadata = zipfile.ZipFile(wheel).read(next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith("METADATA"))).decode()
    assert "Requires-Python: >=3.10" in metadata.splitlines()
    assert "(Python ≥ 3.10, Linux" in (REPO / "README.md").read_text()
    dependencies = str(Path(click.__file__).resolve().parent.parent)
    oldest = older_python("3.10")
    assert install_for(oldest, wheel, tmp_path / "310").returncode == 0
    ran = subprocess.run([oldest, "-m", "paddle_doctor", "--root", str(fixture_root("intel-noavx2-v1-quota")), "--threads", "8", "--json"],
                         capture_output=True, text=True, timeout=120, env={"PYTHONPATH": f"{tmp_path / '310'}:{dependencies}", "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 1 and json.loads(ran.stdout)["tool"]["name"] == "paddle-doctor", ran.stderr[-2000:]
    too_old = older_python("3.9")
    refused = install_for(too_old, wheel, tmp_path / "39")
    assert refused.returncode != 0 and "requires a different Python" in refused.stderr, refused.stderr
    assert install_for(too_old, wheel, tmp_path / "39", "--ignore-requires-python").returncode == 0
    forced = subprocess.run([too_old, "-m", "paddle_doctor", "rules"], capture_output=True, text=True, timeout=120,
                            env={"PYTHONPATH": f"{tmp_path / '39'}:{dependencies}", "PATH": "/usr/bin:/bin"})
    assert forced.returncode != 0


def test_wheel_starts_the_record_hook_only_when_asked(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    assert recorder_in(fresh_venv(env_dir, wheel)) == "native"
    probe = "import sys; print(sorted(m for m in sys.modules if m.startswith(('paddle_doctor', 'paddle'))))"
    off = subprocess.run([str(env_dir / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=60,
                         env={"PATH": "/usr/bin:/bin"})
    on = subprocess.run([str(env_dir / "bin" / "python"), "-c", probe], capture_output=True, text=True, timeout=60,
                        env={"PATH": "/usr/bin:/bin", "PADDLE_DOCTOR_RECORD": "1"})
    assert off.stdout.strip() == "[]", off.stderr
    assert "'paddle_doctor.recorder.hook'" in on.stdout and "'paddle'" not in on.stdout, on.stderr


def test_without_a_compiler_the_install_goes_on_and_runs_are_noted_in_python(dist, wheel_for_every_python, tmp_path):
    (sdist,) = dist.glob("paddle_doctor-*.tar.gz")
    built = wheel_built(sdist, tmp_path / "out", CC="false")
    assert not any(name.endswith(".so") for name in zipfile.ZipFile(built).namelist())
    assert recorder_in(fresh_venv(tmp_path / "no-compiler", built)) == "python"
    assert recorder_in(fresh_venv(tmp_path / "pure", wheel_for_every_python)) == "python"


@pytest.mark.slow  # builds an editable wheel
def test_an_editable_install_reads_the_data_files_from_the_checkout(tmp_path):
    """What `pip install -e .` (the README's, and CI's) gives: the package is the checkout's folders and
    rules.yaml / wrappers.yaml are read at its top level; no built-in check is published as an entry point."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    pip = subprocess.run([str(env_dir / "bin" / "python"), "-m", "pip", "install", "-q", "--no-deps", "-e", str(REPO)],
                         capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stderr[-3000:]
    both = "from paddle_doctor.judge.rules import load_rules\nfrom paddle_doctor.judge.wrappers import load_wrappers\nprint(load_rules().source, load_wrappers().source)"
    read = subprocess.run([str(env_dir / "bin" / "python"), "-c", both], capture_output=True, text=True, timeout=60,
                          cwd=tmp_path, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(Path(click.__file__).resolve().parent.parent)})
    assert read.stdout.split() == [str(REPO / "rules.yaml"), str(REPO / "wrappers.yaml")], read.stderr[-2000:]
    (entry_points,) = (env_dir / "lib").glob("python3*/site-packages/paddle_doctor-*.dist-info/entry_points.txt")
    assert "[paddle_doctor.checks]" not in entry_points.read_text()
