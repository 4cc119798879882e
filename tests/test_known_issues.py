"""known_issues.yaml: the known problems by version, matched against the facts (from fixtures of the
affected versions), confirmed in the predictor worker where Paddle 3.3.1 here reproduces them (a small
model built by the test), kept out of the experiments and the recommendation, a team's own file, the
`explain` and `rules` views and the generated docs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from conftest import REPO, report_json, run_doctor
from factories import make_facts, paddle_ok, run_check
from gpu_helpers import GPU_ENV, GPU_ROOT, fake_nvml_env, fake_paddle, service_config
from paddle_doctor.checks import known_issues as known_issues_check
from paddle_doctor.facts.graph import GraphFacts
from paddle_doctor.judge.known_issues import KnownIssuesError, load_known_issues, parse_known_issues
from paddle_doctor.judge.rule_docs import (
    KNOWN_ISSUES_END,
    KNOWN_ISSUES_START,
    known_issues_doc_markdown,
    known_issues_table_markdown,
)
from paddle_doctor.judge.rules import load_rules
from test_cli import one_line_error

SERVICES = Path(__file__).parent / "fixtures" / "services"
BOOK = load_known_issues()
OCR_RECOGNISER = "/models/ch_PP-OCRv4_rec_infer/inference.pdmodel"
# a PP-OCR recogniser's program as the graph reading sees it: its neck and head are matmuls
OCR_ATTRIBUTES = {"conv2d": ["array<i32>", "i32", "str"], "batch_norm": ["bool", "f32", "str"],
                  "matmul_v2": ["bool"], "softmax": ["i32"], "elementwise_add": ["i32"]}


def entry_findings(findings, entry_id: str) -> list:
    return [finding for finding in findings if finding.message.startswith(f"{entry_id} ")]


def ocr_facts(version: str, **service) -> object:
    """Facts of a CPU service running an OCR recogniser on ``version`` of Paddle (a .pdmodel program, read)."""
    facts = make_facts(paddle=paddle_ok(version=version), model=OCR_RECOGNISER, **service)
    graph = GraphFacts(program=OCR_RECOGNISER, format="pdmodel", ops=120, attribute_types=OCR_ATTRIBUTES)
    return replace(facts, graph=graph)


# ------------------------------------------------------------------ the shipped entries


def test_every_shipped_entry_names_its_threads_its_fix_and_its_rule():
    rules = load_rules().rules
    ids = [entry.id for entry in BOOK.entries]
    assert ids == [f"KI-{n:03d}" for n in range(1, len(ids) + 1)]  # stable, in order, none reused
    for entry in BOOK.entries:
        assert entry.rule in rules and entry.links and entry.workaround.text, entry.id
        assert all(link.startswith("https://") for link in entry.links), entry.id
    first = BOOK.get("KI-001")
    assert first is not None and "Paddle#77340" in first.threads() and first.error


# ------------------------------------------------------------------ from facts of the affected versions


def test_paddle_250_with_onednn_on_and_an_ocr_model_gets_the_fc_pass_entry():
    findings = run_check(known_issues_check.CHECK, ocr_facts("2.5.0", onednn=True))
    (finding,) = entry_findings(findings, "KI-002")
    assert finding.rule_id == "PD-PADDLE-004" and finding.status == "fail"
    assert "fixed in 2.5.1" in finding.message and "Paddle#55281" in finding.message
    assert "oneDNN on" in finding.message and "matmul_v2" in finding.message
    assert 'config.delete_pass("fc_mkldnn_pass")' in str(finding.evidence.workaround)


@pytest.mark.parametrize("case", ["2.5.1 has the fix", "oneDNN off", "both passes deleted"])
def test_the_fc_pass_entry_holds_only_for_250_with_onednn_and_the_passes(case):
    facts = {"2.5.1 has the fix": ocr_facts("2.5.1", onednn=True),
             "oneDNN off": ocr_facts("2.5.0", onednn=False),
             "both passes deleted": ocr_facts("2.5.0", onednn=True,
                                              delete_passes=["fc_mkldnn_pass", "fc_act_mkldnn_fuse_pass"])}[case]
    findings = run_check(known_issues_check.CHECK, facts)
    assert not entry_findings(findings, "KI-002"), [f.message for f in findings]


def test_an_entry_whose_model_is_not_known_says_what_is_missing():
    findings = run_check(known_issues_check.CHECK, make_facts(paddle=paddle_ok(version="2.5.0"), onednn=True))
    (finding,) = entry_findings(findings, "KI-002")
    assert finding.status == "skip" and finding.message.startswith("KI-002 may hold")
    assert "--model" in finding.message


def test_a_switch_the_source_computes_is_not_judged_as_paddles_default():
    """oneDNN set from an expression the doctor cannot evaluate: an entry that needs oneDNN on (KI-002 on 2.5.0)
    or off (KI-003 on 3.0.0b1) may hold, saying why, instead of holding or not on Paddle's default."""
    from paddle_doctor.base.vocabulary import Origin
    from paddle_doctor.facts import SettingOrigin

    why = "set at app.py:3 from an expression the doctor cannot evaluate"
    for version, entry in (("2.5.0", "KI-002"), ("3.0.0b1", "KI-003")):
        facts = replace(ocr_facts(version), service_origins=[SettingOrigin("onednn", None, Origin.SOURCE, why)])
        (finding,) = entry_findings(run_check(known_issues_check.CHECK, facts), entry)
        assert finding.status == "skip" and f"whether oneDNN is on is not known: {why}" in finding.message, finding.message


