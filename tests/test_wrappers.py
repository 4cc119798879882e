"""wrappers.yaml: validated on load (a broken file is one line naming the wrapper and the field), found
from a predictor's origin (the record's frame, a module path), documented in docs/wrappers.md; a finding
about a predictor a known wrapper built gives the wrapper's own setting first and the Config call after
it, as recorded services built by PaddleOCR 2.7.3 and RapidOCR 1.4.5 show."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import FIXTURES, REPO, report_json, run_doctor
from paddle_doctor.judge.wrappers import (
    WRAPPERS_DOC,
    WrappersError,
    default_wrappers_path,
    load_wrappers,
    parse_wrappers,
    wrappers_doc_markdown,
)
from record_files import owned_by

PROCESSES, RECORDS = FIXTURES / "processes", FIXTURES / "records"
NO_PROBES = ("--no-paddle", "--no-gpu")
SHIPPED = yaml.safe_load(default_wrappers_path().read_text())


def test_the_shipped_wrappers_file_is_valid_and_ships_with_the_package():
    book = load_wrappers()
    assert Path(book.source).resolve() == (REPO / "wrappers.yaml").resolve()
    assert {wrapper.id for wrapper in book.wrappers} >= {"paddleocr-2", "paddleocr-3", "paddlex-3", "paddlenlp-taskflow",
                                                         "rapidocr-paddle", "fastdeploy", "paddle-serving"}
    assert all(wrapper.settings and wrapper.checked for wrapper in book.wrappers)


def test_docs_wrappers_md_is_generated_from_wrappers_yaml():
    assert (REPO / WRAPPERS_DOC).read_text() == wrappers_doc_markdown(load_wrappers()), (
        "docs/wrappers.md is stale: run scripts/update-readme-rules")


def broken(change) -> dict:
    data = copy.deepcopy(SHIPPED)
    change(data)
    return data


@pytest.mark.parametrize("change, said", [
    (lambda d: d.update(schema_version=2), "schema_version is 2, expected 1"),
    (lambda d: d["wrappers"][0].pop("distribution"), "wrapper paddleocr-2: field 'distribution': missing"),
    (lambda d: d["wrappers"][0].update(colour="red"), "wrapper paddleocr-2: field 'colour': unknown field"),
    (lambda d: d["wrappers"][1].update(id="paddleocr-2"), "wrapper paddleocr-2: field 'id': duplicate id"),
    (lambda d: d["wrappers"][0].update(modules=["tools/infer"]), "field 'modules': expected a non-empty list of import paths"),
    (lambda d: d["wrappers"][0].update(versions={"from": 2.0, "below": None}), "'from' must be a version in quotes"),
    (lambda d: d["wrappers"][0]["settings"].update(batch={"default": "1", "knobs": []}), "unknown setting 'batch'"),
    (lambda d: d["wrappers"][0]["settings"]["threads"]["knobs"][0].update(kind="toml"), "knob kind 'toml'"),
    (lambda d: d["wrappers"][0]["settings"]["threads"]["knobs"][0].update(code="PaddleOCR(cpu_threads={threads})"),
     "a knob's only placeholder is {value}"),
    (lambda d: d["wrappers"][0]["pitfalls"][0].update(about=["speed"]), "'about' must list the settings"),
])
def test_a_broken_wrappers_file_is_one_line_naming_the_wrapper_and_field(change, said):
    with pytest.raises(WrappersError) as raised:
        parse_wrappers(broken(change), "wrappers.yaml")
    assert said in str(raised.value) and "\n" not in str(raised.value)
    assert str(raised.value).startswith("wrappers.yaml: ")


def test_an_unreadable_wrappers_file_is_refused_in_one_line(tmp_path):
    bad = tmp_path / "wrappers.yaml"
    bad.write_text("wrappers: [\n")
    with pytest.raises(WrappersError, match=r"^.*wrappers.yaml: not valid YAML at line \d+"):
        load_wrappers(str(bad))


@pytest.mark.parametrize("distribution, version, found", [
    ("paddleocr", "2.7.3", "paddleocr-2"),
    ("PaddleOCR", "2.10.0", "paddleocr-2"),
    ("paddleocr", "3.0.2", "paddleocr-3"),
    ("rapidocr_paddle", "1.4.5", "rapidocr-paddle"),
    ("rapidocr-paddle", "2.0.0", None),          # a version no entry describes
    ("paddleocr", None, None),                   # 2.x and 3.x differ: no guess without a version
    ("fastdeploy-python", None, "fastdeploy"),   # one entry for every version
    ("numpy", "1.26.4", None),
])
def test_a_distribution_and_its_version_name_the_wrapper(distribution, version, found):
    wrapper = load_wrappers().for_distribution(distribution, version)
    assert (wrapper.id if wrapper else None) == found


@pytest.mark.parametrize("module, version, found", [
    ("tools.infer.utility", None, "paddleocr-2"),
    ("rapidocr_paddle.utils.infer_engine", None, "rapidocr-paddle"),
    ("paddlenlp.taskflow.task", None, "paddlenlp-taskflow"),
    ("paddleocr", None, None),
    ("paddleocr", "3.1.0", "paddleocr-3"),
    ("paddlenlp.transformers", None, None),
    ("tools_infer", None, None),
])
def test_a_module_path_names_the_wrapper_whose_code_it_is(module, version, found):
    wrapper = load_wrappers().for_module(module, version)
    assert (wrapper.id if wrapper else None) == found


def test_pitfalls_are_those_of_the_version_and_the_setting():
    ocr3 = load_wrappers().for_distribution("paddleocr", "3.0.2")
    assert [p.source for p in ocr3.pitfalls_of("3.0.2", "onednn")] == [
        "https://github.com/PaddlePaddle/PaddleOCR/issues/15782", "https://github.com/PaddlePaddle/PaddleOCR/issues/15632"]
    assert ocr3.pitfalls_of("3.0.3", "onednn") == [] and ocr3.pitfalls_of("3.0.2", "threads") == []


# ------------------------------------------------------------------ recorded services built by a wrapper


def recorded_service(tmp_path: Path, record: str | None) -> Path:
    """The recorded CPU service tree (process 5151, started at tick 123456, user 1000) with, in its
    user's record folder, the record of a service built by a wrapper."""
    root = tmp_path / "root"
    shutil.copytree(PROCESSES / "cpu-service", root, symlinks=True)
    if record:
        folder = root / "tmp" / "paddle-doctor-record-1000"
        folder.mkdir(parents=True)
        shutil.copy(RECORDS / record, folder / "5151-123456.json")
        owned_by(1000, folder)
    return root


