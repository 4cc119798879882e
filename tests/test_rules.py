"""rules.yaml: validation on load, conformance of checks to rules, and the generated rules table of docs/rules.md."""

import ast
import copy
import inspect
import io
import json
import re
import sys
import tokenize

import pytest
import yaml
from conftest import REPO, fixture_root, report_json, run_doctor
from factories import AVX2_FLAGS, make_facts
from paddle_doctor.base.vocabulary import Experiment, Lifecycle
from paddle_doctor.facts.loading import load_facts
from paddle_doctor.judge.findings import ForPredictors, Status
from paddle_doctor.judge.registry import Check, discover_checks
from paddle_doctor.judge.rule_docs import RULES_DOC, RULES_TABLE_END, RULES_TABLE_START, rules_table_markdown
from paddle_doctor.judge.rules import RulesError, load_rules, parse_rules
from paddle_doctor.judge.runner import run_checks

RAW = yaml.safe_load((REPO / "rules.yaml").read_text())


def test_shipped_rules_load():
    rulebook = load_rules()
    assert len(rulebook.rules) >= 30
    assert rulebook["PD-CPU-010"].experiment == Experiment.THREADS


def test_every_check_declares_stable_rules_and_every_stable_rule_has_a_check():
    rulebook = load_rules()
    checks, failures = discover_checks()
    assert failures == []
    declared = [rule for check in checks for rule in check.rules]
    assert len(declared) == len(set(declared)), "two checks declare the same rule"
    for rule_id in declared:
        assert rulebook[rule_id].status == Lifecycle.STABLE, f"{rule_id} is checked but marked {rulebook[rule_id].status}"
    stable = {rule.id for rule in rulebook.rules.values() if rule.status == Lifecycle.STABLE}
    assert stable == set(declared), f"stable rules without a check: {sorted(stable - set(declared))}"


def test_every_check_says_in_one_line_what_it_checks():
    for check in discover_checks()[0]:
        module = sys.modules[check.run.__module__]
        doc = (module.__doc__ or "").strip()
        assert doc, f"check {check.name} has no module docstring"
        assert "\n" not in doc, f"check {check.name}: the docstring says in one line what it checks, no more"
        assert "Why:" not in doc and "Fix:" not in doc, f"check {check.name}: the why and the fix are rules.yaml's"


RUN = 7  # words in a row: a phrase of the rule's cause or fix this long in a check's module restates it


def word_runs(text: str) -> set[tuple[str, ...]]:
    words = re.findall(r"[a-z0-9_]+", text.lower())
    return {tuple(words[i:i + RUN]) for i in range(len(words) - RUN + 1)}


def own_words(source: str) -> str:
    """The docstrings and comments of a module's source: where a check would restate its rule."""
    tree = ast.parse(source)
    docs = [ast.get_docstring(node) or "" for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))]
    comments = [token.string for token in tokenize.generate_tokens(io.StringIO(source).readline) if token.type == tokenize.COMMENT]
    return "\n".join(docs + comments)


def test_no_check_module_restates_its_rules_cause_or_fix():
    rulebook = load_rules()
    for check in discover_checks()[0]:
        words = word_runs(own_words(inspect.getsource(sys.modules[check.run.__module__])))
        for rule_id in check.rules:
            rule = rulebook[rule_id]
            restated = words & word_runs(f"{rule.cause} {rule.fix_text}")
            assert not restated, f"check {check.name} restates {rule_id}: {' '.join(sorted(restated)[0])!r}"


def test_the_conformance_catches_a_restated_rule():
    cause = load_rules()["PD-CPU-010"].cause
    assert word_runs(own_words(f'"""{cause}"""\nRULE = 1')) & word_runs(cause)
    assert word_runs(own_words(f"RULE = 1  # {cause}")) & word_runs(cause)
    assert not word_runs(own_words(f"MESSAGE = {cause!r}")) & word_runs(cause)


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


def placeholders(rulebook):
    return {rule.id: rule.placeholders for rule in rulebook.rules.values()}


def test_every_placeholder_of_a_fix_is_a_field_of_its_rules_evidence():
    rulebook = load_rules()
    checks, failures = discover_checks(rulebook)
    assert sum(bool(names) for names in placeholders(rulebook).values()) >= 20
    assert failures == [] and len(checks) == len(discover_checks()[0])
    assert [problem for check in checks for problem in check.unfilled(rulebook)] == []


def rules_naming_thread_count() -> dict:
    """rules.yaml with PD-CPU-010's fix naming ``{thread_count}``, a field its evidence (ThreadsEvidence) lacks."""
    data = copy.deepcopy(RAW)
    rule = next(rule for rule in data["rules"] if rule["id"] == "PD-CPU-010")
    rule["fix"]["changes"].append({"kind": "python", "code": "config.set_cpu_math_library_num_threads({thread_count})"})
    return data


def test_a_fix_naming_a_field_its_evidence_lacks_fails_the_rules_test():
    rulebook = parse_rules(rules_naming_thread_count(), "rules.yaml")
    check = next(check for check in discover_checks()[0] if "PD-CPU-010" in check.rules)
    assert check.unfilled(rulebook) == ["PD-CPU-010 {thread_count}: ThreadsEvidence has no field thread_count"]
    undeclared = Check(name="undeclared", rules=("PD-CPU-010",), run=check.run)
    # {threads_per_instance} is the report's own (rules.REPORT_WIDE): no check's evidence need fill it
    assert undeclared.unfilled(rulebook) == ["PD-CPU-010 names thread_count but check undeclared declares no evidence type for it"]
    assert Check(name="undeclared", rules=("PD-CPU-013",), run=check.run).unfilled(rulebook) == []


