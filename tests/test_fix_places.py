"""``paddle-doctor fix`` placed end to end on small services: each case under tests/fixtures/fix/python/<case>/
is a service's folder (its code, an installed wrapper's stand-in under site-packages/, its YAML, Dockerfile or
manifest), read by the real source reader, judged by the real checks on a 2-CPU budget; the fix's diff must be
``expected.diff``, the files it writes each ``<name>.out`` byte for byte, and fixing the written copy again
changes nothing. The changes that cannot be placed are refused with their one-line reason, writing nothing."""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from factories import make_facts
from paddle_doctor.base.vocabulary import Effect, Precision
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import ArmResult, ComparisonResult, ModelFacts, Recommendation, VerificationFacts
from paddle_doctor.fix.command import FixOptions, FixResult, fix
from paddle_doctor.fix.files import FixRefused, write_all
from paddle_doctor.fix.places import Targets
from paddle_doctor.judge.policy import Policy
from paddle_doctor.judge.rules import load_rules
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.service.config import ServiceOptions
from paddle_doctor.service.reading import pid_choice, read_service
from paddle_doctor.service.resolve import resolve_service
from paddle_doctor.source import read_source

FIXTURES = Path(__file__).parent / "fixtures" / "fix" / "python"
RULES = load_rules()
EXPECTED = ("expected.diff", ".out")


@dataclass(frozen=True)
class Case:
    """What the fix is given besides the case's folder: ``recommended`` the configuration a measurement
    recommended over ``measured`` (None: nothing measured); ``targets`` the files named, relative to it."""

    unsafe: bool = False
    recommended: PredictorConfig | None = None
    measured: PredictorConfig = PredictorConfig(threads=1, onednn=True)
    dockerfile: str | None = None
    manifest: str | None = None
    flags: dict = field(default_factory=dict)
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    drifted: bool = False  # the whole recommendation changed the outputs past the tolerance
    folder: bool = False  # the source given is the case's folder (its gunicorn.conf.py read too), not its app.py


CASES: dict[str, Case] = {
    "script": Case(),  # threads 8 -> 2 and disable_mkldnn -> enable_mkldnn, the comments after them kept
    "helper": Case(),  # the module constant a helper passes is changed, not the helper's call
    "shared_constant": Case(),  # a constant two settings read: the thread call's argument changes, not the constant
    "class": Case(),  # self.config's call in __init__
    # no thread call: the recommendation's added after `config = Config(...)` (PD-CPU-011's warning alone, unmeasured, moves nothing)
    "insert": Case(recommended=PredictorConfig(threads=2, onednn=True), measured=PredictorConfig(threads=1, onednn=True)),
    "two_inserts": Case(unsafe=True, recommended=PredictorConfig(threads=2, onednn=True, precision=Precision.BF16)),
    "graph": Case(unsafe=True),  # switch_ir_optim(False) -> True is unsafe: shown with --unsafe-fixes only
    "paddleocr": Case(recommended=PredictorConfig(threads=2, onednn=True), measured=PredictorConfig(threads=1, onednn=False)),
    "rapidocr": Case(recommended=PredictorConfig(threads=2, onednn=True)),
    "env_dockerfile": Case(dockerfile="Dockerfile"),
    "env_manifest": Case(manifest="deployment.yaml"),
    "gunicorn": Case(unsafe=True, folder=True),  # 4 workers of one thread on 2 CPUs: 2 workers in gunicorn.conf.py
}


def copied(case: str, tmp_path: Path) -> Path:
    """The case's input files in a folder of their own (its expected files left out)."""
    folder = tmp_path / case
    shutil.copytree(FIXTURES / case, folder, ignore=lambda _, names: [n for n in names if n.endswith(EXPECTED)])
    return folder