def test_which_paddle_wheel_is_installed_is_not_guessed():
    from paddle_doctor.judge.known_issues import installed_version, setup_of

    unsaid = setup_of(make_facts(paddle=paddle_ok(version="3.1.0", distribution=None)), None)
    version, _ = installed_version("paddlepaddle-gpu", unsaid)
    assert version.holds is None and version.missing == ("which Paddle wheel is installed is not known (paddlepaddle or paddlepaddle-gpu)",)
    cpu_wheel = setup_of(make_facts(paddle=paddle_ok(version="3.1.0", distribution="paddlepaddle")), None)
    assert installed_version("paddlepaddle-gpu", cpu_wheel)[0].holds is False
    assert installed_version("paddlepaddle", cpu_wheel) == ("3.1.0", "paddlepaddle")


def test_a_trial_decides_only_for_the_predictor_it_was_tried_on():
    """Two predictors an entry holds for, one tried in the worker and not reproduced, the other never tried: the
    tried one passes, not reproduced; the other still fails. Neither's trial speaks for the other."""
    from paddle_doctor.facts.verification import KnownIssueTrial, ModelFacts, VerificationFacts
    from paddle_doctor.judge.known_issues import seen, setup_of
    from test_record_predictors import recorded

    det, rec = recorded("rapidocr.json").predictors[:2]
    entry = next(one for one in BOOK.entries if one.id == "KI-001")
    trial = KnownIssueTrial("KI-001", "threads=1, oneDNN on", reproduced=False, message="the configuration ran the model")
    tried = VerificationFacts(ModelFacts("det", "pir", "det/inference.json", None, {}), 10, 0.03, 0.01, known_issues=[trial])
    facts = make_facts(paddle=paddle_ok(version="3.3.1"))
    held = [(det, setup_of(replace(facts, verification=tried), det), seen("oneDNN on")), (rec, setup_of(facts, rec), seen("oneDNN on"))]
    standing, refuted = known_issues_check.holding(entry, held)
    assert standing.status == "fail" and standing.verdict is None and standing.evidence["predictors"] == [rec.id], standing
    assert refuted.status == "pass" and refuted.verdict == "refuted" and refuted.evidence["predictors"] == [det.id], refuted
    assert "not reproduced in the predictor worker: the configuration ran the model" in refuted.message


def rtx_50_scenario(folder: Path) -> Path:
    """An RTX 5090 (compute capability 12.0) on driver 575, as NVML would describe it."""
    scenario = {"driver_version": "575.51.02", "cuda_driver_version": 12090, "devices": [{
        "name": "NVIDIA GeForce RTX 5090", "compute_capability": [12, 0],
        "memory": {"total": 34190917632, "used": 523239424, "free": 33667678208}, "processes": [],
        "persistence_mode": 0, "throttle_reasons": 1, "mig_mode": "NVML_ERROR_NOT_SUPPORTED"}]}
    path = folder / "rtx5090.json"
    path.write_text(json.dumps(scenario))
    return path