def finding(report: dict, rule_id: str) -> dict:
    return next(f for f in report["findings"] if f["rule_id"] == rule_id)


@pytest.mark.parametrize("record, first, second, wrapper, built_at", [
    ("paddleocr-2.7.3.json", ("python", "PaddleOCR(enable_mkldnn=True, cpu_threads=2)"),
     ("shell", "paddleocr --enable_mkldnn true --cpu_threads 2"), "paddleocr-2", "paddleocr 2.7.3 tools/infer/utility.py:263"),
    ("rapidocr-paddle-1.4.5.json", ("yaml", "cpu_math_library_num_threads: 2"),
     ("python", "RapidOCR(cpu_math_library_num_threads=2)"), "rapidocr-paddle", "rapidocr_paddle 1.4.5 utils/infer_engine.py:43"),
])
def test_the_fix_for_a_wrapper_built_predictor_is_the_wrappers_own_setting_then_the_config_call(
        tmp_path, record, first, second, wrapper, built_at):
    report = report_json(run_doctor("--root", str(recorded_service(tmp_path, record)), "--pid", "auto", "--json", *NO_PROBES))
    over = finding(report, "PD-CPU-010")
    assert over["status"] == "fail" and over["evidence"]["total_threads"] > 2
    changes = [(change["kind"], change["code"]) for change in over["fix"]["changes"]]
    assert changes[:3] == [first, second, ("python", "config.set_cpu_math_library_num_threads(2)")]
    assert over["fix"]["wrapper"] == {"wrapper": wrapper, "name": over["fix"]["wrapper"]["name"], "version": built_at.split()[1],
                                      "built_at": built_at, "changes": 2}
    assert over["fix"]["text"].startswith(f"{over['fix']['wrapper']['name']} {built_at.split()[1]} builds this predictor ({built_at})")
    assert "the Config call after it is the alternative" in over["fix"]["text"]


def test_paddleocr_2s_fix_says_that_cpu_threads_needs_enable_mkldnn(tmp_path):
    report = report_json(run_doctor("--root", str(recorded_service(tmp_path, "paddleocr-2.7.3.json")), "--pid", "auto",
                                    "--json", *NO_PROBES))
    assert "cpu_threads has no effect unless enable_mkldnn=True" in finding(report, "PD-CPU-010")["fix"]["text"]


def test_a_predictor_the_service_builds_itself_keeps_the_config_call_alone(tmp_path):
    data = json.loads((RECORDS / "paddleocr-2.7.3.json").read_text())
    for predictor in data["predictors"]:  # built in the service's own code: no distribution
        predictor["origin"]["builder"] = predictor["origin"]["threads_set_at"] = predictor["origin"]["service"]
    (tmp_path / "own.json").write_text(json.dumps(data))
    root = recorded_service(tmp_path, None)
    (root / "tmp" / "paddle-doctor-record-1000").mkdir(parents=True)
    shutil.copy(tmp_path / "own.json", root / "tmp" / "paddle-doctor-record-1000" / "5151-123456.json")
    owned_by(1000, root / "tmp" / "paddle-doctor-record-1000")
    over = finding(report_json(run_doctor("--root", str(root), "--pid", "auto", "--json", *NO_PROBES)), "PD-CPU-010")
    assert over["status"] == "fail" and over["fix"]["wrapper"] is None
    assert over["fix"]["changes"][0]["code"] == "config.set_cpu_math_library_num_threads(2)"


def test_the_wrappers_fixes_paste(tmp_path):
    from snippets import pasting_problem

    for record in ("paddleocr-2.7.3.json", "rapidocr-paddle-1.4.5.json"):
        report = report_json(run_doctor("--root", str(recorded_service(tmp_path / record, record)), "--pid", "auto", "--json", *NO_PROBES))
        changes = [change for f in report["findings"] if f["fix"]["wrapper"] for change in f["fix"]["changes"]]
        assert changes and [pasting_problem(c["kind"], c["code"]) for c in changes] == [None] * len(changes)


def test_a_recorded_service_is_told_to_measure_with_measure_and_one_without_a_record_with_model(tmp_path):
    with_record = run_doctor("--root", str(recorded_service(tmp_path / "a", "paddleocr-2.7.3.json")), "--pid", "auto", *NO_PROBES)
    assert "confirm with a measurement: paddle-doctor --measure (experiment 'threads')" in " ".join(with_record.stdout.split())
    without = run_doctor("--root", str(recorded_service(tmp_path / "b", None)), "--pid", "auto", "--threads", "8", *NO_PROBES)
    assert "confirm with a measurement: paddle-doctor --model PATH (experiment 'threads')" in " ".join(without.stdout.split())