def measured(case: Case):
    """A measurement that recommends ``case.recommended`` over ``case.measured``, 1.7x faster as a whole."""
    if case.recommended is None:
        return None
    baseline = ArmResult("baseline", case.measured, runs=48, p50=10.0)
    whole = ComparisonResult("baseline", "recommended", 1.7, 1.5, 1.9, Effect.IMPROVED, 12, 0.95, 10.0, 5.9,
                             changes_outputs=case.drifted)
    recommendation = Recommendation(case.recommended, case.recommended.snippet("m/inference.json", "m/inference.pdiparams"),
                                    ["..."], baseline, ArmResult("recommended", case.recommended, runs=48, p50=5.9), whole)
    return VerificationFacts(ModelFacts("m", "pir", "m/inference.json", "m/inference.pdiparams", {}), 20, 0.03, 0.01,
                             baseline=case.measured, recommendation=recommendation)


def fixed(folder: Path, case: Case = Case(), app: str = "app.py") -> FixResult:
    """The fix of the service in ``folder`` as ``paddle-doctor fix --source APP`` makes it, on a 2-CPU budget."""
    search = [str(folder)] + ([str(folder / "site-packages")] if (folder / "site-packages").is_dir() else [])
    if case.folder:  # as --source FOLDER reads it: with the launcher its gunicorn.conf.py configures
        source = read_service(ProbeContext("/"), pid_choice("none"), (str(folder),), lambda line: None).source
    else:
        source = read_source([str(folder / app)], environ={}, search=search)
    service, origins = resolve_service(ServiceOptions(**case.flags), source)
    facts = dataclasses.replace(make_facts(quota=2.0), service=service, service_origins=origins, service_source=source,
                                verification=measured(case))
    targets = Targets(dockerfile=str(folder / case.dockerfile) if case.dockerfile else None,
                      manifest=str(folder / case.manifest) if case.manifest else None)
    return fix(facts, RULES, Policy(), FixOptions(unsafe=case.unsafe, select=case.select, ignore=case.ignore, targets=targets),
               project=[str(folder)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_fix_is_the_expected_diff_and_files_and_again_changes_nothing(name, tmp_path):
    case = CASES[name]
    folder = copied(name, tmp_path)
    result = fixed(folder, case)
    assert not result.refused, [one.refused for one in result.refused]
    assert result.diff(cwd=str(folder)) == (FIXTURES / name / "expected.diff").read_text(encoding="utf-8")
    written = write_all(result.patches)
    expected = sorted(path for path in (FIXTURES / name).rglob("*.out"))
    assert sorted(os.path.relpath(path, folder) for path in written) == \
        sorted(str(path.relative_to(FIXTURES / name))[:-len(".out")] for path in expected)
    for path in expected:
        wrote = folder / str(path.relative_to(FIXTURES / name))[:-len(".out")]
        assert wrote.read_bytes() == path.read_bytes(), wrote
    assert not any("site-packages" in path.split(os.sep) for path in written)
    again = fixed(folder, case)
    assert again.diff(cwd=str(folder)) == "" and not again.refused, again.diff(cwd=str(folder))


def test_an_unsafe_fix_is_hidden_without_unsafe_fixes(tmp_path):
    folder = copied("graph", tmp_path)
    result = fixed(folder)
    assert [(one.rule_id, one.setting) for one in result.hidden] == [("PD-GRAPH-001", "ir_optim")]
    diff = result.diff(cwd=str(folder))
    assert "switch_ir_optim(True)" not in diff and "-config.set_cpu_math_library_num_threads(8)" in diff


def test_an_unsafe_wrapper_setting_shown_merges_with_the_keyword_the_safe_one_adds(tmp_path):
    """PaddleOCR's cpu_threads needs enable_mkldnn=True (its knob says so): the oneDNN fix adds the same keyword."""
    folder = copied("paddleocr", tmp_path)
    safe = fixed(folder, CASES["paddleocr"])
    assert [(one.rule_id, one.setting) for one in safe.hidden] == [("PD-CFG-001", "onednn")]
    unsafe = fixed(folder, dataclasses.replace(CASES["paddleocr"], unsafe=True))
    assert [one.wanted.setting for one in unsafe.applied] == ["threads", "onednn"]
    write_all(unsafe.patches)
    assert (folder / "app.py").read_bytes() == (FIXTURES / "paddleocr" / "app.py.out").read_bytes()


def test_calls_added_after_one_config_are_one_insertion(tmp_path):
    """Two settings the Config never makes, both added after ``config = Config(...)``: one insertion, in the
    table's order, each change with its own why."""
    from paddle_doctor.base.vocabulary import FixSafety
    from paddle_doctor.fix.files import patched_text, read_file
    from paddle_doctor.fix.places import place, place_all
    from paddle_doctor.fix.plan import Wanted

    folder = copied("two_inserts", tmp_path)
    source = read_source([str(folder / "app.py")], environ={})
    facts = dataclasses.replace(make_facts(quota=2.0), service_source=source)
    wanted = [Wanted("threads", 2, None, "PD-CFG-001", FixSafety.SAFE, "measured"),
              Wanted("precision", Precision.BF16, Precision.FP32, "PD-CFG-001", FixSafety.UNSAFE, "measured")]
    read = read_file(str(folder / "app.py"), [str(folder)])
    placed = place_all(facts, wanted, Targets(), lambda path: read.text)
    assert [len(one.edits) for one in placed] == [1, 1] and placed[0].edits[0][1].why != placed[1].edits[0][1].why
    edits = tuple(edit for one in placed for _, edit in one.edits)
    assert patched_text(read, edits) == (FIXTURES / "two_inserts" / "app.py.out").read_text(encoding="utf-8")
    assert place_all(facts, wanted[:1], Targets(), lambda path: read.text) == [place(facts, wanted[0], Targets(), lambda path: read.text)]


def refused_alone(result: FixResult, setting: str) -> str:
    """The one-line reason the fix of ``setting`` was refused, asserting it is the only one and nothing changes."""
    assert [one.wanted.setting for one in result.refused] == [setting]
    assert all(not one.edits for one in result.refused)
    reason = result.refused[0].refused
    assert reason is not None and "\n" not in reason
    return reason


def test_a_value_read_from_the_environment_without_its_file_is_refused(tmp_path):
    folder = copied("env_dockerfile", tmp_path)
    reason = refused_alone(fixed(folder), "threads")
    assert reason == (f"{folder / 'app.py'}:8: threads is read from $INFER_THREADS; set INFER_THREADS=2 where the service's "
                      "environment is set (--dockerfile FILE or --manifest FILE edits it there)")


def test_a_setting_given_on_the_command_line_is_refused(tmp_path):
    folder = copied("script", tmp_path)
    result = fixed(folder, Case(flags={"threads": 8}))
    reason = refused_alone(result, "threads")
    assert reason == "threads is given on the command line (--threads); it is no file's: run the service with 2 and pass that instead"
    assert "enable_mkldnn" in result.diff(cwd=str(folder))  # the other change is made


def test_an_expression_the_doctor_cannot_rewrite_is_refused(tmp_path):
    (tmp_path / "app.py").write_text(
        "from paddle.inference import Config, create_predictor\n\n\ndef compute():\n    return 8\n\n\n"
        "config = Config('model')\nconfig.set_cpu_math_library_num_threads(compute())\npredictor = create_predictor(config)\n",
        encoding="utf-8")
    result = fixed(tmp_path)
    assert refused_alone(result, "threads") == (f"{tmp_path / 'app.py'}:9: threads is set from `compute()`, which "
                                                "paddle-doctor does not rewrite; set it to 2 there")
    assert result.diff(cwd=str(tmp_path)) == ""


def test_a_wrapper_given_its_keywords_unseen_is_refused(tmp_path):
    folder = copied("paddleocr", tmp_path)
    (folder / "app.py").write_text("from paddleocr import PaddleOCR\n\nOPTIONS = {'lang': 'en'}\nocr = PaddleOCR(**OPTIONS)\n",
                                   encoding="utf-8")
    result = fixed(folder, CASES["paddleocr"])
    assert refused_alone(result, "threads") == (
        f"{folder / 'app.py'}:4: PaddleOCR(...) passes **keywords, which may hold enable_mkldnn; "
        "expected enable_mkldnn= written in the call to change it")
    assert result.diff(cwd=str(folder)) == ""


def test_a_file_changed_after_the_fix_read_it_is_not_written(tmp_path):
    folder = copied("script", tmp_path)
    result = fixed(folder)
    assert result.patches
    app = folder / "app.py"
    edited = app.read_text(encoding="utf-8").replace("(8)", "(4)")
    app.write_text(edited, encoding="utf-8")
    with pytest.raises(FixRefused, match=r"app\.py: changed since paddle-doctor read it; run fix again$"):
        write_all(result.patches)
    assert app.read_text(encoding="utf-8") == edited


def test_two_fixes_of_one_span_refuse_the_whole_fix(tmp_path):
    """Threads and the oneDNN cache read from one variable, the recommendation wants them different: its ENV line
    cannot say both, and nothing is written."""
    folder = copied("env_dockerfile", tmp_path)
    app = folder / "app.py"
    app.write_text(app.read_text(encoding="utf-8").replace(
        "config.enable_mkldnn()\n",
        'config.enable_mkldnn()\nconfig.set_mkldnn_cache_capacity(int(os.environ.get("INFER_THREADS", "8")))\n'), encoding="utf-8")
    case = Case(unsafe=True, dockerfile="Dockerfile", recommended=PredictorConfig(threads=2, onednn=True, onednn_cache_capacity=10),
                measured=PredictorConfig(threads=8, onednn=True, onednn_cache_capacity=8))
    before = {path: path.read_bytes() for path in folder.iterdir()}
    with pytest.raises(FixRefused, match=r"Dockerfile: line 5: two fixes change the same text \('PD-CFG-001 threads 8 -> 2 .*"
                                         r"' and 'PD-CFG-001 onednn_cache_capacity 8 -> 10 .*'\); expected edits that do not overlap$"):
        fixed(folder, case)
    assert {path: path.read_bytes() for path in folder.iterdir()} == before


def test_a_parameter_named_as_a_module_constant_is_not_the_constant(tmp_path):
    """``threads`` in the function is its parameter: the module's ``threads = 8`` is not what the call reads."""
    (tmp_path / "app.py").write_text(
        "from paddle.inference import Config, create_predictor\n\nthreads = 8\n\n\ndef build(threads):\n"
        "    config = Config('model')\n    config.set_cpu_math_library_num_threads(threads)\n    return create_predictor(config)\n\n\n"
        "PREDICTOR = build(6)\n", encoding="utf-8")
    result = fixed(tmp_path)
    assert refused_alone(result, "threads") == (f"{tmp_path / 'app.py'}:8: threads is set from `threads`, which "
                                                "paddle-doctor does not rewrite; set it to 2 there")


RECOMMENDED = {"recommended": PredictorConfig(threads=2, onednn=True), "measured": PredictorConfig(threads=8, onednn=False)}


def test_select_of_a_failing_rule_keeps_the_recommended_change_of_its_setting(tmp_path):
    result = fixed(copied("script", tmp_path), Case(select=("PD-CPU-010",), **RECOMMENDED))
    assert [(one.wanted.rule_id, one.wanted.setting) for one in result.applied] == [("PD-CFG-001", "threads")]
    assert "PD-CPU-010" in result.applied[0].wanted.rules and result.left_out == 1  # oneDNN, asked by PD-CPU-004 and PD-CFG-001
    ignored = fixed(copied("script", tmp_path / "again"), Case(ignore=("PD-CFG-001",), **RECOMMENDED))
    # each change is asked by a finding's rule too, which --ignore PD-CFG-001 leaves asking
    assert [one.wanted.setting for one in ignored.applied] == ["threads", "onednn"]
    both = fixed(copied("script", tmp_path / "both"), Case(ignore=("PD-CFG-001", "PD-CPU-004"), **RECOMMENDED))
    assert [one.wanted.setting for one in both.applied] == ["threads"]


def test_a_drifted_recommendation_leaves_the_findings_own_safe_fixes(tmp_path):
    result = fixed(copied("script", tmp_path), Case(drifted=True, **RECOMMENDED))
    assert [(one.wanted.rule_id, str(one.wanted.safety)) for one in result.applied] == [("PD-CPU-010", "safe"), ("PD-CPU-004", "safe")]
    assert result.hidden == []


def test_a_wrapper_yaml_inside_an_installed_package_is_never_edited(tmp_path):
    folder = copied("rapidocr", tmp_path)
    (folder / "site-packages" / "rapidocr_paddle" / "config.yaml").write_text("Global:\n  cpu_math_library_num_threads: -1\n")
    (folder / "app.py").write_text((folder / "app.py").read_text().replace(
        'config_path="config.yaml"', 'config_path="site-packages/rapidocr_paddle/config.yaml"'))
    result = fixed(folder, Case(recommended=PredictorConfig(threads=2, onednn=True)))
    assert not result.patches
    assert "is a file of an installed package" in result.refused[0].refused


def test_a_wrapper_yaml_that_is_missing_refuses_that_change_only(tmp_path):
    folder = copied("rapidocr", tmp_path)
    (folder / "config.yaml").unlink()
    result = fixed(folder, Case(recommended=PredictorConfig(threads=2, onednn=True)))
    assert result.refused and "config.yaml" in result.refused[0].refused and not result.patches


def test_a_config_built_over_several_lines_gets_its_call_at_the_statements_indentation(tmp_path):
    from paddle_doctor.fix.python_edit import insert_after_config

    text = "def build(model_dir):\n    config = (\n        Config(model_dir)\n    )\n    return config\n"
    (edit,) = insert_after_config(text, "app.py", 3, [("set_cpu_math_library_num_threads", [2])], "PD-CPU-011")
    patched = text[:edit.start] + edit.replacement + text[edit.end:]
    assert patched.splitlines()[4] == "    config.set_cpu_math_library_num_threads(2)"
    assert insert_after_config(patched, "app.py", 3, [("set_cpu_math_library_num_threads", [2])], "PD-CPU-011") == []


def test_a_line_that_builds_no_config_gets_no_call(tmp_path):
    from paddle_doctor.fix.python_edit import insert_after_config
    from paddle_doctor.fix.text import EditRefused

    with pytest.raises(EditRefused, match=r"app\.py:1: no Config is built and bound to one name there"):
        insert_after_config("model = service['model']\nconfig = Config(model)\n", "app.py", 1, [("enable_mkldnn", [])], "why")


def test_fewer_workers_are_unsafe_and_said_in_the_launchers_terms(tmp_path):
    result = fixed(copied("gunicorn", tmp_path), Case(folder=True))
    assert [(one.rule_id, one.setting, one.value, str(one.safety)) for one in result.hidden] == [("PD-CPU-010", "instances", 2, "unsafe")]
    assert not result.patches


def test_workers_given_on_the_launchers_command_line_are_said_in_its_flag(tmp_path):
    from paddle_doctor.facts.launcher import Launcher, LauncherFacts, LauncherKnob, LauncherSetting

    folder = copied("gunicorn", tmp_path)
    source = read_source([str(folder / "app.py")], environ={})
    source = dataclasses.replace(source, launcher=LauncherFacts(Launcher.GUNICORN, "app:app", settings=[
        LauncherSetting(LauncherKnob.WORKERS, 4, "-w 4, the command line of process 7")]))
    service, origins = resolve_service(ServiceOptions(), source)
    facts = dataclasses.replace(make_facts(quota=2.0), service=service, service_origins=origins, service_source=source)
    result = fix(facts, RULES, Policy(), FixOptions(unsafe=True), project=[str(folder)])
    assert not result.patches
    assert [one.refused for one in result.refused] == [
        "gunicorn's workers come from -w 4, the command line of process 7: set 2 workers there (-w 2)"]


def test_a_warnings_fix_unmeasured_is_passed_over(tmp_path):
    result = fixed(copied("insert", tmp_path))
    assert not result.patches
    assert [(one.rule_id, one.setting) for one in result.passed] == [("PD-CPU-011", "threads")]
