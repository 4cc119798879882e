"""--output, facts -o and baseline --out: checked before any work, written whole, write errors named."""

import json
import os
import subprocess
import sys

import pytest
from conftest import fixture_root, run_doctor
from nonroot import needs_root, run_doctor_as_nobody, shared_tmp  # noqa: F401 (a fixture)

ROOT = str(fixture_root("intel-noavx2-v1-quota"))
WRITERS = {
    "report": lambda out: ["check", "--root", ROOT, "--json", "--output", out],
    "facts": lambda out: ["facts", "--root", ROOT, "--output", out],
    "baseline": lambda out: ["baseline", "--root", ROOT, "--out", out],
}


def one_line_error(result, *words: str) -> None:
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    for word in words:
        assert word in result.stderr


@pytest.mark.parametrize("kind", WRITERS)
def test_missing_folders_are_created_for_every_output(tmp_path, kind):
    out = tmp_path / "new" / "folder" / f"{kind}.json"
    result = run_doctor(*WRITERS[kind](str(out)))
    assert result.returncode == 0, result.stderr  # the recorded root has nothing at or above error
    assert json.loads(out.read_text())
    assert sorted(os.listdir(out.parent)) == [f"{kind}.json"]  # no temporary file left beside it


@pytest.mark.parametrize("kind", WRITERS)
def test_an_empty_name_is_refused_not_read_as_stdout(kind):
    one_line_error(run_doctor(*WRITERS[kind]("")), f"the file to write the {kind} to is an empty name")


@pytest.mark.parametrize("kind", WRITERS)
def test_a_full_device_is_a_write_error(kind):
    one_line_error(run_doctor(*WRITERS[kind]("/dev/full")), "/dev/full", f"cannot write the {kind}", "No space left on device")


@pytest.mark.parametrize("kind", WRITERS)
def test_a_full_device_is_refused_before_any_work(tmp_path, kind):
    # the device is opened and asked to take a write before the work: a missing --config would be reported by the work
    result = run_doctor(*WRITERS[kind]("/dev/full"), "--config", str(tmp_path / "missing.yaml"))
    one_line_error(result, "/dev/full: cannot write the", "No space left on device")


def test_a_full_device_as_the_fleet_output_is_refused_before_the_reports_are_read(tmp_path):
    result = run_doctor("fleet", str(tmp_path / "missing.json"), "--output", "/dev/full")
    one_line_error(result, "/dev/full: cannot write the fleet report (No space left on device)")


@pytest.mark.parametrize("kind", WRITERS)
def test_a_path_through_a_file_is_refused_before_any_work(tmp_path, kind):
    (tmp_path / "file").write_text("mine")
    out = str(tmp_path / "file" / "out.json")
    # a missing --config would be reported by the work that follows; the output is checked first
    result = run_doctor(*WRITERS[kind](out), "--config", str(tmp_path / "missing.yaml"))
    one_line_error(result, out, "is a file, not a folder")
    assert (tmp_path / "file").read_text() == "mine"


@pytest.mark.parametrize("args", [["--json"], []], ids=["json", "text"])
def test_a_stdout_that_cannot_be_written_is_a_write_error(args):
    with open("/dev/full", "w") as full:
        result = subprocess.run([sys.executable, "-m", "paddle_doctor", "--root", ROOT, *args],
                                stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    one_line_error(result, "stdout: cannot write the report", "No space left on device")


def test_the_text_report_is_written_whole_to_a_file(tmp_path):
    out = tmp_path / "report.txt"
    out.write_text("an older report, longer than the new one would be if it were only overwritten in place\n" * 500)
    result = run_doctor("--root", ROOT, "--output", str(out))
    assert result.returncode == 0, result.stderr
    text = out.read_text()
    assert text.startswith("paddle-doctor ") and "older report" not in text
    assert text.rstrip().endswith("(exit 0)")


@needs_root
@pytest.mark.parametrize("kind", WRITERS)
def test_a_folder_the_user_cannot_write_is_refused_before_any_work(shared_tmp, kind):
    folder = shared_tmp / "readonly"
    folder.mkdir(mode=0o755)  # root's; the doctor runs as nobody
    result = run_doctor_as_nobody(*WRITERS[kind](str(folder / "out.json")), "--config", str(shared_tmp / "missing.yaml"))
    one_line_error(result, str(folder), "not writable")
    assert os.listdir(folder) == []
