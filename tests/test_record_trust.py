"""A record is the word of whoever could write it: the doctor (root here) reads a service's record only
as a regular file, no link, that the service's user owns, in a folder of that user's that no one else
may write to. Real users: the service runs as one (setpriv), another plants what it can; a refused
record is one line saying why, and the rest of the report follows, with nothing of the file in it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FIXTURES, report_json, run_doctor
from nonroot import NOBODY, needs_root, shared_tmp  # noqa: F401 (shared_tmp is a fixture)
from paddle_doctor.recorder.location import start_ticks_of
from test_service_process import until_its_user_is

pytestmark = needs_root

SERVICE_USER = 64321  # the service's user in these tests: no account, no files of its own elsewhere
PLANTED = {"threads": 64, "onednn": False, "runs": 123456}  # what another user would have the doctor report
SECRET = "ROOT-ONLY-S3CRET-4242"
RUN = ("--json", "--no-paddle", "--no-gpu")


def as_user(uid: int, code: str, *args: str, stdin: str = "") -> None:
    """Python ``code`` run as the user ``uid`` (its group the same number, no other groups)."""
    subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", sys.executable, "-c", code, *args],
                   input=stdin, text=True, check=True, timeout=60)


def write_as(uid: int, path: Path, text: str) -> None:
    as_user(uid, "import sys; open(sys.argv[1], 'w').write(sys.stdin.read())", str(path), stdin=text)


def folder_of(uid: int, path: Path, mode: int = 0o700) -> Path:
    """A folder the user ``uid`` owns, as its recorder makes it (0700), or with ``mode``."""
    path.mkdir()
    os.chown(path, uid, uid)
    path.chmod(mode)
    return path


@contextlib.contextmanager
def service_of(uid: int, records: Path | None = None) -> Iterator[subprocess.Popen]:
    """A sleeping process of the user ``uid`` (recording in ``records`` where given), its user dropped to before it is yielded."""
    env = {"PATH": os.environ["PATH"], **({"PADDLE_DOCTOR_RECORD_DIR": str(records)} if records else {})}
    process = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "sleep", "120"], env=env)
    try:
        until_its_user_is(process.pid, uid)
        yield process
    finally:
        process.kill()
        process.wait()


def record_for(pid: int, **values) -> str:
    """A RapidOCR service's record (tests/fixtures/records/rapidocr.json) as process ``pid`` would write it,
    every predictor running ``threads`` and ``onednn`` with ``runs`` runs where given."""
    data = json.loads((FIXTURES / "records" / "rapidocr.json").read_text())
    data["pid"], data["start_ticks"] = pid, start_ticks_of(pid)
    for predictor in data["predictors"]:
        for name in ("threads", "onednn"):
            predictor["config"]["cpu"][name] = values.get(name, predictor["config"]["cpu"][name])
        predictor["runs"]["runs"] = values.get("runs", predictor["runs"]["runs"])
    return json.dumps(data)


def record_name(pid: int) -> str:
    return f"{pid}-{start_ticks_of(pid)}.json"


def doctor_on(pid: int) -> tuple[dict, str]:
    """The report of the doctor, as root, on process ``pid``, and its stderr."""
    result = run_doctor("--pid", str(pid), *RUN, env={"PADDLE_DOCTOR_PID": ""})
    assert result.returncode in (0, 1), result.stderr
    return report_json(result), result.stderr


def refused(report: dict, stderr: str, path: Path, why: str) -> str:
    """The record at ``path`` refused in one line saying ``why``, its predictors not in the report; that line."""
    (line,) = [line for line in stderr.splitlines() if str(path) in line]
    assert line == f"paddle-doctor: {path}: not read: the record {why}; the rest of the report follows", line
    assert report["service"]["predictors"] == [] and report["service"]["record"] in line
    assert not [s for s in report["service"]["settings"] if s["origin"] == "record"]
    assert str(PLANTED["runs"]) not in json.dumps(report)
    return line


def claimed_default_folder() -> tuple[int, Path]:
    """A uid and its default record folder, made here (so another run of this test takes another):
    the folder is root's until the test gives it to whoever makes it."""
    for uid in range(62000, 63000):
        folder = Path(f"/tmp/paddle-doctor-record-{uid}")
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
            return uid, folder
    raise AssertionError("no free uid between 62000 and 63000 for a default record folder")


def test_a_record_another_user_planted_in_the_service_users_default_folder_is_not_read():
    uid, folder = claimed_default_folder()
    try:
        os.chown(folder, NOBODY, NOBODY)  # nobody got there first, as any user can in /tmp
        with service_of(uid) as service:
            path = folder / record_name(service.pid)
            write_as(NOBODY, path, record_for(service.pid, **PLANTED))
            report, stderr = doctor_on(service.pid)
    finally:
        shutil.rmtree(folder)
    refused(report, stderr, path,
            f"is in a folder that belongs to uid {NOBODY}, not to uid {uid}; "
            f"a record is read only where no user but the service's (uid {uid}) could have written it")


