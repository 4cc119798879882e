"""--source: the service's Config settings read with ast, the lint rules on them, and the precedence
flags > --config > source. Pure reading: nothing here imports or runs the service."""

import ast
import json
import os
import textwrap
import time
from dataclasses import replace

import jsonschema
import pytest
from conftest import FIXTURES, fixture_root, report_json, run_doctor
from factories import AVX2_FLAGS, make_facts, run_check
from machine import has_avx2
from paddle_doctor.base.vocabulary import SourceStop
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.judge.findings import Status
from paddle_doctor.judge.registry import load_check
from paddle_doctor.service import ServiceConfigError, ServiceOptions
from paddle_doctor.service.resolve import resolve_service
from paddle_doctor.source import SourceInputError, read_source

SERVICES = FIXTURES / "services"
NO_PROBES = ("--no-paddle", "--no-gpu")


def settings(facts, name):
    return [setting for setting in facts.settings if setting.name == name]


def write(tmp_path, code, name="app.py"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(code))
    return str(path)


# ------------------------------------------------------------------ reading the styles


def test_module_level_config_with_env_threads_and_a_helper_that_disables_onednn():
    source = read_source([str(SERVICES / "env_helper.py")])
    (threads,) = settings(source, "threads")
    assert (threads.value, threads.env_var, threads.env_default, threads.location.line) == (6, "INFER_THREADS", "6", 15)
    (onednn,) = settings(source, "onednn")
    assert (onednn.value, onednn.location.line, onednn.code) == (False, 10, "config.disable_mkldnn()")
    assert [location.line for location in source.configs] == [14]


def test_the_live_environment_wins_over_the_default_in_the_source():
    source = read_source([str(SERVICES / "env_helper.py")], {"INFER_THREADS": "3"})
    (threads,) = settings(source, "threads")
    assert (threads.value, threads.env_default, threads.env_live) == (3, "6", "3")


def test_a_class_holding_the_config_and_a_threaded_server_sharing_one_predictor():
    source = read_source([str(SERVICES / "class_server.py")])
    assert [(s.name, s.value) for s in source.settings] == [("threads", 2), ("ir_optim", False)]
    kinds = {pattern.kind: pattern.location.line for pattern in source.patterns}
    assert kinds == {"shared_predictor_threads": 15, "no_warmup": 15}


def test_a_factory_with_keyword_arguments_and_the_host_cpu_count():
    source = read_source([str(SERVICES / "factory.py")])
    (threads,) = settings(source, "threads")
    assert (threads.evaluated, threads.value, threads.host_cpu_count) == (False, None, True)
    assert [(s.name, s.value) for s in source.settings if s.evaluated] == [("onednn", True), ("onednn_cache_capacity", 10)]


def test_a_flask_handler_that_builds_a_predictor_per_request_with_tensorrt():
    source = read_source([str(SERVICES / "flask_style.py")])
    assert [(p.kind, p.location.line) for p in source.patterns] == [("predictor_per_request", 18)]
    assert settings(source, "tensorrt.use_static")[0].value is False
    assert settings(source, "tensorrt.precision")[0].value == "fp16"
    assert settings(source, "tensorrt.workspace_mb")[0].value == 1024
    assert (settings(source, "device")[0].value, settings(source, "gpu_memory_pool_mb")[0].value) == ("gpu", 256)
    (capacity,) = settings(source, "onednn_cache_capacity")
    assert not capacity.evaluated and capacity.value is None


def test_a_fastapi_service_with_a_pool_and_a_warm_up_has_nothing_to_lint():
    source = read_source([str(SERVICES / "fastapi_style.py")])
    assert source.patterns == []
    (threads,) = settings(source, "threads")
    assert (threads.value, threads.env_var, threads.env_default) == (2, "INFER_THREADS", "2")


def test_a_folder_is_read_file_by_file_and_a_syntax_error_is_one_error_at_its_line(tmp_path):
    write(tmp_path, "import paddle.inference as pi\nc = pi.Config()\nc.switch_ir_optim(False)\n", "good.py")
    write(tmp_path, "def broken(:\n    pass\n", "bad.py")
    (tmp_path / ".venv").mkdir()
    write(tmp_path / ".venv", "raise SystemExit\n", "skipped.py")
    source = read_source([str(tmp_path)])
    assert [f.rsplit("/", 1)[1] for f in source.files] == ["bad.py", "good.py"]
    (error,) = source.errors
    assert (error.location.file.endswith("bad.py"), error.location.line) == (True, 1)
    assert error.message.startswith("syntax error")
    assert settings(source, "ir_optim")[0].value is False


