"""The layout as it is checked out: the built-in checks are listed in code, the shipped data files
live at the top level with no symlink, and the tools run from the checkout without an install."""

from __future__ import annotations

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
from paddle_doctor.judge.registry import BUILT_IN_MODULE, discover_registered
from paddle_doctor.judge.rules import load_rules, packaged_file
from paddle_doctor.judge.wrappers import load_wrappers
from test_registry import install_plugin
from test_wheel import older_python


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
    for name in ("rules.yaml", "wrappers.yaml", "pyproject.toml"):
        shutil.copy(REPO / name, copy / name)
    return copy


NEW_CHECK = '''"""A check only this copy of the checkout has."""
from paddle_doctor.judge.findings import Finding, Status
from paddle_doctor.judge.registry import Check

CHECK = Check(name="in_this_copy", rules=("PD-CPU-013",), run=lambda facts: [Finding("PD-CPU-013", Status.PASS, "listed in the copy")])
'''


def test_the_launcher_runs_the_doctor_from_a_copy_of_the_checkout_with_nothing_installed(tmp_path):
    """scripts/checkout.py doctor: the copy's doctor/, checks/ and rules.yaml, where paddle_doctor is
    not importable at all; a check added to the list there runs without any install."""
    copy = checkout_copy(tmp_path)
    (copy / "checks" / "in_this_copy.py").write_text(NEW_CHECK)
    listing = copy / "checks" / "__init__.py"
    listing.write_text(listing.read_text().replace('"baseline_paddle",', '"baseline_paddle", "in_this_copy",'))
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
    with open(copy / "doctor" / "rules.py", "a") as module:
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
        'doctor/layout_probe.py:6: error: Incompatible types in assignment (expression has type "str", variable has type "int")',
    ]
    assert not [line for line in result.stdout.splitlines() if "paddle_doctor" in line and "import" in line]
    assert re.fullmatch(r"mypy: \d+ errors in \d+ files \(\d+ modules checked\)", result.stderr.strip()), result.stderr[-2000:]
    only = subprocess.run([python, str(copy / "scripts" / "checkout.py"), "typecheck", str(copy / "doctor" / "layout_probe.py")],
                          env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert only.returncode == 1 and only.stdout.count(": error: ") == 3
    assert only.stderr.startswith("mypy: 3 errors in 1 files in doctor/layout_probe.py ("), only.stderr


def test_ci_runs_exactly_the_readme_commands():
    readme = (REPO / "README.md").read_text()
    block = readme.split("(the same commands CI runs, in `.ci/run`):\n\n```sh\n", 1)[1].split("\n```", 1)[0]
    ci = (REPO / ".ci" / "run").read_text()
    assert ci.rstrip("\n").endswith("\n" + block)
    # the whole suite beside a busy loop, then the tests that judge live timings on the machine as it is
    assert "ruff check ." in block and "scripts/checkout.py typecheck" in block
    assert "&& PADDLE_DOCTOR_TEST_BUSY_LOOP=0 .venv/bin/python -m pytest\n" in block
    quiet = block.splitlines()[-1].split()
    assert quiet[:4] == [".venv/bin/python", "-m", "pytest", "tests/test_noise.py"]
    judging = {f"tests/{path.name}" for path in (REPO / "tests").glob("test_*.py")  # they observe the machine and skip
               if re.search(r"^from machine import .*\bobserved\b.*\bskip_unless\b", path.read_text(), re.M)}
    assert judging <= set(quiet[3:]), judging - set(quiet[3:])
    assert '.venv/bin/python -m pytest -m "not slow" -n auto\n' in readme


def _imports_of(path: Path, module: str, package: bool) -> set[str]:
    """The doctor's modules ``module`` imports anywhere (functions too), leaving out ``if TYPE_CHECKING:`` blocks."""
    import ast

    tree = ast.parse(path.read_text())
    skipped = {id(node) for block in ast.walk(tree) if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
               for statement in block.body for node in ast.walk(statement)}
    base = module.split(".") if package else module.split(".")[:-1]
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.ImportFrom):
            parts = (base[:len(base) - node.level + 1] if node.level else []) + (node.module.split(".") if node.module else [])
            target = ".".join(parts)
            found |= {target} | {f"{target}.{alias.name}" for alias in node.names}
        elif isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
    return found


def test_no_module_of_the_doctor_imports_itself_back_through_another():
    """No import cycle, module-level or in a function: a newcomer can read the modules bottom up."""
    files = {f"paddle_doctor.{'.'.join(p.relative_to(REPO / 'doctor').with_suffix('').parts)}": p for p in (REPO / "doctor").rglob("*.py")}
    files |= {f"paddle_doctor.checks.{p.stem}": p for p in (REPO / "checks").glob("*.py")}
    modules = {name.removesuffix(".__init__"): path for name, path in files.items()}
    edges = {name: {target for target in _imports_of(path, name, path.name == "__init__.py") if target in modules and target != name}
             for name, path in modules.items()}
    for name in modules:  # a package's __init__ is imported with each of its modules: not a cycle of their making
        edges[name] -= {name.rpartition(".")[0]}
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for target in sorted(edges[name]):
            if state.get(target) == 1:
                raise AssertionError("import cycle: " + " -> ".join(trail[trail.index(target):] + [name, target]))
            if target not in state:
                visit(target, trail + [name])
        state[name] = 2

    for name in sorted(modules):
        if name not in state:
            visit(name, [])
