"""Verification on real Paddle predictors built by the test suite: every experiment, every
verdict path, crash isolation, bad inputs, and replay of measured facts."""

import dataclasses
import json
import math
import re
import sys

import jsonschema
import numpy as np
import pytest
from conftest import report_json, run_doctor
from factories import make_facts, paddle_ok
from machine import observed, skip_unless
from paddle_doctor.base.interpreter import Interpreter
from paddle_doctor.base.vocabulary import Effect
from paddle_doctor.facts import Facts
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.judge.verdict_words import describe
from paddle_doctor.verify import experiments, stats
from paddle_doctor.verify.measure import Measurer
from paddle_doctor.verify.model import ModelRun
from paddle_doctor.verify.noise import BUSY_SHARE, noise_floor
from paddle_doctor.verify.protocol import Crash, Feeds, FeedSpec, Model
from paddle_doctor.verify.run import VerifyOptions, run_verification
from paddle_doctor.verify.session import WorkerDied, WorkerSession

pytestmark = pytest.mark.timing  # judges live timings: .ci/run runs these again on the machine as it is


def open_worker(model_dir, feeds):
    program = next(model_dir.glob("*.json"), None) or next(model_dir.glob("*.pdmodel"))
    session = WorkerSession(Interpreter(sys.executable))
    session.request(60, Model(str(program), str(program.with_suffix(".pdiparams")), str(model_dir)))
    session.request(60, Feeds([feeds]))
    return session


CNN_FEEDS = {"image": FeedSpec("float32", [1, 3, 224, 224])}
BASE = PredictorConfig(threads=1, onednn=True)


@pytest.fixture(scope="module")
def cnn_worker(models):
    session = open_worker(models["cnn-pir"], CNN_FEEDS)
    yield session
    session.close()


def test_every_verdict_path_is_reachable(cnn_worker):
    measurer = Measurer(cnn_worker, min_effect=0.03)
    onednn_off = BASE.vary(onednn=False)
    with observed() as machine:
        improved, = measurer.race(("baseline", onednn_off), [("oneDNN on", BASE)], budget_s=10, what="t")
        regressed, = measurer.race(("baseline", BASE), [("oneDNN off", onednn_off)], budget_s=10, what="t")
    # no time at all (its caller's time over already): the race ends after the two rounds an interval needs,
    # cut short of a verdict's six
    cut_short, = measurer.race(("baseline", BASE), [("oneDNN off", onednn_off)], budget_s=0, what="t", settle_by=0.0)
    assert cut_short.verdict == Effect.UNDECIDED and cut_short.rounds == 2  # stopped at its deadline, said so
    assert describe(cut_short).startswith("oneDNN off vs baseline: cut short after 2 of the 6 rounds a verdict needs")
    # its own budget spent, a race with time left in the verification runs on to the rounds a verdict needs
    given_time, = measurer.race(("baseline", BASE), [("oneDNN off", onednn_off)], budget_s=0, what="t")
    assert given_time.rounds >= stats.MIN_ROUNDS
    skip_unless(machine.conditions, onednn=True)
    assert improved.verdict == Effect.IMPROVED and improved.ratio > 2
    assert regressed.verdict == Effect.REGRESSED and regressed.ratio < 0.5


def test_a_fix_that_changes_nothing_has_no_measurable_effect(models):
    """A/A: the "fix" sets what is already set, so both arms are the same predictor (in a worker of its own).
    On any machine no effect is decided and the estimate lies within the spread the race measured between
    the baseline's own half-blocks (the noise floor), while a real effect past that spread, measured in the
    same worker beside it, is decided; where the machine gives the measurement its CPUs and the interval is
    precise enough to tell (half-width within 1.5%: an unbiased estimate then has it all within 3%), the
    verdict is no measurable effect. (On this 2-CPU machine, quiet, 60 rounds left the half-width at 2.6% in
    2 of 7 runs: undecided is then the honest verdict, which the race says.)"""
    session = open_worker(models["cnn-pir"], CNN_FEEDS)
    measurer = Measurer(session, min_effect=0.03)
    try:
        with observed() as machine:
            same, = measurer.race(("baseline", BASE), [("threads=1 again", BASE.vary(threads=1))], budget_s=40, what="A/A")
            floor = noise_floor(measurer.aa(), measurer.min_effect)
            real, = measurer.race(("baseline", BASE.vary(onednn=False)), [("oneDNN on", BASE)], budget_s=20, what="control")
    finally:
        session.close()
    assert same.verdict not in (Effect.IMPROVED, Effect.REGRESSED), same
    assert 1 / (1 + floor) <= same.ratio <= 1 + floor, (same, floor)
    assert real.verdict == Effect.IMPROVED and real.ci_low > 1 + floor, (real, floor)  # the control: a real effect is seen
    skip_unless(machine.conditions)
    if math.log(same.ci_high / same.ci_low) / 2 <= math.log(1.015):
        assert same.verdict == Effect.NO_EFFECT, same
        assert same.ci_low >= 1 / 1.03 and same.ci_high <= 1.03


