"""rules.yaml: validation on load, conformance of checks to rules, and the generated README table."""

import copy

import pytest
import yaml
from conftest import REPO
from paddle_doctor.docs import README_END, README_START, rules_table_markdown
from paddle_doctor.registry import discover_checks
from paddle_doctor.rules import RulesError, load_rules, parse_rules

RAW = yaml.safe_load((REPO / "rules.yaml").read_text())


def test_shipped_rules_load():
    rulebook = load_rules()
    assert len(rulebook.rules) >= 30
    assert rulebook["PD-CPU-010"].experiment == "threads"


def test_every_check_declares_stable_rules_and_every_stable_rule_has_a_check():
    rulebook = load_rules()
    checks, failures = discover_checks()
    assert failures == []
    declared = [rule for check in checks for rule in check.rules]
    assert len(declared) == len(set(declared)), "two checks declare the same rule"
    for rule_id in declared:
        assert rulebook[rule_id].status == "stable", f"{rule_id} is checked but marked {rulebook[rule_id].status}"
    stable = {rule.id for rule in rulebook.rules.values() if rule.status == "stable"}
    assert stable == set(declared), f"stable rules without a check: {sorted(stable - set(declared))}"


def test_every_check_documents_what_why_and_fix():
    for check in discover_checks()[0]:
        doc = check.description
        assert doc, f"check {check.name} has no module docstring"
        assert "Why:" in doc and "Fix:" in doc, f"check {check.name}: docstring needs 'Why:' and 'Fix:'"


def test_checklist_from_the_article_is_covered():
    slugs = {rule.slug for rule in load_rules().rules.values()}
    checklist = {
        "trt-engine-not-cached", "trt-cache-not-persisted", "onednn-off", "threads-below-cpu-budget",
        "gpu-out-of-memory", "shared-predictor", "threads-exceed-cpu-budget", "optimized-model-not-cached",
        "vm-hides-cpu-features", "cpu-lacks-avx2", "driver-too-old-for-cuda", "trt-version-mismatch",
        "no-warmup", "no-core-binding", "no-stage-timing", "ir-optim-off", "fusion-broken-by-op",
        "bf16-available-unused", "fp16-available-unused", "feed-fetch-ops-on",
    }
    assert checklist <= slugs, sorted(checklist - slugs)


def mutate(path, value):
    data = copy.deepcopy(RAW)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


DELETE = object()


@pytest.mark.parametrize(
    "path, value, expected",
    [
        (("rules", 0, "severity"), "fatal", "rule PD-PADDLE-001: field 'severity'"),
        (("rules", 0, "id"), "CPU-1", "field 'id': expected PD-<AREA>-NNN"),
        (("rules", 0, "id"), "PD-FOO-001", "unknown area 'FOO'"),
        (("rules", 1, "id"), "PD-PADDLE-001", "rule PD-PADDLE-001: field 'id': duplicate id"),
        (("rules", 1, "slug"), "paddle-not-installed", "field 'slug': duplicate slug"),
        (("rules", 0, "status"), "beta", "field 'status'"),
        (("rules", 0, "experiment"), "magic", "field 'experiment': unknown experiment 'magic'"),
        (("rules", 0, "docs"), ["http://insecure"], "field 'docs'"),
        (("rules", 0, "fix"), "just do it", "field 'fix'"),
        (("rules", 0, "fix", "changes"), [], "field 'fix': 'changes' must be a non-empty list"),
        (("rules", 0, "fix", "changes"), [{"kind": "bash", "code": "x"}], "change kind 'bash'"),
        (("rules", 0, "cause"), DELETE, "field 'cause': missing"),
        (("rules", 0, "colour"), "red", "field 'colour': unknown field"),
        (("rules", 0, "title"), "", "field 'title': expected non-empty text"),
        (("schema_version",), 2, "schema_version is 2"),
        (("rules",), [], "'rules' must be a non-empty list"),
    ],
)
def test_broken_rules_name_the_rule_and_field(path, value, expected):
    with pytest.raises(RulesError) as error:
        parse_rules(mutate(path, value), "rules.yaml")
    assert expected in str(error.value)
    assert str(error.value).startswith("rules.yaml: ")


def test_readme_rules_table_is_generated_from_rules_yaml():
    readme = (REPO / "README.md").read_text()
    start, end = readme.index(README_START) + len(README_START), readme.index(README_END)
    assert readme[start:end].strip() == rules_table_markdown(load_rules()).strip(), (
        "README rules table is stale: run scripts/update-readme-rules"
    )
