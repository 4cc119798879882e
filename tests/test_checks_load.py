"""PD-LOAD-001/002/003: shared predictors, the measured serving layout, idle instances; and the
load plan: budget splits, candidates, memory."""

from dataclasses import replace

import pytest
from factories import make_facts
from paddle_doctor.base.vocabulary import Layout, RaceEnd
from paddle_doctor.checks import idle_instances, serving_layout, shared_predictor
from paddle_doctor.checks.serving_layout import layout_snippet
from paddle_doctor.facts import MemoryFacts
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import (
    ArmResult,
    ComparisonResult,
    ExperimentResult,
    LayoutArm,
    LayoutsResult,
    ModelFacts,
    VerificationFacts,
)
from paddle_doctor.verify.layouts import Arrangement, LoadError, budget_splits, candidate_layouts, plan_load
from paddle_doctor.verify.model import ModelFiles


@pytest.mark.parametrize(
    "service, status",
    [
        (dict(layout="shared", concurrency=4), "fail"),
        (dict(layout="shared"), "fail"),  # concurrency unknown: "shared" says it is shared by concurrent threads
        (dict(layout="shared", concurrency=1), "pass"),  # one request at a time: nothing runs concurrently
        (dict(layout="lock", concurrency=4), "pass"),
        (dict(layout="clone", instances=4, concurrency=4), "pass"),
        (dict(instances=2, concurrency=4), "pass"),  # processes, the default for several instances
    ],
)
def test_shared_predictor(service, status):
    (finding,) = shared_predictor.check(make_facts(quota=2, **service))
    assert finding.status.value == status


def test_shared_predictor_fix_names_the_worker_count():
    (finding,) = shared_predictor.check(make_facts(quota=2, layout="shared", concurrency=8))
    assert finding.evidence["workers"] == 2  # no more predictors than the CPU budget can run at once
    assert "not thread-safe" in finding.message


@pytest.mark.parametrize(
    "service, status",
    [
        (dict(instances=8, concurrency=2), "fail"),
        (dict(layout="pool", instances=6, concurrency=4), "fail"),
        (dict(instances=2, concurrency=4), "pass"),
        (dict(instances=4, concurrency=4), "pass"),
        (dict(layout="lock", concurrency=4), "pass"),
        (dict(instances=8), "skip"),
    ],
)
def test_idle_instances(service, status):
    (finding,) = idle_instances.check(make_facts(**service))
    assert finding.status.value == status


def test_idle_instances_fix_sizes_the_pool_to_the_concurrency():
    (finding,) = idle_instances.check(make_facts(instances=5, concurrency=2))
    assert finding.evidence["pool_size"] == 2 and finding.evidence["idle"] == 3


def layouts_experiment(verdict="improved", ratio=1.7, recommended="2 processes x 1 thread", status="measured", reason=None):
    service = ArmResult("service: 2 processes x 8 threads", PredictorConfig(threads=8, onednn=True), p50=80.0, p99=400.0,
                        throughput_rps=30.0, layout=LayoutArm(Layout.PROCESSES, 2, 8, 2, 16, False))
    best = ArmResult("2 processes x 1 thread", PredictorConfig(threads=1, onednn=True), p50=50.0, p99=190.0,
                     throughput_rps=30.0 * ratio, layout=LayoutArm(Layout.PROCESSES, 2, 1, 2, 2, True))
    comparison = ComparisonResult(service.label, best.label, ratio, ratio * 0.8, ratio * 1.25, verdict, 9)
    measured = LayoutsResult(concurrency=4, budget_cpus=2, budget_s=40, window_s=0.5, rounds=9, stopped=RaceEnd.DECIDED,
                             recommended=recommended, why="because")
    return ExperimentResult("layouts", status, reason=reason, arms=[service, best], comparisons=[comparison],
                            layouts=measured if status == "measured" else None)


def with_experiment(experiment):
    return replace(make_facts(quota=2, instances=2, threads=8, concurrency=4),
                   verification=VerificationFacts(ModelFacts("m", "pir", "m/inference.json", None, {}), 40, 0.03, 0.01,
                                                  experiments=[experiment] if experiment else []))


@pytest.mark.parametrize(
    "experiment, status",
    [
        (layouts_experiment(), "fail"),
        (layouts_experiment(recommended="service: 2 processes x 8 threads"), "pass"),
        # the switch fits the budget but is not measurably faster: nothing to claim here
        (layouts_experiment(verdict="undecided", ratio=1.1), "pass"),
        (layouts_experiment(status="skipped", reason="the service's concurrency is unknown"), "skip"),
        (layouts_experiment(status="error", reason="killed by SIGSEGV (layout: 2 clones x 1 thread)"), "error"),
        (None, "skip"),
    ],
)
def test_serving_layout(experiment, status):
    (finding,) = serving_layout.check(with_experiment(experiment))
    assert finding.status.value == status


