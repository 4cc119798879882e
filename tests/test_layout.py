"""The layout as it is checked out: the built-in checks are listed in code, the shipped data files
live at the top level with no symlink, and the tools run from the checkout without an install."""

from __future__ import annotations

import subprocess

from conftest import REPO, report_json, run_doctor
from paddle_doctor.checks import BUILT_IN
from paddle_doctor.registry import BUILT_IN_MODULE, discover_registered
from paddle_doctor.rules import load_rules, packaged_file
from paddle_doctor.wrappers import load_wrappers
from test_registry import install_plugin


def test_every_check_module_is_listed_and_every_listed_one_exists():
    modules = {path.stem for path in (REPO / "checks").glob("*.py")} - {"__init__"}
    assert len(BUILT_IN) == len(set(BUILT_IN))
    assert sorted(modules - set(BUILT_IN)) == [], "check modules missing from checks/__init__.py BUILT_IN"
    assert sorted(set(BUILT_IN) - modules) == [], "names in BUILT_IN without a module in checks/"


def test_the_built_in_checks_are_found_from_the_list_without_installed_metadata():
    registered, failures = discover_registered()
    assert failures == []
    built_in = {check.name: reference for reference, check in registered if reference.startswith("paddle_doctor.checks.")}
    assert built_in == {name: BUILT_IN_MODULE.format(name=name) for name in BUILT_IN}
    assert "paddle_doctor.checks" not in (REPO / "pyproject.toml").read_text().split("[tool.setuptools]")[0]


def test_an_older_install_publishing_a_built_in_check_loads_it_once(tmp_path):
    """Metadata left by an install from before the list (an entry point per built-in check) is no
    second registration: the check runs once and nothing is reported as failing to load."""
    install_plugin(tmp_path, "", entry="cpu_budget = paddle_doctor.checks.cpu_budget:CHECK")
    report = report_json(run_doctor("--json", "--no-paddle", env={"PYTHONPATH": str(tmp_path)}))
    assert report["check_errors"] == []
    assert [f["rule_id"] for f in report["findings"] if f["check"] == "cpu_budget"] == ["PD-CPU-010", "PD-CPU-011"]


def test_the_shipped_data_files_are_read_from_the_top_of_the_checkout():
    assert packaged_file("rules.yaml") == REPO / "rules.yaml" and load_rules().source == str(REPO / "rules.yaml")
    assert packaged_file("wrappers.yaml") == REPO / "wrappers.yaml" and load_wrappers().source == str(REPO / "wrappers.yaml")
    assert not (REPO / "doctor" / "rules.yaml").exists() and not (REPO / "doctor" / "wrappers.yaml").exists()


def test_no_symlink_is_tracked_outside_the_recorded_machines():
    """The package is its folders as they are; only the recorded trees of other machines hold links
    (``/proc/<pid>/exe``, a venv's ``bin/python``), as the data under test."""
    tracked = subprocess.run(["git", "ls-files", "-s"], cwd=REPO, capture_output=True, text=True, check=True).stdout
    links = [line.split("\t", 1)[1] for line in tracked.splitlines() if line.startswith("120000 ")]
    assert [link for link in links if not link.startswith("tests/fixtures/")] == []
    assert "tests/fixtures/processes/one-service/proc/4242/exe" in links  # the listing does show links