def gpu_report(tmp_path: Path, scenario: Path) -> dict:
    """The doctor on a GPU fixture: paddlepaddle-gpu 3.0.0 for CUDA 12.6 (kernels for sm_61 to sm_90), this GPU."""
    root = REPO / "tests" / "fixtures" / "roots" / GPU_ROOT
    args = ["--json", "--root", str(root), "--gpu", "--python", fake_paddle(tmp_path, "gpu-cu126-pip"),
            "--config", service_config(tmp_path, {"device": "gpu", "model": "/models/det/inference"})]
    return report_json(run_doctor(*args, env=fake_nvml_env(scenario), unset=GPU_ENV))


def test_a_stable_wheel_on_a_gpu_of_compute_capability_12_gets_the_sm_120_entry(tmp_path):
    report = gpu_report(tmp_path, rtx_50_scenario(tmp_path))
    (finding,) = [f for f in report["findings"] if f["message"].startswith("KI-008 ")]
    assert finding["rule_id"] == "PD-PADDLE-004" and finding["status"] == "fail"
    assert "compute capability 12.0" in finding["message"] and "has no kernels for sm_120" in finding["message"]
    assert "Paddle#73937" in finding["message"] and "cu129" in finding["evidence"]["workaround"]


def test_a_gpu_the_wheel_has_kernels_for_does_not_get_the_sm_120_entry(tmp_path):
    report = gpu_report(tmp_path, REPO / "tests" / "fixtures" / "nvml" / "h200-driver-580.json")
    assert not [f for f in report["findings"] if "KI-008" in f["message"]]


def test_a_service_calling_enable_mkldnn_gets_the_rename_as_an_info_with_the_onednn_call(tmp_path):
    result = run_doctor("--json", "--python", fake_paddle(tmp_path, "cpu"), "--source", str(SERVICES / "factory.py"),
                        "--pid", "none", "--no-gpu")
    (finding,) = [f for f in report_json(result)["findings"] if f["message"].startswith("KI-011 ")]
    assert finding["rule_id"] == "PD-PADDLE-006" and finding["severity"] == "info" and finding["status"] == "warn"
    assert "calls enable_mkldnn() (now enable_onednn())" in finding["message"]
    assert "calls set_mkldnn_cache_capacity() (now set_onednn_cache_capacity())" in finding["message"]
    assert "config.enable_onednn()" in finding["evidence"]["workaround"]
    assert [location["line"] for location in finding["locations"]] == [11, 12]


def test_paddle_33_as_the_source_calls_no_mkldnn_name_gets_no_rename(tmp_path):
    clean = tmp_path / "serve.py"
    clean.write_text("from paddle.inference import Config\nconfig = Config('m')\nconfig.enable_onednn()\n")
    result = run_doctor("--json", "--python", fake_paddle(tmp_path, "cpu"), "--source", str(clean), "--pid", "none", "--no-gpu")
    assert not [f for f in report_json(result)["findings"] if "KI-011" in f["message"]]


# ------------------------------------------------------------------ a team's own file


OWN_ENTRY = {
    "id": "ACME-001", "title": "Our OCR image crashes with oneDNN on Paddle 3.3", "kind": "crash",
    "affects": {"paddle": "==3.3.*"}, "when": {"device": "cpu", "settings": {"onednn": True}},
    "symptom": "The detector fails on the first request.",
    "workaround": {"text": "Turn oneDNN off.", "changes": [{"kind": "python", "code": "config.disable_onednn()"}]},
    "links": ["https://wiki.example.com/acme/ocr-onednn"], "checked": "seen in production",
}


def known_issues_file(folder: Path, *entries: dict, **top) -> str:
    path = folder / "ours.yaml"
    path.write_text(yaml.safe_dump({"schema_version": 1, "known_issues": list(entries), **top}))
    return str(path)


@pytest.mark.parametrize("broken, said", [
    ({"kind": "explodes"}, "entry ACME-001: field 'kind'"),
    ({"affects": {"paddle": "3.3 or so"}}, "entry ACME-001: field 'affects.paddle'"),
    ({"id": "KI-001"}, "KI-001 is a built-in entry"),
    ({"links": ["http://insecure.example.com"]}, "field 'links'"),
    ({"when": {"settings": {"onednn": "yes"}}}, "entry ACME-001: field 'when.settings.onednn'"),
    ({"when": {"settings": {"threads": True}}}, ("field 'when.settings': 'threads' is no switch of the predictor's configuration; "
                                                 "expected one of onednn, ir_optim, feed_fetch, memory_optim, use_optimized_model")),
    ({"workaround": {"text": "Off.", "measure": {"oneDNN": False}}}, "field 'workaround.measure': 'oneDNN' is no switch"),
    ({"when": {"gpu_count": 2}}, "field 'when.gpu_count': unknown field"),
])
def test_a_bad_known_issues_file_is_one_line_naming_the_entry_and_the_field(tmp_path, broken, said):
    path = known_issues_file(tmp_path, {**OWN_ENTRY, **broken})
    line = one_line_error(run_doctor("--json", "--no-paddle", "--known-issues", path))
    assert path in line and said in line, line