def test_a_check_whose_evidence_lacks_a_field_its_rules_fix_names_is_refused_at_load(tmp_path):
    rulebook = parse_rules(rules_naming_thread_count(), "rules.yaml")
    checks, failures = discover_checks(rulebook)
    assert "cpu_budget" not in {check.name for check in checks} and len(checks) == len(discover_checks()[0]) - 1
    assert [(failure.entry_point, failure.reason) for failure in failures] == [
        ("cpu_budget = paddle_doctor.checks.cpu_budget:CHECK",
         "its evidence does not fill its rules' fixes: PD-CPU-010 {thread_count}: ThreadsEvidence has no field thread_count")]
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(rules_naming_thread_count(), sort_keys=False))
    report = report_json(run_doctor("--json", "--no-paddle", "--rules", str(rules), "--root", str(fixture_root("intel-noavx2-v1-quota"))))
    assert report["check_errors"] == [{"entry_point": "cpu_budget = paddle_doctor.checks.cpu_budget:CHECK",
                                       "reason": failures[0].reason}]
    assert not any(finding["check"] == "cpu_budget" for finding in report["findings"])


def test_evidence_reads_and_serialises_as_the_mapping_of_its_fields():
    from paddle_doctor.checks.cpu_throttling import ThrottlingEvidence

    unsaid = ThrottlingEvidence(10, 2, 0.5)
    assert dict(unsaid) == {"nr_periods": 10, "nr_throttled": 2, "throttled_seconds": 0.5}
    assert "threads_per_instance" not in unsaid and unsaid.get("threads_per_instance") is None
    with pytest.raises(KeyError):
        unsaid["threads_per_instance"]
    said = ThrottlingEvidence(10, 2, 0.5, threads_per_instance=2)
    assert list(said) == ["nr_periods", "nr_throttled", "throttled_seconds", "threads_per_instance"] and said["threads_per_instance"] == 2
    assert json.dumps(dict(said)) == '{"nr_periods": 10, "nr_throttled": 2, "throttled_seconds": 0.5, "threads_per_instance": 2}'


def test_evidence_folded_over_predictors_reads_as_the_worst_findings_then_their_ids():
    from paddle_doctor.checks.cpu_throttling import ThrottlingEvidence
    from paddle_doctor.judge.findings import ForPredictors

    folded = ForPredictors(ThrottlingEvidence(10, 2, 0.5), [0, 2])
    assert list(folded.items()) == [("nr_periods", 10), ("nr_throttled", 2), ("throttled_seconds", 0.5), ("predictors", [0, 2])]
    assert dict(ForPredictors({"predictors": [1], "x": 1}, [0, 2])) == {"predictors": [0, 2], "x": 1}
    assert list(ForPredictors({"predictors": [1], "x": 1}, [0, 2])) == ["predictors", "x"] and len(folded) == 4


FACTS = [
    make_facts(quota=2, throttled=(100, 40), threads=8, instances=2, concurrency=4, onednn=False, ir_optim=False),
    make_facts(online=16, cpuset=range(4), threads=1, instances=1, concurrency=2, layout="shared",
               env={"OMP_NUM_THREADS": "64"}),
    make_facts(flags=[*AVX2_FLAGS, "avx512_bf16"], quota=0.5, threads=1, instances=4, concurrency=1, layout="processes",
               onednn_cache_capacity=0, warmup_runs=0),
    load_facts(REPO / "tests" / "fixtures" / "reports" / "measured-cnn-facts.json"),
]


@pytest.mark.parametrize("facts", FACTS)
def test_a_failing_finding_carries_the_evidence_its_check_declares_for_its_rule(facts):
    rulebook = load_rules()
    checks = discover_checks()[0]
    judged = [(result.check, finding) for result in run_checks(checks, facts, rulebook) for finding in result.findings
              if finding.status in (Status.FAIL, Status.WARN)]
    assert len(judged) >= 3
    for check, finding in judged:
        evidence = finding.evidence.evidence if isinstance(finding.evidence, ForPredictors) else finding.evidence
        if rulebook[finding.rule_id].placeholders:
            assert evidence, f"{finding.rule_id}: its fix names {sorted(rulebook[finding.rule_id].placeholders)}, its finding says nothing"
        if evidence:
            assert isinstance(evidence, check.evidence_types(finding.rule_id)), (
                f"{finding.rule_id}: {type(evidence).__name__} is not the evidence check {check.name} declares")


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


def test_the_rules_table_of_the_rules_page_is_generated_from_rules_yaml():
    page = (REPO / RULES_DOC).read_text()
    start, end = page.index(RULES_TABLE_START) + len(RULES_TABLE_START), page.index(RULES_TABLE_END)
    rulebook = load_rules()
    assert page[start:end].strip() == rules_table_markdown(rulebook, linked=True).strip(), (
        "docs/rules.md's rules table is stale: run scripts/update-readme-rules"
    )
    rows = page[start:end].strip().splitlines()[2:]
    assert [row.split(" | ")[0] for row in rows] == [f"| [{rule.id}](#{rule.id.lower()})" for rule in rulebook.ordered()]
    assert f"## {rulebook.ordered()[0].id}\n" in page[end:]  # every id links to a section below the table
    # `paddle-doctor rules --markdown` prints the same rows, the ids unlinked
    assert rules_table_markdown(rulebook).splitlines()[2].startswith(f"| {rulebook.ordered()[0].id} |")
