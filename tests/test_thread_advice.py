"""One thread count per report: PD-CPU-010's Config call and Dockerfile line, PD-CPU-013's variables,
every other fix that sets threads and the recommended snippet give the same number, the measured one
when there is a measurement (the recommendation's, else the count the threads experiment confirmed),
the CPU budget's share per instance otherwise (``budget.advised_threads``). The rules page and the
examples say it the same way: the variables take the predictor's own count."""

from __future__ import annotations

import re
from dataclasses import replace

import yaml
from conftest import REPO, facts_from_root, report_json, run_doctor
from paddle_doctor.base.vocabulary import Effect
from paddle_doctor.checks.thread_pools import VARIABLES
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import (
    ArmResult,
    ComparisonResult,
    ExperimentResult,
    ModelFacts,
    Recommendation,
    VerificationFacts,
)
from paddle_doctor.judge.rules import load_rules

# every way a report advises a thread count: the Config call, the variables, a wrapper's keyword, flag or YAML key
ADVICE = re.compile(r"set_cpu_math_library_num_threads\((\d+)\)|\b(?:OMP_NUM_THREADS|MKL_NUM_THREADS)=\"?(\d+)"
                    r"|\bcpu_threads[= ]+(\d+)|cpu_math_library_num_threads: (\d+)")
ASSIGNMENT = re.compile(r"\b(OMP_NUM_THREADS|MKL_NUM_THREADS)=(\S+?)(?=[\s\\`'\",;)]|$)")
PLACEHOLDER = "{threads_per_instance}"
SERVICE = PredictorConfig(threads=8, onednn=True)
ROOT = "intel-noavx2-v1-quota"  # 2 CPUs of quota, 8 visible: OpenMP unset starts 8


def advised_counts(text: str) -> set[int]:
    """Every thread count ``text`` advises."""
    return {int(next(group for group in match if group)) for match in ADVICE.findall(text)}


def every_format(tmp_path, facts) -> dict[str, str]:
    path = tmp_path / "facts.json"
    path.write_text(facts.to_json(), encoding="utf-8")
    documents = {fmt: run_doctor("--facts", str(path), "--format", fmt, env={"COLUMNS": "1000"}).stdout
                 for fmt in ("text", "markdown", "html", "json")}
    documents["text -v"] = run_doctor("--facts", str(path), "-v", env={"COLUMNS": "1000"}).stdout
    return documents


def budget_share(facts) -> int:
    from paddle_doctor.facts.budget import cpu_budget

    return cpu_budget(facts).threads_per_instance(facts.service.instances)


def thread_facts(**service):
    """8 threads, and OpenMP unset where it sees more CPUs than the quota gives: PD-CPU-010 and PD-CPU-013 fail."""
    return facts_from_root(ROOT, environ={}, threads=8, onednn=True, **service)


def with_measurement(facts, recommended: PredictorConfig | None, confirmed: int):
    """The threads experiment confirmed ``confirmed`` threads faster than the service's 8; a recommendation of ``recommended``."""
    candidates = [SERVICE.vary(threads=n) for n in (1, 2)]
    arms = [ArmResult("baseline", SERVICE, runs=48, p50=10.0), *(ArmResult(c.label(SERVICE), c, runs=48, p50=5.0) for c in candidates)]
    comparisons = [ComparisonResult("baseline", c.label(SERVICE), *((1.6, 1.4, 1.8, Effect.IMPROVED) if c.threads == confirmed
                                                                     else (1.01, 0.9, 1.1, Effect.UNDECIDED)), 12, 0.95, 10.0, 6.0)
                   for c in candidates]
    verification = VerificationFacts(ModelFacts("m", "pir", "m/inference.json", "m/inference.pdiparams", {}), 20, 0.03, 0.01,
                                     baseline=SERVICE, experiments=[ExperimentResult("threads", "measured", arms=arms, comparisons=comparisons)])
    if recommended is not None:
        whole = ComparisonResult("baseline", "recommended", 1.7, 1.5, 1.9, Effect.IMPROVED, 12, 0.95, 10.0, 5.9)
        verification = replace(verification, recommendation=Recommendation(
            recommended, recommended.snippet("m/inference.json", "m/inference.pdiparams"), ["..."], arms[0],
            ArmResult("recommended", recommended, runs=48, p50=5.9), whole, ["PD-CPU-010"]))
    return replace(facts, verification=verification)


def failing(report: dict) -> set[str]:
    return {f["rule_id"] for f in report["findings"] if f["status"] == "fail"}


