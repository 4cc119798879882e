"""Smaller promises of the command line: --debug keeps exit codes, clear parse errors, no Paddle
cache left behind where HOME is not writable, and a folder with two models is refused."""

import json
import os
from pathlib import Path

import pytest
from conftest import fixture_root, report_with_its_exit, run_doctor, run_doctor_process
from paddle_doctor.demo import DEMO_FILES
from paddle_doctor.verify.model import ModelError, locate_model

ROOT = str(fixture_root("intel-noavx2-v1-quota"))
NO_HOME = {"HOME": "/nonexistent/home"}


@pytest.mark.parametrize("args", [["--threads", "0"], ["--ignore", "PD-NOPE", "--root", ROOT], ["--facts", "/no/such/facts.json"]])
def test_debug_shows_the_traceback_and_keeps_exit_2(args):
    result = run_doctor("--debug", *args)
    assert result.returncode == 2
    assert "Traceback" in result.stderr
    assert result.stderr.splitlines()[-1].startswith("paddle-doctor: error: ")


@pytest.mark.parametrize("args", [["--root", ROOT, "--json"], ["--root", ROOT, "-v"], ["healthcheck", "--root", ROOT],
                                  ["--threads", "0"], ["--debug", "--threads", "0"], ["explain", "PD-NOPE"]])
def test_the_tests_forked_doctor_answers_as_a_new_interpreter_does(args):
    """run_doctor (the entry function in a forked test session) against the command as a user starts it."""
    forked, started = run_doctor(*args), run_doctor_process(*args)
    assert (forked.returncode, forked.stdout, forked.stderr) == (started.returncode, started.stdout, started.stderr)


def test_a_json_parse_error_names_line_and_column_once(tmp_path):
    facts = tmp_path / "facts.json"
    facts.write_text('{"schema_version": "1')
    result = run_doctor("check", "--facts", str(facts))
    assert result.returncode == 2
    assert "not JSON (Unterminated string starting at: line 1 column 20)" in result.stderr
    assert "at at" not in result.stderr


@pytest.mark.slow  # imports Paddle
def test_no_paddle_cache_is_left_where_home_is_not_writable(tmp_path):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    result = run_doctor("facts", "--no-gpu", env={**NO_HOME, "TMPDIR": str(temporary)})
    assert result.returncode == 0, result.stderr
    facts = json.loads(result.stdout)
    assert facts["paddle"]["status"] == "ok"
    assert facts["env"]["HOME"] == NO_HOME["HOME"]  # the service's environment is recorded as it is
    assert os.listdir(temporary) == []  # neither .cache/paddle nor the doctor's own home is left


@pytest.mark.slow  # builds a model and measures it
def test_demo_runs_where_home_is_not_writable(tmp_path):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    result = run_doctor("demo", "--budget", "2", "--json", env={**NO_HOME, "TMPDIR": str(temporary)}, timeout=300,
                        unset=("XDG_CACHE_HOME",))
    assert report_with_its_exit(result)["verification"]["model"]["format"] == "pir"
    # no cache folder to keep the demo model in: it is kept in a temporary folder, which the last line names,
    # and neither .cache/paddle nor the doctor's own home is left beside it
    (kept,) = os.listdir(temporary)
    assert kept.startswith("paddle-doctor-demo-") and set(os.listdir(temporary / kept)) == DEMO_FILES
    assert f"the demo model is kept in {temporary / kept}" in result.stderr.splitlines()[-1]


def fake_model(folder: Path, prefix: str, program: str = ".json") -> None:
    folder.mkdir(exist_ok=True)
    (folder / f"{prefix}{program}").write_text("{}")
    (folder / f"{prefix}.pdiparams").write_bytes(b"\0" * 8)


def test_a_folder_with_two_models_is_refused_naming_both(tmp_path):
    fake_model(tmp_path / "models", "inference")
    fake_model(tmp_path / "models", "resnet50", ".pdmodel")
    result = run_doctor("--root", ROOT, "--model", str(tmp_path / "models"))
    assert result.returncode == 2 and result.stderr.count("\n") == 1
    assert "holds 2 models" in result.stderr
    assert str(tmp_path / "models" / "inference") in result.stderr and str(tmp_path / "models" / "resnet50") in result.stderr


def test_the_prefix_picks_one_of_two_models(tmp_path):
    fake_model(tmp_path, "inference")
    fake_model(tmp_path, "resnet50", ".pdmodel")
    assert locate_model(tmp_path / "resnet50").program == str(tmp_path / "resnet50.pdmodel")


@pytest.mark.parametrize("others", [["config.json"], ["inference.pdmodel"]], ids=["a json that is no model", "one model in both formats"])
def test_one_model_beside_other_files_is_taken(tmp_path, others):
    fake_model(tmp_path, "inference")
    for name in others:
        (tmp_path / name).write_text("{}")
    assert locate_model(tmp_path).program == str(tmp_path / "inference.json")


def test_a_lone_program_without_parameters_still_says_so(tmp_path):
    (tmp_path / "inference.json").write_text("{}")
    with pytest.raises(ModelError, match="parameters file missing"):
        locate_model(tmp_path)


def test_the_paddle_probe_s_status_is_said_in_words():
    result = run_doctor("--root", str(fixture_root("intel-noavx2-v1-quota")), "-v", env={"COLUMNS": "200"})
    assert "Paddle not probed" in result.stdout and "not_probed" not in result.stdout
