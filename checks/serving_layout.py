"""Serving layout under load: does another layout within the CPU budget serve measurably more requests?"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paddle_doctor.base.quoting import Code
from paddle_doctor.base.vocabulary import Effect, Experiment, ExperimentStatus, Layout
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check, Need, verification_of
from paddle_doctor.judge.verdict_words import describe

if TYPE_CHECKING:
    from paddle_doctor.facts.verification import ArmResult, Throttling

RULE = "PD-LOAD-002"


@evidence
class RpsEvidence(Evidence):
    service_rps: str


@evidence
class LayoutEvidence(Evidence):
    ratio: float
    ci_low: float
    ci_high: float
    switch_to: str
    layout: str
    instances: int
    threads: int
    layout_code: Code
    throttling: Throttling | None


def check(facts: Facts) -> list[Finding]:
    experiment = verification_of(facts).experiment(Experiment.LAYOUTS)
    if experiment is None:
        return [skipped(RULE, "measured with --model and --concurrency")]
    if experiment.status == ExperimentStatus.SKIPPED:
        return [skipped(RULE, experiment.reason or "the layouts experiment did not run")]
    if experiment.status == ExperimentStatus.ERROR:
        return [Finding(RULE, Status.ERROR, f"the serving layouts could not be measured: {experiment.reason}")]
    arms = {arm.label: arm for arm in experiment.arms}
    measured = experiment.layouts
    if measured is None:
        return [Finding(RULE, Status.ERROR, "the layouts experiment has no result")]
    service, best = experiment.arms[0], arms[measured.recommended]
    comparison = next((c for c in experiment.comparisons if c.candidate == best.label), None)
    if comparison is None:
        return [passed(RULE, f"the service's layout stays: {measured.why}", RpsEvidence(_rps(service)))]
    if comparison.verdict != Effect.IMPROVED:
        return [passed(RULE, f"{best.label} fits the CPU budget but did not serve measurably more requests than the "
                             f"service's layout (requests per second: {describe(comparison)}); see PD-CPU-010", RpsEvidence(_rps(service)))]
    layout = best.layout
    if layout is None:
        return [Finding(RULE, Status.ERROR, f"the measured arm {best.label} names no layout")]
    return [Finding(RULE, Status.FAIL,
                    f"{best.label} serves more requests per second than the service's layout at concurrency "
                    f"{measured.concurrency}, within the CPU budget: {describe(comparison)}",
                    observed=f"{service.label}: {_rps(service)} req/s, p50 {service.p50:.1f} ms, p99 {service.p99:.1f} ms",
                    expected=f"{best.label}: {_rps(best)} req/s, p50 {best.p50:.1f} ms, p99 {best.p99:.1f} ms",
                    evidence=LayoutEvidence(round(comparison.ratio, 3), round(comparison.ci_low, 3), round(comparison.ci_high, 3),
                                            best.label, layout.layout.value, layout.instances, layout.threads,
                                            layout_snippet(layout.layout, layout.instances, layout.threads),
                                            measured.throttling.get(service.label)))]


def _rps(arm: ArmResult) -> str:
    return f"{arm.throughput_rps:.1f}" if arm.throughput_rps else "?"


def layout_snippet(kind: Layout, instances: int, threads: int) -> Code:
    """Python that serves with this layout (``config`` is the service's paddle_infer.Config)."""
    lines = [f"config.set_cpu_math_library_num_threads({threads})"]
    if instances == 1:
        lines += ["predictor = paddle_infer.create_predictor(config)",
                  "lock = threading.Lock()  # every request: with lock: feed, predictor.run(), fetch"]
    elif kind == Layout.PROCESSES:
        lines += [f"# in each of {instances} worker processes (e.g. gunicorn --workers {instances}):",
                  "predictor = paddle_infer.create_predictor(config)"]
    elif kind == Layout.CLONE:
        lines += ["main = paddle_infer.create_predictor(config)",
                  f"predictors = [main] + [main.clone() for _ in range({instances - 1})]  # one per worker thread, {instances} workers"]
    else:
        lines += [f"pool = paddle_infer.PredictorPool(config, {instances})",
                  f"predictor = pool.retrieve(worker_index)  # worker_index 0..{instances - 1}; older Paddle: pool.retrive"]
    return Code("\n".join(lines))


CHECK = Check(name="serving_layout", rules=(RULE,), run=check, requires=(Need.MEASUREMENTS,), evidence={RULE: LayoutEvidence})