def test_a_worker_killed_by_a_signal_is_reported_and_leaves_no_process(models):
    session = open_worker(models["cnn-pir"], CNN_FEEDS)
    with pytest.raises(WorkerDied) as died:
        session.request(30, Crash("SIGSEGV"))
    assert died.value.signal_name == "SIGSEGV" and "SIGSEGV" in str(died.value)
    assert session.proc.poll() is not None


def test_an_experiment_whose_worker_crashes_is_an_error_and_the_rest_still_run(models, monkeypatch):
    def crashing(ctx, budget_s):
        ctx.measurer.load(ctx.baseline.vary(threads=2))
        ctx.measurer.session.request(30, Crash("SIGABRT"))

    # threads: an experiment that runs however busy the machine is (a busy one skips the small switches)
    monkeypatch.setitem(experiments.EXPERIMENTS, "threads", (crashing, 2.0))
    facts = make_facts(flags=["avx", "avx2"], online=2, paddle=paddle_ok(python=sys.executable), threads=1)
    with ModelRun(models["cnn-pir"]) as run:
        result = run_verification(facts, run, VerifyOptions(budget_s=6))
    by_name = {e.name: e for e in result.experiments}
    assert by_name["threads"].status == "error"
    assert "SIGABRT" in by_name["threads"].reason and "threads=2" in by_name["threads"].reason
    assert by_name["warmup"].status == "measured"  # ran after the crash, in a fresh worker
    assert result.recommendation is not None


def test_config_calls_are_what_the_snippet_prints():
    arm = BASE.vary(threads=2, precision="bf16", onednn_cache_capacity=10)
    calls = arm.config_calls()
    assert calls == [("disable_gpu", []), ("set_cpu_math_library_num_threads", [2]), ("enable_mkldnn", []),
                     ("set_mkldnn_cache_capacity", [10]), ("enable_mkldnn_bfloat16", []),
                     ("switch_ir_optim", [True]), ("switch_use_feed_fetch_ops", [False])]
    code = arm.snippet("m/inference.json", "m/inference.pdiparams")
    assert "config.set_mkldnn_cache_capacity(10)" in code and "config.enable_mkldnn_bfloat16()" in code
    compile(code, "snippet", "exec")


def test_baseline_follows_the_service_and_paddle_defaults():
    facts = make_facts(threads=8, onednn=False)
    baseline = PredictorConfig.of_service(facts)
    assert baseline.threads == 8 and baseline.onednn is False
    facts = make_facts(paddle=paddle_ok(mkldnn_default_on=False))
    assert PredictorConfig.of_service(facts) == BASE.vary(onednn=False)


# ------------------------------------------------------------------ the CLI, end to end


@pytest.fixture(scope="module")
def misconfigured_cnn(models):
    """`paddle-doctor --model` on the CNN with the classic misconfiguration: 8 threads, oneDNN off;
    with the machine's conditions while it measured."""
    with observed() as machine:
        result = run_doctor("--json", "--model", str(models["cnn-pir"]), "--threads", "8", "--no-onednn", "--budget", "20",
                            timeout=300)
    return result, report_json(result), machine.conditions


