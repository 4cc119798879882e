"""The service's interpreter runs as the service's user, or not at all: a root doctor that probes
the Paddle of a service of another user runs that user's Python (whose venv may hold a ``.pth``,
a ``sitecustomize`` or a ``paddle`` package of that user's) as that user, with its environment;
a doctor that cannot become that user runs none of it and asks for ``--python``.

The service is a real process started as uid 65534 from a real venv owned by 65534; the venv's
``.pth``, and a ``sitecustomize.py`` on the service's PYTHONPATH, write down the user they ran as
(the service itself runs with ``-S``, so they run only in the doctor's children)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import run_doctor
from nonroot import NOBODY, needs_root, shared_tmp  # noqa: F401 (shared_tmp is a fixture)

OTHER_USER = 65533  # a doctor that is neither root nor the service's user
MARKS = "marks"


def _base_python() -> str:
    """An interpreter uid 65534 can run (this one may live in root's home), to make the venv from."""
    for python in (sys._base_executable, "/usr/bin/python3"):
        try:
            subprocess.run([python, "-c", "pass"], user=NOBODY, group=NOBODY, extra_groups=[], check=True, capture_output=True)
        except (OSError, subprocess.CalledProcessError):
            continue
        return python
    pytest.skip("no Python that uid 65534 can run")


MARK = """\
import json, os

def write(which):
    opened = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            opened.append(os.readlink(f"/proc/self/fd/{fd}") if int(fd) > 2 else None)
        except OSError:
            pass
    with open(MARKS, "a") as out:
        out.write(json.dumps({"which": which, "uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
                              "home_writable": os.access(os.environ.get("HOME", "/nonexistent"), os.W_OK),
                              "variable": os.environ.get("ONLY_IN_SERVICE"), "opened": [path for path in opened if path]}) + "\\n")
"""


def _plant(folder: Path) -> tuple[Path, Path, Path]:
    """A venv owned by 65534 whose .pth, and a folder of 65534's with a sitecustomize.py (on the
    service's PYTHONPATH), write down who they ran as, in what environment, with which descriptors
    open: the venv's python, the folder and the file they write to."""
    env, path = folder / "venv", folder / "pythonpath"
    subprocess.run([_base_python(), "-m", "venv", "--without-pip", "--symlinks", str(env)], check=True)
    path.mkdir()
    marks = folder / MARKS
    site = next(env.glob("lib/python3*/site-packages"))
    (site / "planted_mark.py").write_text(f"MARKS = {str(marks)!r}\n{MARK}")
    (site / "planted.pth").write_text("import planted_mark; planted_mark.write('pth')\n")
    (path / "sitecustomize.py").write_text("import planted_mark\nplanted_mark.write('sitecustomize')\n")
    marks.touch()
    for entry in [folder, *folder.rglob("*")]:
        os.lchown(entry, NOBODY, NOBODY)
    marks.chmod(0o666)  # the doctor's other user may write it too: the test sees whatever ran
    return env / "bin" / "python", path, marks


def _start_service(python: Path, pythonpath: str) -> subprocess.Popen:
    """A process of uid 65534 that runs the planted venv's python (with -S: its site does not run there)."""
    process = subprocess.Popen(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", str(python), "-S", "-c",
         "import time; print('ready', flush=True); time.sleep(300)"],
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "PYTHONPATH": pythonpath, "ONLY_IN_SERVICE": "from-environ"},
        stdout=subprocess.PIPE, text=True)
    if process.stdout.readline().strip() != "ready":
        process.kill()
        pytest.fail("the service did not start")
    return process


@pytest.fixture
def service(shared_tmp):
    """The service without Paddle: its interpreter is probed, nothing is measured."""
    python, path, marks = _plant(shared_tmp)
    process = _start_service(python, str(path))
    try:
        yield process.pid, python, marks
    finally:
        process.kill()
        process.wait()


def _marks(marks: Path) -> list[dict]:
    return [json.loads(line) for line in marks.read_text().splitlines()]


@needs_root
@pytest.mark.slow
def test_a_root_doctor_runs_the_services_interpreter_as_the_services_user(service):
    pid, python, marks = service
    result = run_doctor("facts", "--pid", str(pid), "--no-gpu", timeout=180)
    facts = json.loads(result.stdout)
    assert facts["service_process"]["interpreter"] == str(python)
    ran = _marks(marks)
    assert {mark["which"] for mark in ran} == {"pth", "sitecustomize"}, ran
    for mark in ran:
        assert (mark["uid"], mark["gid"], mark["groups"]) == (NOBODY, NOBODY, [])
        assert mark["home_writable"]  # HOME=/nonexistent: a temporary home that user owns
        assert mark["variable"] == "from-environ"  # the service's own environment, not the doctor's
        assert all(path.startswith((str(marks.parent), "/proc/")) for path in mark["opened"]), mark  # nothing of the doctor's
    paddle = facts["paddle"]
    assert (paddle["python"], paddle["status"]) == (str(python), "missing")
    assert (paddle["ran_as_uid"], paddle["ran_as_gid"]) == (NOBODY, NOBODY)


