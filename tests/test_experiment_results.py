"""Each experiment's own measurements are a typed result in the field of its name: they survive the
facts file, a result on the wrong experiment (or a measured one without its own) is refused by
``check --facts`` in one line naming it, and the reports say what each one measured."""

import json
from dataclasses import replace

import jsonschema
import pytest
from conftest import report_json, run_doctor
from factories import make_facts
from paddle_doctor.base.vocabulary import Effect, ExperimentStatus, Layout, RaceEnd
from paddle_doctor.facts.loading import facts_from_data
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import (
    ArmResult,
    ColdStartResult,
    ComparisonResult,
    ExcludedLayout,
    ExperimentResult,
    LayoutArm,
    LayoutsResult,
    MemoryGrowth,
    ModelFacts,
    ShapeCacheResult,
    Throttling,
    VerificationFacts,
    WarmupResult,
)

MEASURED = ExperimentStatus.MEASURED
BASE = PredictorConfig(threads=1, onednn=True)


def verification() -> VerificationFacts:
    """One of each typed result, as a verification run records them."""
    layouts = LayoutsResult(
        concurrency=4, budget_cpus=2.0, budget_s=30.0, window_s=0.4, rounds=8, stopped=RaceEnd.DECIDED,
        recommended="2 processes x 1 thread",
        why="measurably more throughput than the service's layout, within the CPU budget",
        excluded=[ExcludedLayout("one predictor shared by concurrent threads without a lock", "not thread-safe")],
        throttling={"2 processes x 1 thread": Throttling(120, 3, 41000)})
    return VerificationFacts(
        ModelFacts("m", "pir", "m/inference.json", None, {}), 40.0, 0.03, 0.01, baseline=BASE,
        experiments=[
            ExperimentResult("warmup", MEASURED, arms=[ArmResult("baseline", BASE, p50=5.0)],
                             warmup=WarmupResult(first_ms=61.0, steady_p50_ms=5.0, first_over_steady=12.2)),
            ExperimentResult("optim_cache", MEASURED, optim_cache=ColdStartResult(rebuild_graph_ms=820.0, optimised_cache_ms=310.0),
                             comparisons=[ComparisonResult("rebuild graph", "optimised model cache", 2.6, 2.2, 3.1,
                                                           Effect.IMPROVED, 6)]),
            ExperimentResult("onednn_cache", MEASURED, onednn_cache=ShapeCacheResult(
                12, MemoryGrowth(300.0, [310.0, 480.0], 180.0), MemoryGrowth(300.0, [305.0, 309.0], 9.0))),
            ExperimentResult("layouts", MEASURED, layouts=layouts, arms=[
                ArmResult("service: one predictor behind a lock x 2 threads", BASE.vary(threads=2),
                          p50=9.0, p90=11.0, p99=14.0, throughput_rps=110.0, layout=LayoutArm(Layout.LOCK, 1, 2, 1, 2, True)),
                ArmResult("2 processes x 1 thread", BASE,
                          p50=8.0, p90=9.0, p99=10.0, throughput_rps=210.0, layout=LayoutArm(Layout.PROCESSES, 2, 1, 2, 2, True))],
                comparisons=[ComparisonResult("service: one predictor behind a lock x 2 threads", "2 processes x 1 thread",
                                              1.9, 1.7, 2.1, Effect.IMPROVED, 8)]),
        ])


def facts_data() -> dict:
    facts = make_facts(quota=2, warmup_runs=0, onednn=True, onednn_cache_capacity=0, concurrency=4)
    facts = replace(facts, service=replace(facts.service, model="m"),  # make_facts' own ``model`` is the CPU's
                    verification=verification())
    return json.loads(facts.to_json())


def experiment(data: dict, name: str) -> dict:
    return next(e for e in data["verification"]["experiments"] if e["name"] == name)


def test_typed_results_survive_the_facts_file():
    data = facts_data()
    assert experiment(data, "onednn_cache")["onednn_cache"]["service"]["growth_mb"] == 180.0
    assert "extra" not in experiment(data, "warmup")
    assert facts_from_data(data).verification == verification()