@pytest.mark.parametrize("expression, value, evaluated", [
    ("4", 4, True),
    ("N", 8, True),
    ("2 * N", 16, True),
    ("int(os.getenv('T', '5'))", 5, True),
    ("int(os.environ['T'])", None, False),
    ("len(os.sched_getaffinity(0))", None, False),
    ("max(1, os.cpu_count() // 2)", None, False),
    ("helper_threads()", None, False),
])
def test_what_can_and_cannot_be_evaluated(tmp_path, expression, value, evaluated):
    path = write(tmp_path, f"""
        import os
        from paddle.inference import Config
        N = 8
        config = Config()
        config.set_cpu_math_library_num_threads({expression})
    """)
    (threads,) = settings(read_source([path]), "threads")
    assert (threads.value, threads.evaluated) == (value, evaluated)


def test_a_helper_parameter_takes_the_value_every_call_site_passes(tmp_path):
    path = write(tmp_path, """
        from paddle import inference
        def configure(cfg, n):
            cfg.set_cpu_math_library_num_threads(n)
        def build(threads):
            config = inference.Config()
            configure(config, threads)
            return config
        a = build(4)
        b = build(threads=4)
    """)
    (threads,) = settings(read_source([path]), "threads")
    assert (threads.value, threads.location.line) == (4, 4)


def test_a_name_assigned_two_different_values_is_not_guessed(tmp_path):
    path = write(tmp_path, """
        import sys
        from paddle import inference
        N = 2
        if sys.argv[1:]:
            N = 4
        config = inference.Config()
        config.set_cpu_math_library_num_threads(N)
    """)
    (threads,) = settings(read_source([path]), "threads")
    assert not threads.evaluated


@pytest.mark.parametrize("rebinding", [
    "N *= 4",
    "for N in (2, 4):\n    pass",
    "N, M = 4, 1",
    "def setup(threads):\n    global N\n    N = threads\nsetup(8)",
    "from settings import N",
    "with open('x') as N:\n    pass",
    "for name, N in [('a', 4)]:\n    pass",
    "with open('x') as (f, N):\n    pass",
])
def test_a_name_bound_another_way_is_not_guessed(tmp_path, rebinding):
    """``N = 2`` then ``N *= 4``, a loop, unpacking, a ``global`` write in a function: the first value would be a guess."""
    body = "\n".join(["from paddle import inference", "N = 2", rebinding, "config = inference.Config()",
                      "config.set_cpu_math_library_num_threads(N)", ""])
    path = tmp_path / "app.py"
    path.write_text(body)
    (threads,) = settings(read_source([str(path)]), "threads")
    assert not threads.evaluated, rebinding


def test_calls_on_objects_that_are_not_a_config_are_not_settings(tmp_path):
    path = write(tmp_path, """
        from paddle import inference
        class Other:
            def disable_mkldnn(self): ...
        other = Other()
        other.disable_mkldnn()
        config = inference.Config()
    """)
    assert read_source([path]).settings == []


def test_a_missing_source_path_is_an_input_error_naming_it(tmp_path):
    with pytest.raises(SourceInputError, match="no-such.py: no such file or folder"):
        read_source([str(tmp_path / "no-such.py")])


# ------------------------------------------------------------------ precedence


def test_flags_beat_config_which_beats_source(tmp_path):
    source = read_source([str(SERVICES / "env_helper.py")])
    config = tmp_path / "service.yaml"
    config.write_text("threads: 4\n")
    service, origins = resolve_service(ServiceOptions(config=str(config), onednn=True), source)
    assert (service.threads, service.onednn, service.memory_optim) == (4, True, True)
    by_name = {origin.name: origin for origin in origins}
    assert (by_name["threads"].origin, by_name["threads"].detail) == ("config", str(config))
    assert (by_name["onednn"].origin, by_name["onednn"].detail) == ("flag", "--onednn")
    assert by_name["memory_optim"].origin == "source"
    assert by_name["memory_optim"].detail.endswith("env_helper.py:11 config.enable_memory_optim()")


def test_the_verification_baseline_is_the_configuration_the_source_builds():
    service, _ = resolve_service(source=read_source([str(SERVICES / "env_helper.py")], {"INFER_THREADS": "4"}))
    facts = replace(make_facts(), service=service)
    baseline = PredictorConfig.of_service(facts)
    assert (baseline.threads, baseline.onednn) == (4, False)


