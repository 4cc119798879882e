"""The recommended configuration in the terms of the wrapper that builds the predictors, found in the
source (the installed distribution beside the code that builds the Config) or in the record's
origin frame: the wrapper's own call, flag, YAML key or variable first, the raw Config calls as the
alternative, in the text, Markdown and HTML reports alike. Fixture sources are written here."""

import dataclasses
import html
import re

import pytest
from conftest import facts_from_root, fixture_root, report_json, run_doctor
from paddle_doctor.base.vocabulary import BuiltBy, Precision
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.recorded import BuildSite, Frame, RecordedPredictor, RunStats
from paddle_doctor.judge.wrapper_fix import recommended_in_wrapper_terms
from paddle_doctor.service.sources import source_predictors
from paddle_doctor.source import read_source
from test_comparison_words import synthetic_verification
from test_source_passed_down import TOOLKIT, write_tree

WRAPPER_CALL = "PaddleOCR(enable_mkldnn=True, cpu_threads=2)"
WRAPPER_FLAGS = "paddleocr --enable_mkldnn true --cpu_threads 2"


def installed_paddleocr(tmp_path, version="2.7.3", cpu_only=False):
    """The fixture toolkit installed as a distribution named paddleocr, with the service that uses it;
    ``cpu_only``: its use_gpu defaults to False and nothing reassigns it (the CPU branch is known to run)."""
    site, app = tmp_path / "site", tmp_path / "app"
    files = {name.replace("ocrkit/", "paddleocr/"): text for name, text in TOOLKIT.items()}
    if cpu_only:
        files = {name: text.replace('"--use_gpu", type=as_bool, default=True', '"--use_gpu", type=as_bool, default=False')
                 .replace("params.use_gpu = gpu_available(params.use_gpu)", "") for name, text in files.items()}
    write_tree(site, files)
    write_tree(site, {f"paddleocr-{version}.dist-info/top_level.txt": "paddleocr\n",
                      f"paddleocr-{version}.dist-info/METADATA": f"Name: paddleocr\nVersion: {version}\n"})
    write_tree(app, {"serve.py": "from paddleocr import OcrEngine\n\nengine = OcrEngine(cpu_threads=16)\n"})
    return app / "serve.py", site


def recorded(package, version):
    frame = Frame("/site/paddleocr/tools/infer/utility.py", 207, "create_predictor", package, version, "paddleocr/tools/infer/utility.py")
    return RecordedPredictor(1, BuiltBy.CREATE_PREDICTOR, None, None, BuildSite(frame, None, None),
                             RunStats(0, None, None, None, None, 0.0, 0.0, None, 0, [], 0), True)


def test_the_distribution_beside_the_code_names_the_wrapper_of_each_predictor_the_source_builds(tmp_path):
    script, site = installed_paddleocr(tmp_path)
    source = read_source([str(script)], search=[str(script.parent), str(site)])
    assert {(p.package, p.version, p.path) for p in source.predictors} == {("paddleocr", "2.7.3", "paddleocr/tools/infer/settings.py")}
    builders = [predictor.origin.builder for predictor in source_predictors(source)]
    assert {frame.where() for frame in builders} == {"paddleocr 2.7.3 paddleocr/tools/infer/settings.py:24"}


