"""Every fix a recorded report prints runs as pasted: its Python parses, its shell passes `bash -n`, its
Dockerfile lines pass hadolint, its YAML loads, and no `{placeholder}` is left unfilled. The reports
come from the recorded container trees (CPU), the recorded GPU cases and the recorded service sources;
the demo's own report is pasted in tests/test_demo.py."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, ROOTS, report_with_its_exit, run_doctor
from snippets import UNFILLED, pasting_problem
from test_checks_gpu import CASES, run_case

CPU_ROOTS = sorted(path.name for path in ROOTS.iterdir() if path.is_dir())
MISCONFIGURED = ("--threads", "64", "--instances", "3", "--no-onednn", "--concurrency", "2")


def fixes_that_do_not_paste(report: dict) -> list[tuple[str, str, str, str]]:
    broken = []
    for finding in report["findings"]:
        if finding["status"] not in ("fail", "warn"):
            continue
        for change in finding["fix"]["changes"]:
            problem = "a placeholder is left unfilled" if UNFILLED.search(change["code"]) else pasting_problem(change["kind"], change["code"])
            if problem:
                broken.append((finding["rule_id"], change["kind"], change["code"], problem))
    return broken


def printed_fixes(report: dict) -> int:
    return sum(len(f["fix"]["changes"]) for f in report["findings"] if f["status"] in ("fail", "warn"))


@pytest.mark.parametrize("service", [(), MISCONFIGURED], ids=["defaults", "misconfigured"])
@pytest.mark.parametrize("root", CPU_ROOTS)
def test_the_fixes_of_a_recorded_container_paste(root, service):
    report = report_with_its_exit(run_doctor("--root", str(ROOTS / root), "--source", str(FIXTURES / "services"), *service, "--json"))
    assert fixes_that_do_not_paste(report) == []
    if service:
        assert printed_fixes(report) > 0  # the control: there is something to paste


@pytest.mark.parametrize("name", CASES)
def test_the_fixes_of_a_recorded_gpu_case_paste(name, tmp_path):
    report = run_case(CASES[name], tmp_path)
    assert fixes_that_do_not_paste(report) == []
