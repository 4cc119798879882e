"""One answer for OMP_NUM_THREADS and MKL_NUM_THREADS wherever the doctor gives one: the rules'
fixes, the rules page, the examples, the README and the check's expected value all say the value
checks/thread_pools.py advises (the predictor's math threads come from
set_cpu_math_library_num_threads; these variables size only the pools beside it)."""

from __future__ import annotations

import re

import yaml
from conftest import REPO, facts_from_root
from paddle_doctor.checks import thread_pools
from paddle_doctor.checks.thread_pools import ADVISED_THREADS, VARIABLES
from paddle_doctor.rules import load_rules

ASSIGNMENT = re.compile(r"\b(OMP_NUM_THREADS|MKL_NUM_THREADS)=(\S+?)(?=[\s\\`'\",;)]|$)")
TEXT_FILES = ("rules.yaml", "docs/rules.md", "README.md", "examples/Dockerfile", "examples/README.md")


def advised_values(repo=REPO) -> dict[str, set[str]]:
    """Every value any of the project's own texts sets either variable to, by where it says it."""
    found: dict[str, set[str]] = {}
    for name in TEXT_FILES:
        for variable, value in ASSIGNMENT.findall((repo / name).read_text()):
            found.setdefault(value, set()).add(f"{name} ({variable})")
    for path in sorted((repo / "examples" / "kubernetes").glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            for container in (doc or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
                for item in container.get("env", []):
                    if item["name"] in VARIABLES:
                        found.setdefault(item["value"], set()).add(f"{path.relative_to(repo)} ({item['name']})")
    return found


def test_every_place_advises_the_same_thread_count():
    found = advised_values()
    assert set(found) == {str(ADVISED_THREADS)}, found
    places = set().union(*found.values())
    # the control: the places that must say it do say it
    assert {"rules.yaml (OMP_NUM_THREADS)", "docs/rules.md (MKL_NUM_THREADS)", "examples/Dockerfile (OMP_NUM_THREADS)",
            "examples/kubernetes/deployment.yaml (OMP_NUM_THREADS)", "README.md (OMP_NUM_THREADS)"} <= places, places


def test_the_rules_fixes_set_both_variables_to_the_advised_count_and_say_why():
    rulebook = load_rules()
    for rule_id in ("PD-CPU-010", "PD-CPU-013"):
        (dockerfile,) = [change.code for change in rulebook[rule_id].fix_changes if "OMP_NUM_THREADS" in change.code]
        assert dockerfile == f"ENV OMP_NUM_THREADS={ADVISED_THREADS} MKL_NUM_THREADS={ADVISED_THREADS}", rule_id
    assert "set_cpu_math_library_num_threads" in rulebook["PD-CPU-013"].fix_text  # and the cause says why
    assert "beside the predictor" in rulebook["PD-CPU-013"].cause


def test_a_disagreeing_place_is_found(tmp_path):
    """The control for the test above: a second answer anywhere is caught."""
    copy = tmp_path / "repo"
    for name in (*TEXT_FILES, "examples/kubernetes/deployment.yaml", "examples/kubernetes/fleet.yaml"):
        (copy / name).parent.mkdir(parents=True, exist_ok=True)
        (copy / name).write_text((REPO / name).read_text())
    dockerfile = copy / "examples" / "Dockerfile"
    dockerfile.write_text(dockerfile.read_text().replace("OMP_NUM_THREADS=1", "OMP_NUM_THREADS=2"))
    found = advised_values(copy)
    assert found["2"] == {"examples/Dockerfile (OMP_NUM_THREADS)"}


def test_the_checks_expected_value_is_the_advice():
    facts = facts_from_root("intel-noavx2-v1-quota", environ={"OMP_NUM_THREADS": "8"})
    (finding,) = thread_pools.check(facts)
    assert finding.status.value == "fail"
    assert finding.expected.startswith(f"OMP_NUM_THREADS={ADVISED_THREADS} and MKL_NUM_THREADS={ADVISED_THREADS} "), finding.expected
