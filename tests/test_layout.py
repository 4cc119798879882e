"""The layout as it is checked out: the built-in checks are listed in code, the shipped data files
live at the top level with no symlink, and the tools run from the checkout without an install."""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from conftest import REPO, fixture_root, report_json, run_doctor
from paddle_doctor.checks import BUILT_IN
from paddle_doctor.judge.registry import BUILT_IN_MODULE, discover_registered, names_built_in
from paddle_doctor.judge.rules import load_rules, packaged_file
from paddle_doctor.judge.wrappers import load_wrappers
from test_registry import install_plugin
from test_wheel import older_python


def test_every_check_module_is_imported_into_built_in_and_named_as_its_check():
    modules = {path.stem for path in (REPO / "checks").glob("*.py")} - {"__init__"}
    names = [check.name for check in BUILT_IN]
    assert len(names) == len(set(names))
    assert sorted(modules - set(names)) == [], "check modules not imported into checks/__init__.py BUILT_IN"
    assert sorted(set(names) - modules) == [], "checks in BUILT_IN not named as their module in checks/"
    assert [check.name for check in BUILT_IN if importlib.import_module(f"paddle_doctor.checks.{check.name}").CHECK is not check] == []


def test_the_built_in_checks_are_found_from_the_tuple_without_installed_metadata():
    registered, failures = discover_registered()
    assert failures == []
    built_in = {check.name: (reference, check) for reference, check in registered if reference.startswith("paddle_doctor.checks.")}
    assert built_in == {check.name: (BUILT_IN_MODULE.format(name=check.name), check) for check in BUILT_IN}
    assert "paddle_doctor.checks" not in (REPO / "pyproject.toml").read_text().split("[tool.setuptools]")[0]


PINNED_ALONE = """
import sys
from paddle_doctor.judge.registry import load_pinned
load_pinned("cpu_budget", "paddle_doctor.checks.cpu_budget:CHECK")
print(" ".join(sorted(name for name in sys.modules if name.startswith(("paddle_doctor.checks", "importlib.metadata")))))
"""


