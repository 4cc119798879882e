"""A rule's fix says whether applying it is safe (the service computes the same outputs) or unsafe (its
outputs or behaviour may change): rules.yaml's ``fix.safety``, checked on load, shown by explain and on the
rules page, and carried by every finding's fix in the JSON report."""

import copy
import re

import pytest
import yaml
from conftest import REPO, fixture_root, report_json, run_doctor
from paddle_doctor.base.vocabulary import FixSafety
from paddle_doctor.judge.rule_docs import RULES_DOC
from paddle_doctor.judge.rules import RulesError, load_rules, parse_rules

RAW = yaml.safe_load((REPO / "rules.yaml").read_text())
QUOTA_ROOT = "intel-noavx2-v1-quota"  # a 2-CPU quota on a CPU without AVX2: threads and oneDNN findings fail
SAFE_LINE = "Safety: safe — paddle-doctor fix applies it"
UNSAFE_LINE = "Safety: unsafe — outputs or behaviour may change; paddle-doctor fix applies it only with --unsafe-fixes"

PINNED = {
    "PD-CPU-010": FixSafety.SAFE,  # the thread count
    "PD-CPU-013": FixSafety.SAFE,  # the thread pools' environment variables
    "PD-CPU-004": FixSafety.SAFE,  # oneDNN on, in fp32, with a bounded cache
    "PD-MEM-001": FixSafety.SAFE,  # the cache bound
    "PD-START-002": FixSafety.SAFE,  # a warm-up
    "PD-TRT-002": FixSafety.SAFE,  # the cache folder on a volume
    "PD-PREC-001": FixSafety.UNSAFE,  # bf16
    "PD-PREC-002": FixSafety.UNSAFE,  # fp16 in TensorRT
    "PD-GRAPH-001": FixSafety.UNSAFE,  # IR optimisation on
    "PD-SRC-002": FixSafety.UNSAFE,  # IR optimisation on, in the service's code
    "PD-SRC-003": FixSafety.UNSAFE,  # TensorRT, its snippet in fp16
    "PD-PADDLE-003": FixSafety.UNSAFE,  # a Paddle reinstall
    "PD-MEM-003": FixSafety.UNSAFE,  # the worker count
    "PD-LOAD-002": FixSafety.UNSAFE,  # another serving layout
    "PD-START-001": FixSafety.UNSAFE,  # loading the saved optimised program instead of the model's
}


def test_every_rule_says_how_safe_its_fix_is():
    assert all("safety" in entry["fix"] for entry in RAW["rules"])
    rules = load_rules().rules.values()
    assert all(isinstance(rule.fix_safety, FixSafety) for rule in rules)
    assert {rule.fix_safety for rule in rules} == set(FixSafety)  # both words are used


@pytest.mark.parametrize("rule_id, safety", PINNED.items())
def test_the_safety_of_these_fixes_is_pinned(rule_id, safety):
    assert load_rules()[rule_id].fix_safety == safety


def without_safety(value: object) -> dict:
    data = copy.deepcopy(RAW)
    if value is None:
        del data["rules"][0]["fix"]["safety"]
    else:
        data["rules"][0]["fix"]["safety"] = value
    return data


@pytest.mark.parametrize("value, expected", [
    (None, "rules.yaml: rule PD-PADDLE-001: field 'fix.safety': missing; expected one of safe, unsafe"),
    ("maybe", "rules.yaml: rule PD-PADDLE-001: field 'fix.safety': unknown safety 'maybe'; expected one of safe, unsafe"),
    ("Safe", "rules.yaml: rule PD-PADDLE-001: field 'fix.safety': unknown safety 'Safe'; expected one of safe, unsafe"),
    (True, "rules.yaml: rule PD-PADDLE-001: field 'fix.safety': unknown safety True; expected one of safe, unsafe"),
])
def test_a_fix_without_a_known_safety_is_refused_naming_the_rule_and_field(value, expected):
    with pytest.raises(RulesError) as error:
        parse_rules(without_safety(value), "rules.yaml")
    assert str(error.value) == expected


def test_a_rules_file_without_a_safety_is_one_line_and_exit_2(tmp_path):
    rules = tmp_path / "rules.yaml"
    rules.write_text(yaml.safe_dump(without_safety(None), sort_keys=False))
    result = run_doctor("explain", "PD-CPU-010", "--rules", str(rules))
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [
        f"paddle-doctor: error: {rules}: rule PD-PADDLE-001: field 'fix.safety': missing; expected one of safe, unsafe"]


def explained(rule_id: str) -> list[str]:
    result = run_doctor("explain", rule_id, env={"COLUMNS": "200"})
    assert result.returncode == 0 and not result.stderr, result.stderr
    return result.stdout.splitlines()


@pytest.mark.parametrize("rule_id, line", [("PD-CPU-010", SAFE_LINE), ("PD-CPU-004", SAFE_LINE),
                                           ("PD-PREC-001", UNSAFE_LINE), ("PD-GRAPH-001", UNSAFE_LINE)])
def test_explain_prints_the_safety_on_the_line_under_the_fix(rule_id, line):
    lines = explained(rule_id)
    fix = lines.index("Fix")
    assert lines[fix + 1] == load_rules()[rule_id].fix_text
    assert lines[fix + 2] == line
    assert sum(text.startswith("Safety: ") for text in lines) == 1


def test_the_rules_page_says_each_fixs_safety_under_its_changes():
    text = (REPO / RULES_DOC).read_text()
    sections = dict(zip(*[iter(re.split(r"^## (PD-[A-Z]+-\d{3})$", text, flags=re.M)[1:])] * 2))
    for rule in load_rules().ordered():
        fix = sections[rule.id].split("### Fix", 1)[1].split("### Confirm", 1)[0]
        (said,) = re.findall(r"^Safety: .*$", fix, flags=re.M)
        assert said.startswith(f"Safety: `{rule.fix_safety}` — "), (rule.id, said)
    assert "Safety: `safe` — paddle-doctor fix applies it." in sections["PD-CPU-010"]
    assert "Safety: `unsafe` — outputs or behaviour may change" in sections["PD-PREC-001"]


def test_every_finding_of_the_json_report_carries_its_fixs_safety():
    report = report_json(run_doctor("--json", "--no-paddle", "--root", str(fixture_root(QUOTA_ROOT)), "--threads", "8"))
    rules = load_rules()
    assert report["findings"]
    for finding in report["findings"]:
        assert finding["fix"]["safety"] == rules[finding["rule_id"]].fix_safety, finding["rule_id"]
    over = next(finding for finding in report["findings"] if finding["rule_id"] == "PD-CPU-010")
    assert over["status"] == "fail" and over["fix"]["safety"] == "safe"
    assert {finding["fix"]["safety"] for finding in report["findings"]} == {"safe", "unsafe"}
