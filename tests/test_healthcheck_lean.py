"""The healthcheck's lean mode of the pipeline: the cheap facts alone, the fast checks run through the runner and
judged by the settings, and what a check says of the facts on the healthy line."""

from __future__ import annotations

import threading
import time

from conftest import fixture_root, run_doctor
from paddle_doctor.facts import ServiceConfig
from paddle_doctor.judge.findings import Finding, Status, passed
from paddle_doctor.judge.policy import Policy
from paddle_doctor.judge.registry import Check
from paddle_doctor.judge.rules import load_rules
from paddle_doctor.judge.runner import run_one
from paddle_doctor.pipeline import PROBING, SETTINGS, collect_lean, judged_lean
from paddle_doctor.service import ServiceOptions
from test_registry import install_plugin

ROOT = "intel-noavx2-v1-quota"  # cgroup v1, quota 2 CPUs
SUMMARY_PLUGIN = '''
    """Plugin. Why: test. Fix: none."""
    from paddle_doctor.judge.findings import passed
    from paddle_doctor.judge.registry import Check

    CHECK = Check(name="site_plugin", rules=("PD-CPU-013",), run=lambda facts: [passed("PD-CPU-013", "ok")],
                  summary=lambda facts: f"site says {facts.service.instances} instance")
'''


def test_the_lean_facts_are_the_cheap_probes_with_the_service_over_its_base_and_what_the_baseline_read():
    steps: list[str] = []
    seen = []
    facts = collect_lean(str(fixture_root(ROOT)), ServiceOptions(threads=3), steps.append,
                         base=ServiceConfig(instances=2), baseline=lambda ctx: seen.append(str(ctx.root)) or None)
    assert steps == [SETTINGS, PROBING]
    assert (facts.service.threads, facts.service.instances) == (3, 2)  # the flag over the base, the rest the base's
    assert {origin.name for origin in facts.service_origins} >= {"threads"}
    assert facts.paddle.status == "not_probed" and facts.baseline is None
    assert seen == [facts.root]  # the baseline is read against the probed root


def test_the_lean_judging_runs_each_check_through_the_runner_and_judges_by_the_settings():
    def explode(facts):
        raise RuntimeError("boom")

    checks = [Check(name="exploding", rules=("PD-PADDLE-001",), run=explode),
              Check(name="site", rules=("PD-CPU-013",), run=lambda facts: [passed("PD-CPU-013", "ok")]),
              Check(name="ignored", rules=("PD-CPU-010",), run=lambda facts: [Finding("PD-CPU-010", Status.FAIL, "no")])]
    steps: list[str] = []
    facts = collect_lean(str(fixture_root(ROOT)), ServiceOptions(), lambda step: None)
    judged = judged_lean(checks, facts, load_rules(), Policy().ignoring(("PD-CPU-010",)), steps.append)
    assert steps == ["running check exploding", "running check site", "running check ignored"]
    assert [(j.rule_id, j.status, j.check) for j in judged] == [("PD-PADDLE-001", Status.ERROR, "exploding"),
                                                               ("PD-CPU-013", Status.PASS, "site")]  # the report's order
    assert "raised RuntimeError: boom" in judged[0].message


def test_a_checks_summary_is_on_the_healthy_line_where_no_summary_rule_passed(tmp_path):
    install_plugin(tmp_path, SUMMARY_PLUGIN, entry="site_plugin = thirdparty_check:CHECK")
    result = run_doctor("healthcheck", "--root", str(fixture_root(ROOT)), "--threads", "2", env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith("healthy: cpu budget 2 >= 2 threads; site says 1 instance; "), result.stdout
    assert result.stdout.rstrip().endswith(", no baseline")


def test_with_a_baseline_the_summary_rules_say_it_and_the_checks_summaries_are_not_added(tmp_path):
    install_plugin(tmp_path, SUMMARY_PLUGIN, entry="site_plugin = thirdparty_check:CHECK")
    plugin, baseline = {"PYTHONPATH": str(tmp_path)}, tmp_path / "baseline.json"
    recorded = run_doctor("baseline", "--root", str(fixture_root(ROOT)), "--threads", "2", "--out", str(baseline), env=plugin)
    assert recorded.returncode == 0, recorded.stderr
    result = run_doctor("healthcheck", "--baseline", str(baseline), env=plugin)
    assert result.returncode == 0, result.stdout
    assert result.stdout.startswith("healthy: cpu budget 2 >= 2 threads; ") and "site says" not in result.stdout


def test_a_check_runs_in_the_callers_thread_only_where_the_callers_deadline_comes_before_its_timeout():
    facts = collect_lean(str(fixture_root(ROOT)), ServiceOptions(), lambda step: None)
    threads: list[threading.Thread] = []

    def explode(facts):
        threads.append(threading.current_thread())
        raise RuntimeError("boom")

    def hang(facts):
        time.sleep(2)
        return []

    rulebook = load_rules()
    exploding = Check(name="exploding", rules=("PD-PADDLE-001",), run=explode, timeout=5.0)
    (here,) = run_one(exploding, facts, rulebook, deadline=time.monotonic() + 2.0).findings
    (apart,) = run_one(exploding, facts, rulebook, deadline=time.monotonic() + 60.0).findings
    assert threads[0] is threading.current_thread() and threads[1] is not threading.current_thread()
    assert here.status == apart.status == Status.ERROR
    assert "raised RuntimeError: boom" in here.message and "raised RuntimeError: boom" in apart.message
    # a timeout shorter than the time the caller has left still ends the check
    (cut,) = run_one(Check(name="hanging", rules=("PD-PADDLE-001",), run=hang, timeout=0.2), facts, rulebook,
                     deadline=time.monotonic() + 60.0).findings
    assert cut.status == Status.ERROR and "did not finish within its 0.2 s timeout" in cut.message