def test_a_pinned_built_in_check_is_imported_alone():
    """The healthcheck's start-up: a baseline's pinned check is its module alone, not every one ``BUILT_IN`` imports."""
    done = subprocess.run([sys.executable, "-c", PINNED_ALONE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["paddle_doctor.checks", "paddle_doctor.checks.cpu_budget"]


@pytest.mark.parametrize("reference", ["paddle_doctor.checks.no_such_check:CHECK", "paddle_doctor.checks.__init__:CHECK",
                                       "paddle_doctor.checks.cpu_budget:check", "paddle_doctor.checks:BUILT_IN",
                                       "paddle_doctor.checks.cpu_budget.os:CHECK"])
def test_only_a_check_module_of_the_package_is_a_built_in_reference(reference):
    assert not names_built_in(reference) and names_built_in("paddle_doctor.checks.cpu_quota:CHECK")


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


def python_without_the_project() -> tuple[str, dict[str, str]]:
    """This venv's base interpreter with the venv's site-packages on PYTHONPATH, for the runtime
    dependencies (and mypy): a folder on PYTHONPATH runs no ``.pth``, so the editable install's finder
    is not there, and ``import paddle_doctor`` fails."""
    python = getattr(sys, "_base_executable", sys.executable)
    env = {"PATH": os.environ["PATH"], "PYTHONPATH": str(Path(click.__file__).resolve().parent.parent),
           "PYTHONNOUSERSITE": "1", "PADDLE_DOCTOR_PID": "none", "HOME": os.environ.get("HOME", "/")}
    if subprocess.run([python, "-c", "import paddle_doctor"], env=env, capture_output=True, timeout=60).returncode == 0:
        pytest.skip(f"{python} imports paddle_doctor from an install: not a python without the project")
    return python, env


def checkout_copy(tmp_path: Path) -> Path:
    """What the tools read of the checkout, copied: the package's folders, the data files, pyproject, scripts/."""
    copy = tmp_path / "checkout"
    for folder in ("doctor", "checks", "scripts"):
        shutil.copytree(REPO / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("rules.yaml", "wrappers.yaml", "known_issues.yaml", "pyproject.toml"):
        shutil.copy(REPO / name, copy / name)
    return copy


NEW_CHECK = '''"""A check only this copy of the checkout has."""
from paddle_doctor.judge.findings import Finding, Status
from paddle_doctor.judge.registry import Check

CHECK = Check(name="in_this_copy", rules=("PD-CPU-013",), run=lambda facts: [Finding("PD-CPU-013", Status.PASS, "listed in the copy")])
'''


def test_the_launcher_runs_the_doctor_from_a_copy_of_the_checkout_with_nothing_installed(tmp_path):
    """scripts/checkout.py doctor: the copy's doctor/, checks/ and rules.yaml, where paddle_doctor is
    not importable at all; a check added to the tuple there runs without any install."""
    copy = checkout_copy(tmp_path)
    (copy / "checks" / "in_this_copy.py").write_text(NEW_CHECK)
    listing = copy / "checks" / "__init__.py"
    listing.write_text(listing.read_text().replace("        baseline_paddle,\n", "        baseline_paddle,\n        in_this_copy,\n")
                       .replace("baseline_paddle.CHECK,", "baseline_paddle.CHECK, in_this_copy.CHECK,"))
    rules = copy / "rules.yaml"
    rules.write_text(rules.read_text().replace("title: Paddle is not installed in this Python", "title: Not installed, says the copy"))
    python, env = python_without_the_project()

    def launch(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([python, str(copy / "scripts" / "checkout.py"), "doctor", *args], env=env, cwd=tmp_path,
                              capture_output=True, text=True, timeout=120)

    version = launch("--version")
    assert version.returncode == 0 and version.stdout.strip() == "paddle-doctor, version 0.1.0", version.stderr[-2000:]
    listed = launch("rules")
    assert listed.returncode == 0 and "Not installed, says the copy" in listed.stdout, listed.stderr[-2000:]
    checked = launch("--json", "--no-paddle", "--root", str(fixture_root("intel-noavx2-v1-quota")), "--threads", "8")
    report = json.loads(checked.stdout)
    assert report["check_errors"] == [] and checked.returncode == 1, checked.stderr[-2000:]
    assert [f["message"] for f in report["findings"] if f["check"] == "in_this_copy"] == ["listed in the copy"]
    assert {f["rule_id"]: f["status"] for f in report["findings"]}["PD-CPU-010"] == "fail"



def test_the_launcher_reads_package_dir_where_there_is_no_tomllib():
    """Python 3.10, the oldest the project supports, has no tomllib: the launcher reads the one table itself."""
    oldest = older_python("3.10")
    _, env = python_without_the_project()
    assert subprocess.run([oldest, "-c", "import tomllib"], env=env, capture_output=True, timeout=60).returncode != 0
    result = subprocess.run([oldest, str(REPO / "scripts" / "checkout.py"), "doctor", "explain", "PD-CPU-010"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "PD-CPU-010" in result.stdout, result.stderr[-2000:]

@pytest.mark.slow  # mypy analyses the whole package, about 30 CPU-seconds without a cache
def test_the_typecheck_names_each_checkout_file_by_its_module(tmp_path):
    """scripts/checkout.py typecheck: a module that imports the package (paddle_doctor.judge.rules,
    paddle_doctor.checks) is checked against the copy's own files, reported by its checkout path,
    and nothing of the package is reported missing."""
    copy = checkout_copy(tmp_path)
    with open(copy / "doctor" / "judge" / "rules.py", "a") as module:
        module.write("\n\ndef only_in_this_copy() -> int:\n    return 1\n")
    (copy / "doctor" / "layout_probe.py").write_text(
        "from paddle_doctor.checks import BUILT_IN\nfrom paddle_doctor.judge.rules import only_in_this_copy, packaged_file\n\n"
        "where: int = packaged_file('rules.yaml')\nnumber: str = only_in_this_copy()\nname: int = BUILT_IN[0]\n")
    python, env = python_without_the_project()
    result = subprocess.run([python, str(copy / "scripts" / "checkout.py"), "typecheck"], env=env, cwd=tmp_path,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 1, result.stderr[-2000:]
    mine = [line.split("  [")[0] for line in result.stdout.splitlines() if line.startswith("doctor/layout_probe.py:")]
    assert mine == [
        'doctor/layout_probe.py:4: error: Incompatible types in assignment (expression has type "Path", variable has type "int")',
        'doctor/layout_probe.py:5: error: Incompatible types in assignment (expression has type "int", variable has type "str")',
        'doctor/layout_probe.py:6: error: Incompatible types in assignment (expression has type "Check", variable has type "int")',
    ]
    assert not [line for line in result.stdout.splitlines() if "paddle_doctor" in line and "import" in line]
    assert re.fullmatch(r"mypy: \d+ errors in \d+ files \(\d+ modules checked\)", result.stderr.strip()), result.stderr[-2000:]
    only = subprocess.run([python, str(copy / "scripts" / "checkout.py"), "typecheck", str(copy / "doctor" / "layout_probe.py")],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert only.returncode == 1 and only.stdout.count(": error: ") == 3
    assert only.stderr.startswith("mypy: 3 errors in 1 files in doctor/layout_probe.py ("), only.stderr


def test_ci_runs_exactly_the_readme_test_command():
    readme = (REPO / "README.md").read_text()
    block = readme.split("(the same command CI runs, in `.ci/run`):\n\n```sh\n", 1)[1].split("\n```", 1)[0]
    assert block == "scripts/test"
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.rstrip("\n").endswith("\nscripts/test")
    assert "scripts/test\n" in (REPO / "CONTRIBUTING.md").read_text()
    script = (REPO / "scripts" / "test").read_text().splitlines()
    assert os.access(REPO / "scripts" / "test", os.X_OK) and "set -euo pipefail" in script
    # it sets up what it needs, then the lint, the type check, the whole suite beside a busy loop, and
    # the tests that judge live timings again on the machine as it is, in that order
    steps = [line for line in script if line.startswith((".venv/", "python3 -m venv", "PADDLE_DOCTOR_TEST_BUSY_LOOP="))]
    assert steps == ["python3 -m venv .venv && .venv/bin/pip install -q -e '.[cpu,test]'",
                     ".venv/bin/ruff check .",
                     ".venv/bin/python scripts/checkout.py typecheck",
                     "PADDLE_DOCTOR_TEST_BUSY_LOOP=0 .venv/bin/python -m pytest -n auto --dist worksteal",
                     ".venv/bin/python -m pytest -m timing"]
    judging = [path.name for path in (REPO / "tests").glob("test_*.py")  # they observe the machine and skip
               if re.search(r"^from machine import .*\bobserved\b.*\bskip_unless\b", path.read_text(), re.M)]
    unmarked = [name for name in judging if not re.search(r"^pytestmark = .*\bpytest\.mark\.timing\b", (REPO / "tests" / name).read_text(), re.M)]
    assert judging and unmarked == [], f"tests that judge live timings without the timing marker: {unmarked}"
    assert '.venv/bin/python -m pytest -m "not slow" -n auto\n' in readme