def test_an_experiment_refuses_another_experiments_result():
    with pytest.raises(ValueError, match="a warmup result on experiment 'threads'; only experiment 'warmup' carries one"):
        ExperimentResult("threads", MEASURED, warmup=WarmupResult(1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="experiment 'layouts' is measured but has no layouts result"):
        ExperimentResult("layouts", MEASURED)
    assert ExperimentResult("layouts", ExperimentStatus.SKIPPED, reason="no --concurrency").layouts is None


def wrong_result_on_threads(data):
    data["verification"]["experiments"].append({**experiment(data, "warmup"), "name": "threads"})


def measured_without_its_result(data):
    experiment(data, "optim_cache")["optim_cache"] = None


def mistyped_field(data):
    experiment(data, "onednn_cache")["onednn_cache"]["shapes"] = "twelve"


def the_old_extra_object(data):
    experiment(data, "warmup")["extra"] = {"first_ms": 61.0}


def an_unknown_layout(data):
    experiment(data, "layouts")["arms"][1]["layout"]["layout"] = "threads"


def an_unknown_end_of_the_race(data):
    experiment(data, "layouts")["layouts"]["stopped"] = "tired"


@pytest.mark.parametrize("spoil, named", [
    (wrong_result_on_threads, "Facts.verification.experiments[4]: a warmup result on experiment 'threads'"),
    (measured_without_its_result, "Facts.verification.experiments[1]: experiment 'optim_cache' is measured but has no optim_cache result"),
    (mistyped_field, "Facts.verification.experiments[2].onednn_cache.shapes: expected int, got 'twelve'"),
    (the_old_extra_object, "Facts.verification.experiments[0]: unknown field 'extra'"),
    (an_unknown_layout, "Facts.verification.experiments[3].arms[1].layout.layout: is 'threads'; expected one of"),
    (an_unknown_end_of_the_race, "Facts.verification.experiments[3].layouts.stopped: is 'tired'; expected one of 'decided', 'budget'"),
])
def test_check_refuses_facts_with_a_wrong_experiment_result_in_one_line(tmp_path, spoil, named):
    data = facts_data()
    spoil(data)
    path = tmp_path / "facts.json"
    path.write_text(json.dumps(data))
    before = path.read_bytes()
    result = run_doctor("check", "--facts", str(path))
    assert result.returncode == 2, result.stdout[-500:]
    assert len(result.stderr.strip().splitlines()) == 1 and named in result.stderr, result.stderr
    assert "Traceback" not in result.stderr and path.read_bytes() == before


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("typed") / "facts.json"
    path.write_text(json.dumps(facts_data()))
    return path


def test_the_json_report_carries_each_typed_result_on_its_finding(recorded, report_schema):
    report = report_json(run_doctor("check", "--facts", str(recorded), "--json"))
    jsonschema.validate(report, report_schema)
    found = {f["rule_id"]: f["verification"] for f in report["findings"]}
    assert found["PD-START-002"]["warmup"]["first_over_steady"] == 12.2 and found["PD-START-002"]["layouts"] is None
    assert found["PD-START-001"]["optim_cache"] == {"rebuild_graph_ms": 820.0, "optimised_cache_ms": 310.0}
    assert found["PD-MEM-001"]["onednn_cache"]["bounded"]["growth_mb"] == 9.0
    assert found["PD-LOAD-002"]["layouts"]["recommended"] == "2 processes x 1 thread"
    assert found["PD-LOAD-002"]["arms"][1]["layout"] == {"layout": "processes", "instances": 2, "threads": 1, "processes": 2,
                                                         "total_threads": 2, "fits_budget": True}


def test_the_checks_read_the_typed_results(recorded):
    report = report_json(run_doctor("check", "--facts", str(recorded), "--json"))
    found = {f["rule_id"]: f for f in report["findings"]}
    assert found["PD-START-002"]["status"] == "fail" and "12x the steady-state latency" in found["PD-START-002"]["message"]
    assert "cold start 820 ms rebuilding the graph, 310 ms from the cache (improved)" in found["PD-START-001"]["observed"]
    assert found["PD-MEM-001"]["evidence"] == {"capacity": 0, "service": 180.0, "bounded": 9.0}
    assert found["PD-LOAD-002"]["evidence"]["throttling"] is None  # the service's arm has no counters here
    assert found["PD-LOAD-002"]["evidence"]["layout"] == "processes"


def test_the_full_text_report_says_what_each_typed_result_measured(recorded):
    text = run_doctor("check", "--facts", str(recorded), "-v", env={"COLUMNS": "250"}).stdout
    assert "first request 61.00 ms, steady-state p50 5.00 ms (12.2x)" in text
    assert "cold start 820 ms rebuilding the graph, 310 ms from the cache" in text
    assert "RSS grew 180 MB over 12 input shapes with the service's cache, 9 MB with a bounded one" in text
    assert "8 rounds of 0.40 s windows, interleaved (stopped: decided)" in text
    assert "→ 2 processes x 1 thread: measurably more throughput" in text
    assert "throttled in 3 of 120 quota periods (0.04 s) while measuring 2 processes x 1 thread" in text
    assert "not measured: one predictor shared by concurrent threads without a lock — not thread-safe" in text