def test_output_drift_is_measured_on_the_same_inputs_and_judged(models):
    """Two FP32 configurations compute the same outputs: no drift, so the comparison keeps its outputs."""
    from paddle_doctor.facts.verification import ComparisonResult, ExperimentResult, OutputDrift

    session = open_worker(models["cnn-pir"], CNN_FEEDS)
    measurer = Measurer(session, min_effect=0.03)
    other = BASE.vary(threads=2)
    result = ExperimentResult("bf16", "measured", comparisons=[ComparisonResult("baseline", "threads=2", 1.0, 0.9, 1.1,
                                                                                Effect.NO_EFFECT, 6)])
    try:
        measurer.load(BASE)
        measurer.load(other)
        ctx = experiments.Context(make_facts(), measurer, BASE, {}, max_drift=0.01, new_session=None)
        result = experiments.with_drift(ctx, result, BASE, other)
    finally:
        session.close()
    (comparison,) = result.comparisons
    assert isinstance(comparison.drift, OutputDrift) and comparison.changes_outputs is False
    assert comparison.drift.max_abs_diff < 1e-3 and comparison.drift.cosine > 0.9999 and comparison.drift.top1_agreement == 1.0
    assert experiments.changes_outputs(OutputDrift(0.02, 0.999, 1.0), max_drift=0.01)
    assert experiments.changes_outputs(OutputDrift(0.0, 1.0, 0.5), max_drift=0.01)


def test_misconfigured_service_gets_measured_fixes_and_a_recommendation(misconfigured_cnn, report_schema):
    result, report, conditions = misconfigured_cnn
    jsonschema.validate(report, report_schema)
    found = {f["rule_id"]: f for f in report["findings"]}
    onednn = found["PD-CPU-004"]["verification"]
    assert onednn["name"] == "onednn" and onednn["arms"][0]["p50"] > 0 and onednn["arms"][0]["runs"] >= 10
    threads = found["PD-CPU-010"]["verification"]
    assert threads["name"] == "threads" and {c["candidate"] for c in threads["comparisons"]} >= {"threads=1"}
    skip_unless(conditions, onednn=True)
    assert onednn["comparisons"][0]["verdict"] == "improved" and onednn["comparisons"][0]["ratio"] > 2
    recommendation = report["verification"]["recommendation"]
    assert recommendation["config"]["onednn"] is True
    assert "config.enable_mkldnn()" in recommendation["snippet"]
    # it turns oneDNN on as PD-CPU-004's fix does: with the shape cache bounded
    (onednn_fix,) = (change["code"] for change in found["PD-CPU-004"]["fix"]["changes"])
    assert all(line in recommendation["snippet"].splitlines() for line in onednn_fix.splitlines()), recommendation["snippet"]
    assert recommendation["comparison"]["verdict"] == "improved"
    assert found["PD-CFG-001"]["status"] == "fail"
    assert "config.enable_mkldnn()" in found["PD-CFG-001"]["fix"]["changes"][0]["code"]
    assert result.returncode == 1


def test_each_experiment_reports_measured_or_why_not(misconfigured_cnn):
    report = misconfigured_cnn[1]
    status = {e["name"]: e for e in report["verification"]["experiments"]}
    assert {"threads", "onednn", "warmup", "optim_cache"} <= {name for name, e in status.items() if e["status"] == "measured"}
    # the small switches are measured on a quiet machine; on a busy one (as the doctor counted it over the races before
    # them), they are not, and say so: their share of the budget went to the larger effects
    busy = [e for e in report["verification"]["experiments"] if e["name"] in ("ir_optim", "feed_fetch") and e["status"] == "skipped"]
    for small in ("ir_optim", "feed_fetch"):
        if status[small] in busy:
            assert status[small]["reason"].startswith("not measured: the machine was busy ("), status[small]
            share = int(status[small]["reason"].split("busy (", 1)[1].split("%", 1)[0])
            assert share >= BUSY_SHARE * 100 - 1, status[small]  # the share it names is a busy machine's
        else:
            assert status[small]["status"] == "measured", status[small]
    assert status["trt_cache"]["status"] == "skipped" and "GPU" in status["trt_cache"]["reason"]
    flags = set(json.loads(run_doctor("facts", "--no-paddle").stdout)["cpu"]["flags"])
    if {"avx512_bf16", "amx_bf16"} & flags:
        assert status["bf16"]["status"] == "measured"
    else:
        assert status["bf16"]["status"] == "skipped" and "bfloat16" in status["bf16"]["reason"]


def test_measured_warmup_finding(misconfigured_cnn):
    found = {f["rule_id"]: f for f in misconfigured_cnn[1]["findings"]}
    warmup = found["PD-START-002"]
    ratio = warmup["evidence"]["ratio"]
    assert warmup["status"] == ("fail" if ratio >= 10 else "pass")
    assert warmup["evidence"]["first_ms"] > 0