def test_a_setting_the_source_cannot_evaluate_keeps_the_default_and_says_where():
    service, origins = resolve_service(source=read_source([str(SERVICES / "factory.py")]))
    assert service.threads is None
    (threads,) = [origin for origin in origins if origin.name == "threads"]
    assert threads.value is None
    assert threads.detail.startswith("set at ") and "factory.py:10 from os.cpu_count(), the host's CPUs" in threads.detail


def test_a_source_value_that_does_not_fit_is_left_out(tmp_path):
    path = write(tmp_path, """
        from paddle import inference
        config = inference.Config()
        config.set_cpu_math_library_num_threads(0)
    """)
    service, origins = resolve_service(source=read_source([path]))
    assert service.threads is None
    assert origins[0].detail.endswith("the value 0 does not fit, not used")


def test_a_bad_config_file_is_still_an_error_naming_it(tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("threads: 0\n")
    with pytest.raises(ServiceConfigError, match="service.yaml: field 'threads'"):
        resolve_service(ServiceOptions(config=str(config)), read_source([str(SERVICES / "env_helper.py")]))


# ------------------------------------------------------------------ lint rules: fires / stays silent

LINT = {
    "PD-SRC-001": "paddle_doctor.checks.source_onednn:CHECK",
    "PD-SRC-002": "paddle_doctor.checks.source_ir_optim:CHECK",
    "PD-SRC-003": "paddle_doctor.checks.source_trt_cache:CHECK",
    "PD-SRC-004": "paddle_doctor.checks.source_predictor_per_request:CHECK",
    "PD-SRC-005": "paddle_doctor.checks.source_shared_predictor:CHECK",
    "PD-SRC-006": "paddle_doctor.checks.source_warmup:CHECK",
    "PD-SRC-007": "paddle_doctor.checks.source_host_cpus:CHECK",
    "PD-SRC-008": "paddle_doctor.checks.source_coverage:CHECK",
}
FIRES = {
    "env_helper.py": {"PD-SRC-001": [10]},
    "class_server.py": {"PD-SRC-002": [12], "PD-SRC-005": [15], "PD-SRC-006": [15]},
    "factory.py": {"PD-SRC-007": [10]},
    "flask_style.py": {"PD-SRC-003": [11], "PD-SRC-004": [18]},
    "fastapi_style.py": {},
}


@pytest.mark.parametrize("service", sorted(FIRES))
def test_each_lint_rule_fires_exactly_where_the_service_does_it(service):
    facts = replace(make_facts(flags=AVX2_FLAGS), service_source=read_source([str(SERVICES / service)]))
    for rule, reference in LINT.items():
        (finding,) = load_check(reference).run(facts)
        if rule in FIRES[service]:
            assert finding.status in (Status.FAIL, Status.WARN), (rule, finding)
            assert [location.line for location in finding.locations] == FIRES[service][rule]
            assert f"{service}:{FIRES[service][rule][0]}" in finding.message
        else:
            assert finding.status == Status.PASS, (rule, finding)


def test_the_lint_rules_skip_without_a_source_and_onednn_off_skips_without_avx2():
    facts = make_facts(flags=["fpu", "sse4_2", "avx"])
    for reference in LINT.values():
        (skip,) = run_check(load_check(reference), facts)
        assert (skip.status, skip.message) == (Status.SKIP, "no service source was read (--source FILE, or --pid for the script the service runs)")
    facts = replace(facts, service_source=read_source([str(SERVICES / "env_helper.py")]))
    (finding,) = load_check(LINT["PD-SRC-001"]).run(facts)
    assert finding.status == Status.SKIP and "lacks AVX2" in finding.message


# ------------------------------------------------------------------ the command line


def test_sarif_locates_the_disable_mkldnn_line_and_text_shows_file_colon_line():
    app = str(SERVICES / "env_helper.py")
    sarif = run_doctor("--source", app, "--format", "sarif", *NO_PROBES)
    results = {r["ruleId"]: r for r in json.loads(sarif.stdout)["runs"][0]["results"]}
    (location,) = results["PD-CPU-004"]["locations"]  # the service's oneDNN setting comes from that line
    assert location["physicalLocation"]["region"]["startLine"] == 10
    assert location["physicalLocation"]["artifactLocation"]["uri"].endswith("/services/env_helper.py")
    (threads,) = [s for s in json.loads(sarif.stdout)["runs"][0]["properties"]["service_settings"] if s["name"] == "threads"]
    assert threads["value"] == 6 and threads["origin"] == "source" and "INFER_THREADS (default 6" in threads["detail"]
    text = run_doctor("--source", app, *NO_PROBES, env={"COLUMNS": "200"})  # -q is the summary alone
    assert "env_helper.py:10" in text.stdout
    assert "threads = 6" in text.stdout and "INFER_THREADS (default 6)" in text.stdout


def test_json_names_each_setting_with_its_origin_and_validates(report_schema):
    result = run_doctor("--source", str(SERVICES / "env_helper.py"), "--threads", "3", "--json", *NO_PROBES)
    report = report_json(result)
    jsonschema.validate(report, report_schema)
    origins = {setting["name"]: setting for setting in report["service"]["settings"]}
    assert (origins["threads"]["value"], origins["threads"]["origin"]) == (3, "flag")
    assert (origins["onednn"]["value"], origins["onednn"]["origin"]) == (False, "source")
    (lint,) = [f for f in report["findings"] if f["rule_id"] == "PD-SRC-001"]  # the live CPU decides why it is silent
    assert lint["status"] == "skip" and ("PD-CPU-004 reports" if has_avx2() else "lacks AVX2") in lint["message"]


@pytest.mark.parametrize("service, setting, judged_by, lint, line", [
    ("env_helper.py", "--onednn", "PD-CPU-004", "PD-SRC-001", 10),
    ("class_server.py", None, "PD-GRAPH-001", "PD-SRC-002", 12),
])
def test_one_line_of_code_is_one_finding(service, setting, judged_by, lint, line):
    """The line that decides the service's setting is reported by the check that judges the
    setting (with the line, and its measured fix); the lint rule for the same call stays silent and
    says who reports it. When a flag decides the setting instead, the line is the lint rule's."""
    app = str(SERVICES / service)
    findings = {f["rule_id"]: f for f in report_json(run_doctor("--source", app, "--json", *NO_PROBES))["findings"]}
    judged, linted = findings[judged_by], findings[lint]
    assert judged["status"] == "fail" and [(loc["file"], loc["line"]) for loc in judged["locations"]] == [(app, line)]
    assert linted["status"] == "skip" and linted["message"].startswith(f"{judged_by} reports {app}:{line}:")
    if setting:
        findings = {f["rule_id"]: f for f in report_json(run_doctor("--source", app, setting, "--json", *NO_PROBES))["findings"]}
        assert findings[judged_by]["status"] == "pass" and findings[lint]["status"] == "fail"
        assert [loc["line"] for loc in findings[lint]["locations"]] == [line]


def test_a_syntax_error_is_one_line_and_the_report_still_comes(tmp_path):
    bad = write(tmp_path, "def broken(:\n", "bad.py")
    result = run_doctor("--source", bad, "--json", "--root", str(fixture_root("intel-noavx2-v1-quota")), *NO_PROBES)
    assert result.returncode == 0, result.stderr  # the recorded container has nothing at or above error
    report = report_json(result)
    assert f"{bad}:1: syntax error" in result.stderr and "Traceback" not in result.stderr
    assert report["service"]["source"]["errors"][0]["location"]["line"] == 1


def test_a_missing_source_is_exit_2_with_one_line(tmp_path):
    result = run_doctor("--source", str(tmp_path / "gone.py"), *NO_PROBES)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [(f"paddle-doctor: error: --source {tmp_path / 'gone.py'}: no such file or folder; "
                                                  "expected the service's .py file or its folder")]


def test_sarif_paths_resolve_from_the_repository_never_through_dot_dot(tmp_path):
    """In CI the doctor runs at the repository's root: a source under it is a relative path code
    scanning maps to the file; one outside it is an absolute file URI, never ``../app.py``."""
    inside = run_doctor("--source", "tests/fixtures/services/env_helper.py", "--format", "sarif", *NO_PROBES)
    (result,) = [r for r in json.loads(inside.stdout)["runs"][0]["results"] if r["ruleId"] == "PD-CPU-004"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "tests/fixtures/services/env_helper.py"
    outside = tmp_path / "app.py"
    outside.write_text((SERVICES / "env_helper.py").read_text())
    far = run_doctor("--source", os.path.relpath(outside), "--format", "sarif", *NO_PROBES)
    (result,) = [r for r in json.loads(far.stdout)["runs"][0]["results"] if r["ruleId"] == "PD-CPU-004"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == outside.resolve().as_uri()


def test_threads_the_source_sets_from_an_unknown_value_are_not_judged_as_paddles_default(tmp_path):
    app = tmp_path / "app.py"
    app.write_text("import sys\nfrom paddle import inference\nconfig = inference.Config()\n"
                   "config.set_cpu_math_library_num_threads(int(sys.argv[1]))\n")
    report = report_json(run_doctor("--source", str(app), "--json", *NO_PROBES))
    found = {f["rule_id"]: f for f in report["findings"]}
    for rule in ("PD-CPU-010", "PD-CPU-011"):
        assert found[rule]["status"] == "skip" and "thread count is not known: set at" in found[rule]["message"]
    assert "app.py:4" in found["PD-CPU-010"]["message"] and "give --threads" in found["PD-CPU-010"]["message"]
    flagged = report_json(run_doctor("--source", str(app), "--threads", "2", "--json", *NO_PROBES))
    assert {f["rule_id"]: f for f in flagged["findings"]}["PD-CPU-010"]["status"] != "skip"  # a flag makes it known


# ------------------------------------------------------------------ a source the container supplies cannot hold the read


def many_helpers(count: int) -> str:
    """A service of ``count`` helpers, each calling the one before it and setting the threads: about 400 bytes each."""
    lines = ["import os", "import paddle.inference as paddle_infer", "", "config = paddle_infer.Config('m.json', 'm.pdiparams')", ""]
    for n in range(count):
        lines += [f"def helper_{n}(config, count):",
                  f"    '''Helper {n}: {'padding ' * 20}'''",
                  f"    value = int(os.environ.get('THREADS_{n}', '4')) + count",
                  f"    total = helper_{n - 1}(config, value) if count else value" if n else "    total = value",
                  "    config.set_cpu_math_library_num_threads(total)",
                  "    return total", ""]
    return "\n".join(lines + [f"helper_{count - 1}(config, 1)", ""])


def seconds_to_read(path, helpers: int) -> float:
    """The best of two reads (the machine may be busy), each of which read every helper's setting."""
    times = []
    for _ in range(2):
        started = time.monotonic()
        source = read_source([str(path)])
        times.append(time.monotonic() - started)
        assert len(settings(source, "threads")) == helpers and source.stopped is None and not source.errors
    return min(times)


def test_a_file_of_many_helpers_reads_in_time_that_grows_with_its_size_not_its_square(tmp_path):
    small, large = tmp_path / "small.py", tmp_path / "large.py"
    small.write_text(many_helpers(410))
    large.write_text(many_helpers(1640))
    assert large.stat().st_size > 650_000
    baseline, measured = seconds_to_read(small, 410), seconds_to_read(large, 1640)
    # 4 times the size: linear reading takes about 4 times as long, a walk of the file per helper 16 times
    assert measured < 8 * baseline, (baseline, measured)


def test_the_source_read_stops_when_its_time_runs_out_and_says_so(tmp_path):
    (tmp_path / "a_first.py").write_text(many_helpers(3))
    (tmp_path / "b_large.py").write_text(many_helpers(1600))
    (tmp_path / "c_after.py").write_text(many_helpers(3))
    started = time.monotonic()
    assert len(settings(read_source([str(tmp_path / "b_large.py")]), "threads")) == 1600
    whole = time.monotonic() - started
    started = time.monotonic()
    for name in ("a_first.py", "b_large.py", "c_after.py"):  # the files are parsed first, within the same time
        ast.parse((tmp_path / name).read_text())
    parsed = time.monotonic() - started
    budget = round(parsed + (whole - parsed) / 2, 3)  # past the parsing, half way through reading b_large.py's Configs
    started = time.monotonic()
    source = read_source([str(tmp_path)], seconds=budget)
    assert time.monotonic() - started < budget + whole  # it stopped within the file, not after it
    assert source.stopped == SourceStop.TIME
    # the files are one program, parsed first (linear, quick); the reading of their Configs ran out in b_large.py
    assert source.files == [str(tmp_path / name) for name in ("a_first.py", "b_large.py", "c_after.py")]
    assert {setting.location.file for setting in source.settings} <= {str(tmp_path / "a_first.py"), str(tmp_path / "b_large.py")}
    assert [(str(e.location), e.message) for e in source.errors] == [
        (f"{tmp_path / 'b_large.py'}:0", f"cannot read: the {budget:g} s the doctor gives the source ran out in this file")]
    facts = replace(make_facts(), service_source=source)
    (finding,) = load_check(LINT["PD-SRC-008"]).run(facts)
    assert finding.status == Status.FAIL and finding.message.startswith(
        "the time the doctor gives the source ran out, 3 Python files in: what was not read or searched by then is not judged; "
        f"1 file not read ({tmp_path / 'b_large.py'}:0: the {budget:g} s the doctor gives the source ran out in this file)")
