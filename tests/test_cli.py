"""The CLI as users run it: reports, exit codes, replay of recorded facts, and bad input."""

import json
import os
import subprocess
import sys

import jsonschema
import pytest
from conftest import REPO, fixture_root, report_json, report_with_its_exit, run_doctor, statuses
from paddle_doctor.judge.rules import load_rules

QUOTA_ROOT = "intel-noavx2-v1-quota"  # 2-CPU quota, Sandy Bridge without AVX2


def test_json_report_validates_against_the_schema(report_schema):
    result = run_doctor("--json", "--root", str(fixture_root(QUOTA_ROOT)), "--threads", "8")
    report = report_json(result)
    jsonschema.validate(report, report_schema)
    assert report["schema_version"] == 2
    assert report["tool"]["name"] == "paddle-doctor"
    assert report["host"]["cpu_budget"] == 2
    over = next(f for f in report["findings"] if f["rule_id"] == "PD-CPU-010")
    assert over["status"] == "fail" and over["severity"] == "error"
    assert over["fix"]["changes"][0]["code"] == "config.set_cpu_math_library_num_threads(2)"
    assert over["explain"] == "paddle-doctor explain PD-CPU-010"
    assert result.returncode == 1


@pytest.mark.slow  # imports Paddle
def test_live_json_report_with_the_real_paddle_validates(report_schema):
    result = run_doctor("--json")
    report = report_with_its_exit(result)
    jsonschema.validate(report, report_schema)
    assert report["host"]["paddle_status"] == "ok"
    assert statuses(report)["PD-PADDLE-002"] == "pass"


@pytest.mark.parametrize(
    "args, code",
    [
        (["--threads", "8"], 1),  # PD-CPU-010 is an error
        (["--threads", "2"], 0),  # PD-CPU-002, -012 and -013 (warnings) remain
        (["--threads", "2", "--fail-on", "warning"], 1),
        (["--threads", "8", "--ignore", "PD-CPU-010"], 0),
        (["--threads", "8", "--ignore", "PD-CPU"], 0),
    ],
)
def test_exit_codes_follow_fail_on_and_ignore(args, code):
    result = run_doctor("--json", "--root", str(fixture_root(QUOTA_ROOT)), *args)
    assert result.returncode == code, result.stdout[-2000:]


def test_ignored_rules_are_listed_not_reported():
    report = report_json(run_doctor("--json", "--root", str(fixture_root(QUOTA_ROOT)), "--ignore", "PD-CPU-01"))
    assert "PD-CPU-010" not in statuses(report)
    assert set(report["summary"]["ignored"]) >= {"PD-CPU-010", "PD-CPU-011", "PD-CPU-013"}


def test_settings_file_overrides_severity_and_threshold(tmp_path):
    settings = tmp_path / "doctor.yaml"
    settings.write_text("fail_on: warning\nseverity:\n  PD-CPU-002: info\n  PD-CPU-012: info\n  PD-CPU-013: info\n")
    result = run_doctor("--json", "--root", str(fixture_root(QUOTA_ROOT)), "--threads", "2", "--settings", str(settings))
    report = report_json(result)
    severities = {f["rule_id"]: f["severity"] for f in report["findings"]}
    assert severities["PD-CPU-002"] == "info"
    assert result.returncode == 0


def test_facts_replay_gives_identical_findings(tmp_path):
    root = str(fixture_root("amd-avx512bf16-v2-quota"))
    snapshot = tmp_path / "snap.json"
    recorded = run_doctor("facts", "--root", root, "--threads", "4", "--output", str(snapshot))
    assert recorded.returncode == 0, recorded.stderr
    live = report_json(run_doctor("--json", "--root", root, "--threads", "4"))
    replay = report_json(run_doctor("check", "--json", "--facts", str(snapshot)))
    assert live["findings"] == replay["findings"]
    assert statuses(replay)["PD-CPU-010"] == "fail"


def test_facts_redact_secrets_but_keep_other_variables():
    result = run_doctor("facts", "--no-paddle", env={
        "HF_TOKEN": "hf_abc", "DB_PASSWORD": "pw", "AWS_SECRET_ACCESS_KEY": "k",
        "PIP_INDEX_URL": "https://user:s3cret@pypi.example/simple", "OMP_NUM_THREADS": "2"})
    env = json.loads(result.stdout)["env"]
    assert env["HF_TOKEN"] == env["DB_PASSWORD"] == env["AWS_SECRET_ACCESS_KEY"] == "<redacted>"
    assert env["PIP_INDEX_URL"] == "https://<redacted>@pypi.example/simple"
    assert env["OMP_NUM_THREADS"] == "2"
    assert "s3cret" not in result.stdout and "hf_abc" not in result.stdout


def test_text_report_shows_cause_and_fix():
    result = run_doctor("--root", str(fixture_root(QUOTA_ROOT)), "--threads", "8", env={"COLUMNS": "120"})
    assert result.returncode == 1
    out = result.stdout
    assert "PD-CPU-010" in out and "Threads x instances exceed" in out
    assert "config.set_cpu_math_library_num_threads(2)" in out
    assert "CPU budget" in out and "2 CPUs" in out
    assert "exit 1" in out