def test_text_report_shows_measurements_and_the_snippet(models):
    with observed() as machine:
        result = run_doctor("--model", str(models["cnn-pdmodel"]), "--threads", "8", "--no-onednn", "--budget", "6",
                            env={"COLUMNS": "160"}, timeout=300)
    assert "Recommended configuration" in result.stdout, result.stderr
    assert "predictor = paddle_infer.create_predictor(config)" in result.stdout
    skip_unless(machine.conditions, onednn=True)
    # the measured gain, in the summary (-v: each comparison), against the service's configuration within the CPU budget
    assert re.search(r"measured oneDNN on vs baseline( at threads=\d+)?: ", result.stdout), result.stdout


def test_measured_facts_replay_to_identical_findings(models, tmp_path):
    snapshot = tmp_path / "facts.json"
    recorded = run_doctor("facts", "--model", str(models["encoder-pir"]), "--budget", "5", "-o", str(snapshot), timeout=300)
    assert recorded.returncode == 0, recorded.stderr
    first = report_json(run_doctor("--json", "--facts", str(snapshot)))
    second = report_json(run_doctor("--json", "--facts", str(snapshot)))
    assert first["findings"] == second["findings"]
    assert first["verification"]["model"]["inputs"]["input_ids"]["high"] == 18000
    assert first["verification"]["experiments"][0]["status"] in ("measured", "skipped")


def test_legacy_lod_model_is_measured(models):
    report = report_json(run_doctor("--json", "--model", str(models["sequence-legacy"]), "--budget", "5", timeout=300))
    assert report["verification"]["model"]["format"] == "legacy"
    assert report["verification"]["model"]["inputs"]["words"]["lod"] == [[[0, 8, 16]]]
    assert report["verification"]["error"] is None
    assert report["verification"]["recommendation"]["baseline"]["p50"] > 0