def test_a_known_issues_file_that_is_no_such_file_is_one_line(tmp_path):
    line = one_line_error(run_doctor("rules", "--known-issues", str(tmp_path / "missing.yaml")))
    assert "missing.yaml" in line


def test_a_known_issues_file_of_the_wrong_schema_is_refused(tmp_path):
    with pytest.raises(KnownIssuesError, match="schema_version is 2"):
        parse_known_issues({"schema_version": 2, "known_issues": []}, "ours.yaml")
    line = one_line_error(run_doctor("explain", "KI-001", "--known-issues", known_issues_file(tmp_path, extra=1)))
    assert "expected a known_issues.yaml" in line


def test_a_good_known_issues_file_adds_its_entry_to_the_check_rules_and_explain(tmp_path):
    path = known_issues_file(tmp_path, OWN_ENTRY)
    result = run_doctor("--json", "--python", fake_paddle(tmp_path, "cpu"), "--no-gpu", "--known-issues", path)
    (finding,) = [f for f in report_json(result)["findings"] if f["message"].startswith("ACME-001 ")]
    assert finding["rule_id"] == "PD-PADDLE-004" and finding["status"] == "fail"
    assert finding["evidence"]["links"] == OWN_ENTRY["links"]
    listing = run_doctor("rules", "--known-issues", path, env={"COLUMNS": "100"}).stdout
    assert "ACME-001" in listing and "ours.yaml" in listing
    explained = run_doctor("explain", "acme-001", "--known-issues", path, env={"COLUMNS": "100"})
    assert explained.returncode == 0 and "Turn oneDNN off." in explained.stdout
    without = run_doctor("explain", "ACME-001")
    assert without.returncode == 2 and "unknown rule or known problem id" in without.stderr


# ------------------------------------------------------------------ explain, rules, docs


def test_explain_shows_a_known_problem_like_a_rule():
    result = run_doctor("explain", "KI-001", env={"COLUMNS": "100"})
    text = result.stdout
    assert result.returncode == 0, result.stderr
    assert text.startswith("KI-001 crash")
    for part in ("reported under PD-PADDLE-004", "Affects", "paddle >=3.3.0,<=3.3.1", "Symptom", "Workaround",
                 "python -m pip install paddlepaddle==3.2.2", "config.disable_onednn()", "Threads",
                 "https://github.com/PaddlePaddle/Paddle/issues/77340", "ConvertPirAttribute2RuntimeAttribute"):
        assert part in text, part


def known_problems_part(columns: int) -> list[str]:
    """The lines of `paddle-doctor rules` from the known problems' heading on; none before it names one."""
    lines = run_doctor("rules", env={"COLUMNS": str(columns)}).stdout.splitlines()
    start = next(index for index, line in enumerate(lines) if line.startswith("Known problems (known_issues.yaml)"))
    assert not any("KI-0" in line for line in lines[:start])
    return lines[start:]


def test_rules_lists_the_known_problems_apart_after_the_rules_by_the_rule_each_is_a_finding_of():
    narrow = known_problems_part(80)
    assert max(len(line) for line in narrow) <= 80
    by_rule = {line.split()[0]: line.split()[1:] for line in narrow[1:]}
    assert by_rule == {rule: [entry.id for entry in BOOK.of_rule(rule)] for rule in ("PD-PADDLE-004", "PD-PADDLE-005", "PD-PADDLE-006")}
    wide = known_problems_part(130)
    for entry in BOOK.entries:  # on a wide terminal each with its kind and title, under its rule
        (line,) = [line for line in wide if line.startswith(f"  {entry.id} ")]
        assert line.split()[1] == entry.kind and entry.title.split()[0] in line
        assert wide.index(line) > wide.index(entry.rule)


