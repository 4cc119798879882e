"""docs/rules.md: generated from rules.yaml, one section per rule with fixed headings, and the
target of every finding's docs link."""

from __future__ import annotations

import re

from conftest import REPO, fixture_root, report_json, run_doctor
from paddle_doctor.judge.rule_docs import RULES_DOC, rules_doc_markdown
from paddle_doctor.judge.rules import load_rules

HEADINGS = ["What it checks", "Why it matters", "Fix", "Confirm (experiment)", "References"]


def sections() -> dict[str, str]:
    """Rule id -> the text of its section, split at the level-2 headings."""
    text = (REPO / RULES_DOC).read_text()
    parts = re.split(r"^## (PD-[A-Z]+-\d{3})$", text, flags=re.M)
    return dict(zip(parts[1::2], parts[2::2]))


def test_rules_doc_is_generated_from_rules_yaml():
    assert (REPO / RULES_DOC).read_text() == rules_doc_markdown(load_rules()), (
        "docs/rules.md is stale: run scripts/update-readme-rules"
    )


def test_every_rule_has_one_section_with_the_fixed_headings_in_order():
    rulebook = load_rules()
    found = sections()
    assert list(found) == [rule.id for rule in rulebook.ordered()]
    for rule_id, body in found.items():
        assert re.findall(r"^### (.+)$", body, flags=re.M) == HEADINGS, rule_id
        assert rulebook[rule_id].fix_text in body
        assert all(change.code in body for change in rulebook[rule_id].fix_changes)
        assert f"`paddle-doctor explain {rule_id}`" in body


def test_rules_with_an_experiment_say_how_to_confirm_the_fix():
    found = sections()
    assert "runs the `threads` experiment" in found["PD-CPU-010"]
    assert "No measurement applies" in found["PD-PADDLE-001"]


def test_every_finding_links_to_an_existing_section():
    """GitHub, GitLab and MkDocs turn '## PD-CPU-010' into the anchor 'pd-cpu-010'."""
    anchors = {rule_id.lower() for rule_id in sections()}
    report = report_json(run_doctor("--json", "--root", str(fixture_root("intel-noavx2-v1-quota"))))
    for finding in report["findings"]:
        page, _, anchor = finding["docs_link"].partition("#")
        assert page == RULES_DOC and anchor in anchors, finding["docs_link"]


def test_explain_names_the_rule_section():
    assert "docs/rules.md#pd-cpu-010" in run_doctor("explain", "PD-CPU-010").stdout
    published = run_doctor("explain", "pd-cpu-010", env={"PADDLE_DOCTOR_DOCS_URL": "https://docs.example.com/rules"})
    assert "https://docs.example.com/rules#pd-cpu-010" in published.stdout