def test_unbounded_onednn_cache_is_measured(models, tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("onednn_cache_capacity: 0\nthreads: 1\n")
    report = report_json(run_doctor("--json", "--model", str(models["cnn-pir"]), "--config", str(config), "--budget", "4",
                                    timeout=300))
    experiment = next(e for e in report["findings"] if e["rule_id"] == "PD-MEM-001")
    assert experiment["status"] == "fail"
    memory = experiment["verification"]["onednn_cache"]
    assert len(memory["service"]["after_each_shape_mb"]) == 12 and "growth_mb" in memory["bounded"]


# ------------------------------------------------------------------ bad input


def one_line_error(result) -> str:
    assert result.returncode == 2, (result.stdout[-500:], result.stderr)
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr
    return result.stderr.strip()


def test_missing_model_is_a_clear_error(tmp_path):
    line = one_line_error(run_doctor("--model", str(tmp_path / "nope")))
    assert "nope" in line and "no such file" in line


def test_shape_that_does_not_fit_names_the_input(models):
    line = one_line_error(run_doctor("--model", str(models["cnn-pir"]), "--shape", "image:1x3x32"))
    assert "input 'image'" in line and "float32" in line and "[1, 3, 32]" in line


def test_npz_with_the_wrong_dtype_names_the_input(models, tmp_path):
    npz = tmp_path / "sample.npz"
    np.savez(npz, image=np.zeros((1, 3, 224, 224), dtype="float64"))
    line = one_line_error(run_doctor("--model", str(models["cnn-pir"]), "--inputs", str(npz)))
    assert "input 'image'" in line and "float32" in line and "float64" in line


def test_npz_with_real_inputs_is_used(models, tmp_path):
    npz = tmp_path / "sample.npz"
    np.savez(npz, input_ids=np.ones((1, 128), dtype="int64"))
    report = report_json(run_doctor("--json", "--model", str(models["encoder-pir"]), "--inputs", str(npz), "--budget", "3",
                                    timeout=300))
    assert report["verification"]["error"] is None


def test_truncated_params_name_the_model(models, tmp_path):
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "inference.json").write_bytes((models["cnn-pir"] / "inference.json").read_bytes())
    params = (models["cnn-pir"] / "inference.pdiparams").read_bytes()
    (broken / "inference.pdiparams").write_bytes(params[: len(params) // 3])
    result = run_doctor("--model", str(broken), "--budget", "2", env={"COLUMNS": "300"}, timeout=300)
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
    text = " ".join(result.stdout.split())  # a finding (PD-CFG-002), with the probe findings around it
    assert "PD-CFG-002" in text and "inference.json (pir version 4): Paddle 3." in text and "cannot load or run" in text


@pytest.mark.slow  # imports Paddle
def test_corrupt_program_is_a_finding_naming_the_file(tmp_path):
    (tmp_path / "inference.pdmodel").write_bytes(b"\x0a\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff")
    (tmp_path / "inference.pdiparams").write_bytes(b"x")
    result = run_doctor("--model", str(tmp_path), env={"COLUMNS": "200"})
    assert result.returncode == 1 and "Traceback" not in result.stderr
    text = " ".join(result.stdout.split())
    assert "PD-GRAPH-006" in text and f"{tmp_path / 'inference.pdmodel'}: not a Paddle ProgramDesc" in text


def test_verification_without_paddle_is_reported_not_crashed(models):
    facts = Facts()
    with ModelRun(models["cnn-pir"]) as run:
        result = run_verification(facts, run, VerifyOptions())
    assert result.error and "cannot be imported" in result.error


def comparison(candidate, verdict, ratio):
    from paddle_doctor.facts.verification import ComparisonResult

    return ComparisonResult("baseline", candidate, ratio, ratio * 0.97, ratio * 1.03, verdict, 10)


def threads_result(*comparisons):
    from paddle_doctor.facts.verification import ArmResult, ExperimentResult

    arms = [ArmResult("baseline", BASE.vary(threads=8))] + [
        ArmResult(c.candidate, BASE.vary(threads=int(c.candidate.split("=")[1]))) for c in comparisons]
    return ExperimentResult("threads", "measured", arms=arms, comparisons=list(comparisons))


@pytest.mark.parametrize(
    "comparisons, limit, chosen",
    [
        ((comparison("threads=1", "improved", 1.2), comparison("threads=2", "improved", 1.5)), 2, 2),
        # only a measured gain moves a setting that the rules accept
        ((comparison("threads=2", "no measurable effect", 1.0),), 16, None),
        ((comparison("threads=2", "undecided", 1.1),), 16, None),
        # a faster count above the limit is never taken, a slower one within it never either
        ((comparison("threads=1", "regressed", 0.9), comparison("threads=4", "improved", 1.4)), 2, None),
        ((comparison("threads=1", "improved", 1.1), comparison("threads=4", "improved", 1.4)), 2, 1),
        # decided faster, but its interval (1.01-1.07) reaches below the minimum effect: within noise, kept
        ((comparison("threads=1", "improved", 1.04),), 2, None),
    ],
)
def test_recommended_threads(comparisons, limit, chosen):
    from paddle_doctor.verify.recommend import best_improvement

    found = best_improvement(threads_result(*comparisons), limit, 0.03)
    assert (found[1].threads if found else None) == chosen


@pytest.mark.parametrize(
    "comparisons, quota, start_threads",
    [
        # over the budget, the search starts from the budget's count (PD-CPU-010's fix), whatever the
        # verdict: even when every count within it measured slower than the oversubscribed service, and
        # when a smaller count measured faster against the service (the search races it in context)
        ((comparison("threads=1", "regressed", 0.7), comparison("threads=2", "regressed", 0.9)), 2, 2),
        ((comparison("threads=1", "improved", 1.6), comparison("threads=2", "improved", 1.3)), 2, 2),
        ((comparison("threads=2", "undecided", 1.1),), 2, 2),
        # no threads experiment: the limit itself
        ((), 2, 2),
        # a half-CPU quota: one thread
        ((comparison("threads=1", "regressed", 0.8),), 0.5, 1),
    ],
)
def test_search_starts_within_the_cpu_budget(comparisons, quota, start_threads):
    from factories import make_facts
    from paddle_doctor.verify.experiments import Context
    from paddle_doctor.verify.recommend import admissible_start

    facts = make_facts(quota=quota, threads=8)
    ctx = Context(facts, measurer=None, baseline=BASE.vary(threads=8), inputs={}, max_drift=0.01, new_session=None)
    measured = {"threads": threads_result(*comparisons)} if comparisons else {}
    start, (step,), enforced = admissible_start(ctx, measured)
    assert start.threads == start_threads and start == BASE.vary(threads=start_threads)
    assert "exceed the CPU budget (PD-CPU-010)" in step and enforced == ["PD-CPU-010"]


def test_search_starts_from_the_service_when_it_fits():
    from factories import make_facts
    from paddle_doctor.verify.experiments import Context
    from paddle_doctor.verify.recommend import admissible_start

    facts = make_facts(quota=2, threads=2)
    ctx = Context(facts, measurer=None, baseline=BASE.vary(threads=2), inputs={}, max_drift=0.01, new_session=None)
    assert admissible_start(ctx, {}) == (BASE.vary(threads=2), [], [])


def test_outputs_changing_candidates_are_never_recommended():
    from paddle_doctor.facts.verification import ArmResult, ExperimentResult
    from paddle_doctor.verify.recommend import best_improvement

    faster = dataclasses.replace(comparison("bf16", "improved", 2.2), changes_outputs=True)
    result = ExperimentResult("bf16", "measured", arms=[ArmResult("baseline", BASE), ArmResult("bf16", BASE.vary(precision="bf16"))],
                              comparisons=[faster])
    assert best_improvement(result, 8, 0.03) is None


class RecordingMeasurer:
    """Stands in for the worker when no time is left: the final race is recorded, not run."""

    def __init__(self):
        self.raced = []
        self.min_effect = 0.03

    def race(self, baseline, candidates, budget_s, what, extend_s=0.0, settle_by=None):
        self.raced.append((baseline, candidates))
        return [comparison(label, "improved", 3.0) for label, _ in candidates]

    def arm_result(self, label, config):
        from paddle_doctor.facts.verification import ArmResult

        return ArmResult(label, config)


def test_with_no_time_left_the_search_adopts_only_what_was_measured_in_context_and_measures_the_whole():
    """Busy machine: the experiments used the budget. The search starts within the CPU budget and,
    with no time to measure in context, takes oneDNN on as measured there (the switches are measured
    at the service's configuration within the CPU budget), keeps IR optimisation as it is (measured
    only at the service's 8 threads), and the final races still measure the whole recommendation
    against the start it grew from and against the service's."""
    from factories import make_facts
    from paddle_doctor.facts.verification import ArmResult, ExperimentResult
    from paddle_doctor.verify.experiments import Context
    from paddle_doctor.verify.recommend import recommend

    service = BASE.vary(threads=8, onednn=False)
    start = service.vary(threads=2)
    facts = make_facts(quota=2, threads=8, onednn=False)
    onednn = ExperimentResult("onednn", "measured", arms=[ArmResult("baseline", start), ArmResult("oneDNN on", start.vary(onednn=True))],
                              comparisons=[comparison("oneDNN on", "improved", 6.5)])
    ir_optim = ExperimentResult("ir_optim", "measured", arms=[ArmResult("baseline", service), ArmResult("IR optim off", service.vary(ir_optim=False))],
                                comparisons=[comparison("IR optim off", "improved", 1.5)])
    threads = ExperimentResult("threads", "measured", arms=[ArmResult("baseline", service), ArmResult("threads=1", service.vary(threads=1)),
                                                            ArmResult("threads=2", service.vary(threads=2))],
                               comparisons=[comparison("threads=1", "regressed", 0.8), comparison("threads=2", "undecided", 1.02)])
    measurer = RecordingMeasurer()
    ctx = Context(facts, measurer=measurer, baseline=service, inputs={}, max_drift=0.01, new_session=None)
    recommendation = recommend(ctx, {"onednn": onednn, "threads": threads, "ir_optim": ir_optim}, 0.0, "m/inference.json",
                               "m/inference.pdiparams")
    assert recommendation.config == service.vary(threads=2, onednn=True)
    assert recommendation.enforced == ["PD-CPU-010"]
    assert any(step.startswith("oneDNN on: oneDNN on vs baseline") for step in recommendation.steps)
    assert any(step.startswith("ir_optim kept as it is") and "no time was left to measure it in context (measured at the "
               "service's configuration)" in step for step in recommendation.steps), recommendation.steps
    # the whole, nothing else: against the start within the CPU budget (its changes offered only when faster
    # together), then against the service's configuration
    assert [(base, [config for _, config in candidates]) for (_, base), candidates in measurer.raced] == \
        [(start, [recommendation.config]), (service, [recommendation.config])]