def test_the_readme_lists_every_known_problem_linked_to_its_section_and_says_how_to_add_one():
    from paddle_doctor.judge.rule_docs import KNOWN_ISSUES_LIST_END, KNOWN_ISSUES_LIST_START, with_known_issues_list

    readme = (REPO / "README.md").read_text()
    assert readme == with_known_issues_list(readme, BOOK), "README.md's known problems are stale: run scripts/update-readme-rules"
    listed = readme[readme.index(KNOWN_ISSUES_LIST_START):readme.index(KNOWN_ISSUES_LIST_END)].splitlines()[1:]
    assert [line.split("]")[0] for line in listed] == [f"- [{entry.id}" for entry in BOOK.entries]
    assert all(f"(docs/known_issues.md#{entry.id.lower()})" in readme for entry in BOOK.entries)
    assert "docs/known_issues.md#adding-an-entry" in readme and "--known-issues FILE" in readme


def test_the_known_problems_page_and_its_table_are_fresh():
    page = (REPO / "docs" / "known_issues.md").read_text()
    assert page == known_issues_doc_markdown(BOOK), "docs/known_issues.md is stale: run scripts/update-readme-rules"
    listed = page[page.index(KNOWN_ISSUES_START) + len(KNOWN_ISSUES_START):page.index(KNOWN_ISSUES_END)]
    assert listed == "\n" + known_issues_table_markdown(BOOK), "docs/known_issues.md's table is stale: run scripts/update-readme-rules"
    rows = listed.strip().splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| [{entry.id}](#{entry.id.lower()})" for entry in BOOK.entries]
    assert all(f"\n## {entry.id}\n" in page for entry in BOOK.entries)  # each row links to its section
    assert "## Adding an entry" in (REPO / "docs" / "known_issues.md").read_text()


def test_the_regenerating_script_runs(tmp_path):
    """scripts/update-readme-rules, run on a copy of what it writes: it leaves the fresh files as they are."""
    import shutil

    copy = tmp_path / "repo"
    for name in ("rules.yaml", "wrappers.yaml", "known_issues.yaml", "scripts/update-readme-rules",
                 "docs/rules.md", "docs/wrappers.md", "docs/known_issues.md", "README.md"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / name, copy / name)
    subprocess.run([sys.executable, str(copy / "scripts" / "update-readme-rules")], check=True, capture_output=True)
    for name in ("docs/rules.md", "docs/wrappers.md", "docs/known_issues.md", "README.md"):
        assert (copy / name).read_text() == (REPO / name).read_text(), name


# ------------------------------------------------------------------ on the real predictor (Paddle 3.3.1 here)


def interpolating_model(folder: Path) -> Path:
    """A detector that upsamples its map with F.interpolate(scale_factor=4): its PIR program's nearest_interp
    carries the scale as an array<f64> attribute, as PP-OCRv5's detection models do."""
    from paddle_doctor.verify.modelzoo import build_model

    return build_model("detector", "pir", folder / "detector")


@pytest.fixture(scope="module")
def detector(tmp_path_factory) -> Path:
    return interpolating_model(tmp_path_factory.mktemp("known-issues"))


def verify(model: Path, *args: str, budget: str = "6", shape: str = "x:1x3x64x64") -> dict:
    result = run_doctor("--json", "--model", str(model), "--shape", shape, "--budget", budget, "--no-gpu", *args, timeout=300)
    return report_json(result)


def finding_of(report: dict, entry_id: str) -> dict:
    (finding,) = [f for f in report["findings"] if f["message"].startswith(f"{entry_id} ")]
    return finding


@pytest.mark.slow
def test_the_onednn_crash_of_paddle_33_is_confirmed_in_the_worker_with_its_workarounds(detector):
    report = verify(detector)
    finding = finding_of(report, "KI-001")
    assert finding["rule_id"] == "PD-PADDLE-004" and finding["status"] == "fail" and finding["verdict"] == "confirmed"
    assert "Paddle#77340" in finding["message"] and "nearest_interp carrying an array<f64> attribute" in finding["message"]
    workaround = finding["evidence"]["workaround"]
    assert "paddlepaddle==3.2.2" in workaround and "config.disable_onednn()" in workaround
    confirmed = finding["evidence"]["confirmed"]
    assert "ConvertPirAttribute2RuntimeAttribute not support" in confirmed
    assert "its workaround (oneDNN off) ran the model" in confirmed
    assert report["verification"]["recommendation"] is None  # nothing is recommended on top of a configuration that crashes


@pytest.mark.slow
def test_with_onednn_off_no_experiment_nor_the_recommendation_turns_the_crashing_onednn_on(detector):
    report = verify(detector, "--no-onednn", budget="10")
    assert "KI-001" not in {f["message"].split()[0] for f in report["findings"] if f["status"] == "fail"}
    experiments = {e["name"]: e for e in report["verification"]["experiments"]}
    for name in ("onednn", "bf16"):
        assert experiments[name]["status"] == "skipped" and "would hit KI-001" in experiments[name]["reason"], name
    recommendation = report["verification"]["recommendation"]
    assert recommendation is not None and recommendation["config"]["onednn"] is False
    assert "enable_mkldnn" not in recommendation["snippet"] and "enable_onednn" not in recommendation["snippet"]
    (onednn_off,) = [f for f in report["findings"] if f["rule_id"] == "PD-CPU-004"]
    assert onednn_off["status"] == "pass" and "keep the current setting" in onednn_off["message"]


@pytest.mark.slow
def test_memory_optim_on_a_pir_model_is_confirmed_in_the_worker(tmp_path):
    from paddle_doctor.verify.modelzoo import build_model

    model = build_model("cnn", "pir", tmp_path / "cnn")
    report = verify(model, "--config", service_config(tmp_path, {"memory_optim": True}), shape="image:1x3x224x224")
    finding = finding_of(report, "KI-013")
    assert finding["status"] == "fail" and finding["verdict"] == "confirmed", finding["message"]
    assert "pass_name memory_optimize_pass" in finding["evidence"]["confirmed"]
    assert "its workaround (memory optim off) ran the model" in finding["evidence"]["confirmed"]


OPTIMISED_CACHE = """
import sys
import numpy as np
import paddle.inference as paddle_infer

model, cache = sys.argv[1], sys.argv[2]

def config(save):
    config = paddle_infer.Config(f"{model}/inference.json", f"{model}/inference.pdiparams")
    config.disable_gpu()
    config.enable_onednn()
    config.set_optim_cache_dir(cache)
    config.enable_save_optim_model(save)
    config.use_optimized_model(not save)
    return config

predictor = paddle_infer.create_predictor(config(True))
predictor.get_input_handle("image").copy_from_cpu(np.ones((1, 3, 224, 224), "float32"))
predictor.run()
try:
    paddle_infer.create_predictor(config(False)).run()
except Exception as exc:
    print(str(exc))
"""


@pytest.mark.slow
def test_the_optimised_cache_with_onednn_is_kept_out_of_its_experiment_and_fails_as_the_entry_says(tmp_path):
    from paddle_doctor.verify.modelzoo import build_model

    model = build_model("cnn", "pir", tmp_path / "cnn")
    entry = BOOK.get("KI-014")
    assert entry is not None and entry.error is not None
    said = subprocess.run([sys.executable, "-c", OPTIMISED_CACHE, str(model), str(tmp_path / "cache")], capture_output=True,
                          text=True, timeout=300, env={**os.environ, "GLOG_minloglevel": "2"})
    assert entry.error in said.stdout, (said.stdout[-2000:], said.stderr[-2000:])  # Paddle 3.3.1 here fails so
    report = verify(model, shape="image:1x3x224x224")
    (cache,) = [e for e in report["verification"]["experiments"] if e["name"] == "optim_cache"]
    assert cache["status"] == "skipped" and "would hit KI-014" in cache["reason"], cache
    assert "loading the optimised model back" in cache["reason"]


@pytest.mark.slow
def test_paddle_331_here_has_every_onednn_name_and_sets_omp_num_threads_as_the_entries_say():
    renamed = BOOK.get("KI-011")
    assert renamed is not None
    probe = ("import json, os, paddle.inference as p; print(json.dumps([os.environ.get('OMP_NUM_THREADS'), "
             f"[name for pair in {sorted(renamed.when.calls.items())!r} for name in pair if not hasattr(p.Config, name)]]))")
    environ = {name: value for name, value in os.environ.items() if name != "OMP_NUM_THREADS"}
    said = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                          env={**environ, "GLOG_minloglevel": "2"})
    omp, missing = json.loads(said.stdout.strip().splitlines()[-1])
    assert omp == "1" and missing == []  # KI-012: set although it was unset; KI-011: both names of each method