def test_slower_layout_names_the_ratio_and_the_code_to_switch_to():
    (finding,) = serving_layout.check(with_experiment(layouts_experiment()))
    # the comparison in the shared words (doctor/judge/verdict_words.py), the interval in the ratio's own words
    assert "serves more requests per second than the service's layout" in finding.message
    assert "1.70x faster (95% CI 1.36-2.12x faster)" in finding.message
    assert finding.evidence["switch_to"] == "2 processes x 1 thread"
    assert "config.set_cpu_math_library_num_threads(1)" in finding.evidence["layout_code"]
    assert "gunicorn --workers 2" in finding.evidence["layout_code"]


def test_error_names_the_signal():
    (finding,) = serving_layout.check(with_experiment(layouts_experiment(status="error", reason="killed by SIGSEGV")))
    assert "SIGSEGV" in finding.message


# ------------------------------------------------------------------ the plan


@pytest.mark.parametrize(
    "cpus, concurrency, splits",
    [
        (2, 4, [(1, 2), (2, 1)]),
        (8, 4, [(1, 8), (2, 4), (4, 2)]),
        (4, 3, [(1, 4), (2, 2), (3, 1)]),
        (2, 2, [(1, 2), (2, 1)]),
        (1, 4, [(1, 1)]),
    ],
)
def test_budget_splits_leave_no_cpu_idle(cpus, concurrency, splits):
    assert budget_splits(cpus, concurrency) == splits


@pytest.mark.parametrize("cpus", range(1, 17))
@pytest.mark.parametrize("concurrency", [2, 3, 4, 8, 32])
def test_candidates_fit_the_budget_and_never_share_a_predictor_without_a_lock(cpus, concurrency):
    for layout in candidate_layouts(cpus, concurrency):
        assert layout.kind in ("lock", "clone", "pool", "processes")
        assert layout.total_threads <= cpus and layout.instances <= concurrency


def test_processes_share_the_clients_like_a_load_balancer():
    assert [clients for *_, clients in Arrangement("processes", 3, 1).parts(4)] == [2, 1, 1]
    assert Arrangement("clone", 2, 1).parts(4) == [(0, "clone", 2, 4)]


def test_layout_code_for_each_layout_is_python():
    for layout in (Arrangement("lock", 1, 2), Arrangement("clone", 2, 1), Arrangement("pool", 4, 1), Arrangement("processes", 2, 1)):
        compile(layout_snippet(layout.kind, layout.instances, layout.threads), layout.label(), "exec")
    assert "pool.retrieve(worker_index)" in layout_snippet("pool", 4, 1)


def model_files(tmp_path, size):
    program, params = tmp_path / "inference.json", tmp_path / "inference.pdiparams"
    program.write_text("{}")
    with open(params, "wb") as handle:
        handle.truncate(size)
    return ModelFiles("pir", str(tmp_path), str(program), str(params))


def test_more_processes_than_memory_allows_is_an_error_before_anything_starts(tmp_path):
    facts = replace(make_facts(quota=2, instances=16, threads=1, concurrency=16),
                    memory=MemoryFacts(limit_bytes=2 << 30, limit_file="/sys/fs/cgroup/memory.max"))
    with pytest.raises(LoadError) as error:
        plan_load(facts, model_files(tmp_path, 40 << 20))
    message = str(error.value)
    assert "16 worker processes" in message and "memory limit of 2.0 GiB" in message and "--instances" in message


def test_candidates_that_do_not_fit_memory_are_left_out_and_said_so(tmp_path):
    facts = replace(make_facts(quota=4, instances=1, threads=1, concurrency=4),
                    memory=MemoryFacts(limit_bytes=1600 << 20, limit_file="/sys/fs/cgroup/memory.max"))
    plan = plan_load(facts, model_files(tmp_path, 40 << 20))
    assert all(layout.processes < 4 for layout in plan.candidates)
    assert any(layout.startswith("4 processes") for layout, _ in plan.excluded)
    assert plan.memory_bytes(40 << 20) <= 1600 << 20


def test_concurrency_below_one_is_an_error(tmp_path):
    with pytest.raises(LoadError, match="concurrency is 0"):
        plan_load(make_facts(quota=2, concurrency=0), model_files(tmp_path, 1000))


@pytest.mark.parametrize(
    "service, reason",
    [
        (dict(), "concurrency is unknown"),
        (dict(concurrency=1), "one request at a time"),
    ],
)
def test_no_plan_without_concurrency(tmp_path, service, reason):
    from paddle_doctor.verify.layouts import skip_reason

    facts = make_facts(quota=2, **service)
    assert plan_load(facts, model_files(tmp_path, 1000)) is None
    assert reason in skip_reason(facts)