# ------------------------------------------------------------------ bad input


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def test_unknown_fail_on_value():
    line = one_line_error(run_doctor("--fail-on", "fatal", "--no-paddle"))
    assert "--fail-on" in line and "fatal" in line and "error" in line


def test_missing_facts_file(tmp_path):
    line = one_line_error(run_doctor("--facts", str(tmp_path / "nope.json")))
    assert "nope.json" in line and "not found" in line


def test_facts_file_that_is_not_json(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    line = one_line_error(run_doctor("--facts", str(bad)))
    assert "bad.json" in line and "not JSON" in line


def test_facts_of_another_schema_version(tmp_path):
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"schema_version": 99}))
    line = one_line_error(run_doctor("--facts", str(old)))
    assert "schema_version is 99" in line and "reads 2" in line


def test_facts_with_a_mistyped_field(tmp_path):
    facts = json.loads(run_doctor("facts", "--no-paddle").stdout)
    facts["cgroup"]["quota_us"] = "lots"
    broken = tmp_path / "typo.json"
    broken.write_text(json.dumps(facts))
    line = one_line_error(run_doctor("--facts", str(broken)))
    assert "Facts.cgroup.quota_us" in line


def test_broken_rules_file_names_file_rule_and_field(tmp_path):
    rules = (REPO / "rules.yaml").read_text().replace("severity: error\n    status: stable\n    symptom: The container exits", "severity: fatal\n    status: stable\n    symptom: The container exits", 1)
    path = tmp_path / "rules.yaml"
    path.write_text(rules)
    line = one_line_error(run_doctor("--no-paddle", "--rules", str(path)))
    assert str(path) in line and "PD-PADDLE-002" in line and "'severity'" in line


def test_debug_shows_the_traceback(tmp_path):
    result = run_doctor("--facts", str(tmp_path / "nope.json"), "--debug")
    assert result.returncode != 0
    assert "Traceback" in result.stderr


def test_garbage_proc_and_cgroup_files_still_give_a_report(report_schema):
    result = run_doctor("--json", "--root", str(fixture_root("garbage-files")))
    report = report_json(result)
    jsonschema.validate(report, report_schema)
    found = {f["rule_id"]: f for f in report["findings"]}
    assert found["PD-CPU-001"]["status"] == "error" and "/proc/cpuinfo" in found["PD-CPU-001"]["message"]
    assert found["PD-CPU-010"]["status"] == "error" and "/sys/fs/cgroup/cpu.max" in found["PD-CPU-010"]["message"]
    assert result.returncode == 1


def test_the_doctor_writes_nothing_unless_asked(tmp_path):
    before = sorted(p.name for p in tmp_path.iterdir())
    result = subprocess.run([sys.executable, "-m", "paddle_doctor", "--json", "--no-paddle"], cwd=tmp_path, capture_output=True,
                            text=True, env={**os.environ, "PADDLE_DOCTOR_PID": "none"})
    report_with_its_exit(result)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


# ------------------------------------------------------------------ rules and explain


def test_rules_lists_planned_rules_as_not_yet_checked():
    result = run_doctor("rules", env={"COLUMNS": "200"})
    assert result.returncode == 0
    planned = next(rule.id for rule in load_rules().ordered() if rule.status == "planned")
    line = next(text for text in result.stdout.splitlines() if planned in text)
    assert "not yet checked" in line
    line = next(text for text in result.stdout.splitlines() if "PD-CPU-010" in text)
    assert "checked" not in line and line.split()[-1] == "threads"  # a checked rule carries no mark; wide, its experiment


def test_rules_fit_80_columns_with_one_line_for_most_rules():
    lines = run_doctor("rules", env={"COLUMNS": "80"}).stdout.splitlines()
    rules = load_rules().ordered()
    assert max(len(line) for line in lines) <= 80
    starts = [line.split()[0] for line in lines if line.startswith("  PD-")]
    assert starts == [rule.id for rule in rules]
    titles_on_one_line = sum(1 for rule in rules if any(line.endswith(rule.title) and rule.id in line for line in lines))
    assert titles_on_one_line > len(rules) / 2
    assert len(lines) < 1.7 * len(rules), len(lines)  # it was 257 lines for 64 rules in a boxed table


def test_top_level_help_shows_whole_command_descriptions_and_the_options_of_check():
    text = " ".join(run_doctor("--help", env={"COLUMNS": "80"}).stdout.split())
    from paddle_doctor.cli import cli

    for name, command in cli.commands.items():
        assert " ".join(command.help.split("\n\n")[0].split()) in text, name
    assert "..." not in text.replace("COMMAND [ARGS]...", "")  # nothing is cut
    assert "Options of check (the command run when none is named):" in text
    for option in ("--model", "--threads", "--json", "--format", "--fail-on", "--budget"):
        assert option in text, option


def test_explain_prints_one_rule():
    result = run_doctor("explain", "PD-CPU-001", env={"COLUMNS": "200"})
    assert result.returncode == 0
    assert "cpu-lacks-avx" in result.stdout and "SIGILL" in result.stdout and "Fix" in result.stdout


def test_explain_unknown_rule():
    line = one_line_error(run_doctor("explain", "PD-NOPE-999"))
    assert "PD-NOPE-999" in line and "paddle-doctor rules" in line