@pytest.mark.parametrize("predictors, config, code", [
    ([recorded("paddleocr", "2.7.3")], PredictorConfig(threads=2, onednn=True), f"{WRAPPER_CALL}\n{WRAPPER_FLAGS}\n"),
    ([recorded("paddleocr", "2.7.3")], PredictorConfig(threads=3, onednn=False),
     "PaddleOCR(enable_mkldnn=True, cpu_threads=3)\npaddleocr --enable_mkldnn true --cpu_threads 3\n"),
    ([recorded("rapidocr_paddle", "1.4.5")], PredictorConfig(threads=2, onednn=False),
     "cpu_math_library_num_threads: 2\nRapidOCR(cpu_math_library_num_threads=2)\n"),
    ([recorded("paddleocr", "2.7.3")], PredictorConfig(threads=2, onednn=True, precision=Precision.BF16),
     "PaddleOCR(enable_mkldnn=True, cpu_threads=2, precision='fp16')\npaddleocr --enable_mkldnn true --cpu_threads 2 --precision fp16\n"),
    ([recorded("rapidocr_paddle", "1.4.5")], PredictorConfig(threads=2, onednn=False, precision=Precision.BF16),
     "cpu_math_library_num_threads: 2\nRapidOCR(cpu_math_library_num_threads=2)\n"),  # no bf16 setting: the Config calls say it
    ([recorded("paddleocr", "3.0.2")], PredictorConfig(threads=2, onednn=True),
     "PaddleOCR(device='cpu', cpu_threads=2, enable_mkldnn=True)\npaddleocr ocr --device cpu --cpu_threads 2 --enable_mkldnn true\n"),
])
def test_the_recommended_threads_and_onednn_are_written_as_the_wrappers_own_settings(predictors, config, code):
    snippet = recommended_in_wrapper_terms(config, predictors)
    assert snippet is not None and snippet.code == code
    assert f"builds these predictors ({predictors[0].origin.builder.where()})" in snippet.words


@pytest.mark.parametrize("predictors", [
    [recorded(None, None)],  # the service's own code
    [recorded("somelib", "1.0")],  # a distribution wrappers.yaml does not know
    [recorded("paddleocr", "2.7.3"), recorded(None, None)],  # one predictor the service builds itself
])
def test_no_wrapper_terms_where_no_known_wrapper_built_every_predictor(predictors):
    assert recommended_in_wrapper_terms(PredictorConfig(threads=2, onednn=True), predictors) is None


def test_every_report_for_people_gives_the_wrappers_settings_first_then_the_config_calls(tmp_path):
    script, site = installed_paddleocr(tmp_path)
    facts = facts_from_root("amd-avx512bf16-v2-quota", threads=8, onednn=False)
    facts = dataclasses.replace(facts, verification=synthetic_verification(0),
                                service_source=read_source([str(script)], search=[str(script.parent), str(site)]))
    path = tmp_path / "facts.json"
    path.write_text(facts.to_json(), encoding="utf-8")
    text = run_doctor("--facts", str(path), env={"COLUMNS": "1000"}).stdout
    markdown = run_doctor("--facts", str(path), "--format", "markdown").stdout
    page = html.unescape(re.sub(r"<[^>]+>", " ", run_doctor("--facts", str(path), "--format", "html").stdout))
    for document in (text, markdown, page):
        words = " ".join(document.split())
        assert "PaddleOCR 2.7.3 builds these predictors (paddleocr 2.7.3 paddleocr/tools/infer/settings.py:24)" in words
        assert document.index(WRAPPER_CALL) < document.index(WRAPPER_FLAGS) < document.index("config.set_cpu_math_library_num_threads(2)")
    assert "```text\n" + WRAPPER_CALL + "\n" + WRAPPER_FLAGS + "\n```" in markdown
    # the JSON keeps the recommendation as it was: the raw snippet only
    report = report_json(run_doctor("--facts", str(path), "--json"))
    assert WRAPPER_CALL not in report["verification"]["recommendation"]["snippet"]


def test_a_finding_about_a_predictor_the_source_says_paddleocr_builds_gives_paddleocrs_setting_first(tmp_path):
    script, site = installed_paddleocr(tmp_path, cpu_only=True)
    report = report_json(run_doctor("--source", str(script), "--source", str(site), "--json", "--pid", "none",
                                    "--no-paddle", "--no-gpu", "--root", str(fixture_root("amd-avx512bf16-v2-quota"))))
    fixes = {finding["rule_id"]: finding["fix"] for finding in report["findings"] if finding["status"] in ("fail", "warn")}
    in_terms = {rule: fix for rule, fix in fixes.items() if fix.get("wrapper")}
    assert "PD-CPU-010" in in_terms, fixes.keys()
    for fix in in_terms.values():
        assert fix["wrapper"]["name"] == "PaddleOCR" and fix["wrapper"]["version"] == "2.7.3"
        assert fix["changes"][0]["code"].startswith("PaddleOCR(")