@pytest.mark.parametrize("mode, after, why", [
    (0o777, None, "is in a folder that is writable by users other than its owner (mode 0777)"),
    (0o1777, None, "is in a folder that is writable by users other than its owner (mode 1777)"),
    (0o733, 0o700, f"belongs to uid {NOBODY}, not to uid {SERVICE_USER}"),  # planted while the folder was open
])
def test_a_record_another_user_could_write_in_the_service_users_folder_is_not_read(shared_tmp, mode, after, why):
    records = folder_of(SERVICE_USER, shared_tmp / "records", mode)
    with service_of(SERVICE_USER, records) as service:
        path = records / record_name(service.pid)
        write_as(NOBODY, path, record_for(service.pid, **PLANTED))
        if after is not None:
            records.chmod(after)
        report, stderr = doctor_on(service.pid)
    refused(report, stderr, path,
            f"{why}; a record is read only where no user but the service's (uid {SERVICE_USER}) could have written it")


def test_the_service_users_own_record_in_its_own_folder_is_read(shared_tmp):
    records = folder_of(SERVICE_USER, shared_tmp / "records")
    with service_of(SERVICE_USER, records) as service:
        path = records / record_name(service.pid)
        write_as(SERVICE_USER, path, record_for(service.pid, threads=3))
        report, stderr = doctor_on(service.pid)
    assert f"read the record of process {service.pid} from {path}: 3 predictors" in stderr
    assert [p["config"]["cpu"]["threads"] for p in report["service"]["predictors"]] == [3, 3, 3]


def root_only(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(0o600)
    return path


@pytest.mark.parametrize("target", ["a root-only file", "no file"])
def test_a_record_that_is_a_link_is_not_followed_and_nothing_of_its_target_is_said(shared_tmp, tmp_path, target):
    secret = root_only(tmp_path / "secret.json", json.dumps({"schema_version": 1, "pid": SECRET, SECRET: 1}))
    records = folder_of(SERVICE_USER, shared_tmp / "records")
    with service_of(SERVICE_USER, records) as service:
        link = records / record_name(service.pid)
        pointed = str(secret) if target == "a root-only file" else str(tmp_path / "absent.json")
        as_user(SERVICE_USER, "import os, sys; os.symlink(sys.argv[1], sys.argv[2])", pointed, str(link))
        result = run_doctor("--pid", str(service.pid), *RUN, env={"PADDLE_DOCTOR_PID": ""})
    assert SECRET not in result.stdout + result.stderr and "absent" not in result.stdout + result.stderr
    refused(report_json(result), result.stderr, link,  # the same words whether the target exists or not: no oracle
            f"is a symbolic link; a record is read only where no user but the service's (uid {SERVICE_USER}) could have written it")


def test_a_record_folder_that_is_a_link_is_not_followed(shared_tmp, tmp_path):
    hidden = tmp_path / "hidden"  # root's: tmp_path is root's alone
    hidden.mkdir()
    records = shared_tmp / "records"
    with service_of(SERVICE_USER, records) as service:
        name = record_name(service.pid)
        root_only(hidden / name, record_for(service.pid, **PLANTED))
        os.chown(hidden / name, SERVICE_USER, SERVICE_USER)  # the file would pass; its folder is a link
        os.chown(shared_tmp, SERVICE_USER, SERVICE_USER)
        as_user(SERVICE_USER, "import os, sys; os.symlink(sys.argv[1], sys.argv[2])", str(hidden), str(records))
        report, stderr = doctor_on(service.pid)
    refused(report, stderr, records / name,
            f"is in a folder that is a symbolic link; a record is read only where no user but the service's (uid {SERVICE_USER}) "
            "could have written it")


@pytest.mark.parametrize("change, said", [
    (lambda data: data["predictors"][0]["config"]["cpu"].update(threads=SECRET), "Record.predictors[0].config.cpu.threads: expected int"),
    (lambda data: data["predictors"][1]["config"].update({SECRET: 1}), "Record.predictors[1].config: holds a field RecordedConfig has not"),
    (lambda data: data["predictors"][2]["config"]["summary"].update({SECRET: 1}), "Record.predictors[2].config.summary.*: expected str"),
    (lambda data: data.update(recorder=SECRET), "Record.recorder: expected one of"),
])
def test_a_record_that_does_not_decode_names_the_field_and_never_what_it_holds(shared_tmp, change, said):
    records = folder_of(SERVICE_USER, shared_tmp / "records")
    with service_of(SERVICE_USER, records) as service:
        data = json.loads(record_for(service.pid))
        change(data)
        path = records / record_name(service.pid)
        write_as(SERVICE_USER, path, json.dumps(data))
        result = run_doctor("--pid", str(service.pid), *RUN, env={"PADDLE_DOCTOR_PID": ""})
    assert SECRET not in result.stdout + result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "not a record" in line]
    assert line.startswith(f"paddle-doctor: {path}: not a record ({said}"), line
    assert report_json(result)["service"]["predictors"] == []
