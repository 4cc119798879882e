"""`paddle-doctor demo` keeps its model where the recommended snippet loads it, says where, and the
snippet, pasted into Python as printed, builds a predictor that runs on that model."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import report_with_its_exit, run_doctor
from paddle_doctor.base.paddle_home import paddle_child_env
from paddle_doctor.demo import DEMO_FILES, demo_folder
from snippets import pasting_problem
from test_pasted_fixes import fixes_that_do_not_paste

RUN_THE_PREDICTOR = """
import numpy as np
handle = predictor.get_input_handle(predictor.get_input_names()[0])
handle.copy_from_cpu(np.zeros((1, 3, 224, 224), "float32"))
predictor.run()
print(predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu().shape)
"""


@pytest.mark.slow  # builds the model, measures it, and runs the snippet on the real predictor
def test_the_recommended_snippet_runs_on_the_kept_demo_model(tmp_path):
    cache = tmp_path / "cache"
    result = run_doctor("demo", "--budget", "3", "--json", env={"XDG_CACHE_HOME": str(cache)}, timeout=300)
    report = report_with_its_exit(result)
    kept = cache / "paddle-doctor" / "demo"
    assert {path.name for path in kept.iterdir()} == DEMO_FILES
    assert result.stderr.splitlines()[-1].startswith(f"paddle-doctor demo: the demo model is kept in {kept}, "), result.stderr
    snippet = report["verification"]["recommendation"]["snippet"]
    assert repr(str(kept / "inference.json")) in snippet
    assert pasting_problem("python", snippet) is None
    assert fixes_that_do_not_paste(report) == []  # the findings' fixes, measured ones included
    pasted = subprocess.run([sys.executable, "-c", snippet + RUN_THE_PREDICTOR], capture_output=True, text=True,
                            cwd=tmp_path, env=paddle_child_env(), timeout=120)
    assert pasted.returncode == 0, pasted.stderr[-2000:]
    assert pasted.stdout.strip().splitlines()[-1] == "(1, 10)", pasted.stdout  # the CNN's ten classes


def test_a_folder_holding_other_files_is_refused_and_left_as_it_was(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "inference.json").write_text("my model")
    (mine / "notes.txt").write_text("mine")
    result = run_doctor("demo", "--out", str(mine))
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"--out {mine} holds files other than a demo model (notes.txt)" in result.stderr
    assert (mine / "inference.json").read_text() == "my model" and sorted(p.name for p in mine.iterdir()) == ["inference.json", "notes.txt"]


def test_the_model_goes_to_the_cache_folder_else_a_kept_temporary_one(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert demo_folder(None) == tmp_path / "cache" / "paddle-doctor" / "demo"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "no-such-home"))
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)  # TMPDIR is read again
    fallback = demo_folder(None)
    assert fallback.parent == tmp_path and fallback.name.startswith("paddle-doctor-demo-") and fallback.is_dir()
    assert not (tmp_path / "no-such-home").exists()  # no home is made up
    again = demo_folder(str(fallback))
    assert again == fallback  # a folder holding a demo model (or nothing) is taken