@needs_root
@pytest.mark.slow
def test_an_interpreter_given_with_python_is_the_users_choice_and_runs_as_the_doctor(service):
    pid, python, marks = service
    facts = json.loads(run_doctor("facts", "--pid", str(pid), "--python", str(python), "--no-gpu", timeout=180).stdout)
    assert {(mark["which"], mark["uid"]) for mark in _marks(marks)} == {("pth", 0)}  # in the doctor's environment: no PYTHONPATH
    assert (facts["paddle"]["ran_as_uid"], facts["paddle"]["ran_as_gid"]) == (None, None)


@needs_root
@pytest.mark.slow
def test_a_doctor_that_cannot_become_the_services_user_runs_nothing_of_it_and_asks_for_python(service):
    pid, python, marks = service
    argv = ["setpriv", f"--reuid={OTHER_USER}", f"--regid={OTHER_USER}", "--clear-groups", sys.executable, "-m",
            "paddle_doctor", "facts", "--pid", str(pid), "--no-gpu"]
    result = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ), cwd="/", timeout=180)
    assert result.returncode == 0, result.stderr
    assert _marks(marks) == []
    said = [line for line in result.stderr.splitlines() if "--python" in line]
    assert said == [(f"paddle-doctor: the Paddle probe was not run: the service's process {pid} runs as uid {NOBODY} "
                     f"and the doctor, as uid {OTHER_USER}, cannot run its interpreter as that user; run the doctor as root, "
                     "or give --python with an interpreter you trust (it runs as the doctor)")]
    paddle = json.loads(result.stdout)["paddle"]
    assert paddle["status"] == "not_probed" and paddle["reason"] == said[0].removeprefix("paddle-doctor: ")


@needs_root
@pytest.mark.slow
def test_the_predictor_workers_of_a_measured_model_run_as_the_services_user(shared_tmp):
    """The service's PYTHONPATH gives its venv this checkout's Paddle: the Paddle probe and every
    predictor worker (graph coverage, measuring) run as 65534, and write where that user can."""
    from paddle_doctor.verify.modelzoo import build_model

    python, path, marks = _plant(shared_tmp)
    model = build_model("cnn", "pir", shared_tmp / "model")
    for entry in [model, *model.rglob("*")]:
        entry.chmod(entry.stat().st_mode | 0o055)
    site_packages = next(Path(sys.prefix).glob("lib/python3*/site-packages"))
    process = _start_service(python, f"{path}:{site_packages}")
    try:
        result = run_doctor("facts", "--pid", str(process.pid), "--model", str(model), "--budget", "4", "--no-gpu", timeout=300)
    finally:
        process.kill()
        process.wait()
    facts = json.loads(result.stdout)
    assert facts["paddle"]["status"] == "ok", facts["paddle"]["reason"]
    children = [mark for mark in _marks(marks) if mark["which"] == "sitecustomize"]
    assert len(children) >= 2  # the Paddle probe, then the workers
    assert {(mark["uid"], mark["gid"]) for mark in children} == {(NOBODY, NOBODY)}
    assert facts["graph"]["optimised"]["status"] == "read", facts["graph"]["optimised"]["reason"]
    assert facts["verification"]["error"] is None
    assert "Permission denied" not in result.stdout


@needs_root
def test_a_program_a_worker_of_the_service_s_user_wrote_is_read_only_where_that_user_alone_could_have_put_it(tmp_path):
    """The graph probe's worker, running as the service's user, writes the optimised program into a folder of that
    user's: the root doctor reads it there, and refuses a link the worker could have made in its place."""
    from paddle_doctor.graph.program import ProgramError, read_program

    folder = tmp_path / "optim"
    folder.mkdir(mode=0o700)
    os.chown(folder, NOBODY, NOBODY)
    secret = tmp_path / "root-only.json"
    secret.write_text('{"base_code": {"magic": "pir", "version": 1}, "program": {"regions": [{"blocks": []}]}, "ROOT-ONLY": "S3CRET"}')
    secret.chmod(0o600)
    (folder / "_optimized.json").symlink_to(secret)
    with pytest.raises(ProgramError, match="symbolic link"):
        read_program(folder / "_optimized.json", NOBODY)
    assert read_program(secret).ops == []  # the control: read as a file of the doctor's own, the same text is a program
    (folder / "_optimized.json").unlink()
    written = folder / "_optimized.json"
    written.write_text(secret.read_text())
    os.chown(written, NOBODY, NOBODY)
    assert read_program(written, NOBODY).ops == []