def test_without_a_measurement_every_fix_advises_the_budget_s_share(tmp_path):
    facts = thread_facts()
    share = budget_share(facts)
    documents = every_format(tmp_path, facts)
    assert {"PD-CPU-010", "PD-CPU-013"} <= failing(report_json_of(documents)), failing(report_json_of(documents))
    for fmt, document in documents.items():
        assert advised_counts(document) == {share}, (fmt, advised_counts(document))
    assert f"ENV OMP_NUM_THREADS={share} MKL_NUM_THREADS={share}" in documents["text -v"]


def test_with_a_recommendation_every_fix_advises_its_thread_count(tmp_path):
    """The threads experiment confirmed 2 threads at the service's oneDNN; the recommendation, measured
    as a whole, runs 1: the fixes, the variables and the snippet all say 1."""
    facts = with_measurement(thread_facts(), SERVICE.vary(threads=1), confirmed=2)
    assert budget_share(facts) != 1  # the budget alone would say another count
    documents = every_format(tmp_path, facts)
    for fmt, document in documents.items():
        assert advised_counts(document) == {1}, (fmt, advised_counts(document))
    report = report_json_of(documents)
    finding = next(f for f in report["findings"] if f["rule_id"] == "PD-CPU-010")
    assert finding["verdict"] == "confirmed" and finding["expected"].startswith("at most")


def test_with_the_threads_experiment_alone_every_fix_advises_the_count_it_confirmed(tmp_path):
    facts = with_measurement(thread_facts(), None, confirmed=1)
    assert budget_share(facts) != 1
    documents = every_format(tmp_path, facts)
    for fmt, document in documents.items():
        assert advised_counts(document) == {1}, (fmt, advised_counts(document))
    report = report_json_of(documents)
    finding = next(f for f in report["findings"] if f["rule_id"] == "PD-CPU-010")
    assert "threads=1 vs baseline: 1.60x faster" in finding["message"]  # the measurement it names is the count it advises


def test_a_report_naming_two_counts_is_caught():
    """The control for the tests above: the extraction sees each way of advising a count."""
    text = ("config.set_cpu_math_library_num_threads(2)\nENV OMP_NUM_THREADS=1 MKL_NUM_THREADS=1\n"
            "PaddleOCR(cpu_threads=4)\n--cpu_threads 5\ncpu_math_library_num_threads: 6\n")
    assert advised_counts(text) == {1, 2, 4, 5, 6}


def report_json_of(documents: dict[str, str]) -> dict:
    import json

    return json.loads(documents["json"])


def test_the_rules_set_the_variables_to_the_fix_s_own_thread_count():
    rulebook = load_rules()
    for rule_id in ("PD-CPU-010", "PD-CPU-013"):
        (dockerfile,) = [change.code for change in rulebook[rule_id].fix_changes if "OMP_NUM_THREADS" in change.code]
        assert dockerfile == f"ENV OMP_NUM_THREADS={PLACEHOLDER} MKL_NUM_THREADS={PLACEHOLDER}", rule_id
    (call,) = [change.code for change in rulebook["PD-CPU-010"].fix_changes if change.kind == "python"]
    assert call == f"config.set_cpu_math_library_num_threads({PLACEHOLDER})"
    assert "set_cpu_math_library_num_threads" in rulebook["PD-CPU-013"].fix_text
    for name in ("rules.yaml", "docs/rules.md"):  # the texts set them only to the placeholder
        assert {value for _, value in ASSIGNMENT.findall((REPO / name).read_text())} == {PLACEHOLDER}, name


def test_the_examples_set_the_variables_to_the_example_service_s_threads():
    threads = str(yaml.safe_load((REPO / "examples/service/service.yaml").read_text())["threads"])
    assert {value for _, value in ASSIGNMENT.findall((REPO / "examples/Dockerfile").read_text())} == {threads}
    found = set()
    for doc in yaml.safe_load_all((REPO / "examples/kubernetes/deployment.yaml").read_text()):
        for container in (doc or {}).get("spec", {}).get("template", {}).get("spec", {}).get("containers", []):
            found |= {item["value"] for item in container.get("env", []) if item["name"] in VARIABLES}
    assert found == {threads}


def test_a_live_report_advises_one_count(tmp_path):
    """The real CLI on a recorded root, threads given as a flag: the fixes' counts, read from the text."""
    result = run_doctor("--root", str(REPO / "tests/fixtures/roots" / ROOT), "--threads", "8", "-v", env={"COLUMNS": "1000"})
    assert len(advised_counts(result.stdout)) == 1, result.stdout
    assert report_json(run_doctor("--root", str(REPO / "tests/fixtures/roots" / ROOT), "--threads", "8", "--json"))["findings"]
