"""Serving layout under load: does another layout that fits the CPU budget serve measurably
more requests per second at the service's concurrency?

Why: under concurrent requests the arrangement of predictors decides throughput and tail
latency: one predictor behind a lock serves one request at a time, threads x instances above
the CPU budget fight over it, and in Python the predictor's ``run()`` holds the GIL (measured
with paddlepaddle 3.3.1), so clones in one process do not run in parallel while worker
processes do. Which split of the budget wins depends on the model, so it is measured: the
``layouts`` experiment loads every layout with the service's concurrency, interleaved.
Fix: switch to the measured layout; its code (threads per instance, clones, pool size or
process count) is in the finding.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.registry import Check, Need
from paddle_doctor.verify.layouts import layout_snippet
from paddle_doctor.vocabulary import Effect, ExperimentStatus

RULE = "PD-LOAD-002"


def check(facts: Facts) -> list[Finding]:
    experiment = facts.verification.experiment("layouts")
    if experiment is None:
        return [skipped(RULE, "measured with --model and --concurrency")]
    if experiment.status == ExperimentStatus.SKIPPED:
        return [skipped(RULE, experiment.reason or "the layouts experiment did not run")]
    if experiment.status == ExperimentStatus.ERROR:
        return [Finding(RULE, Status.ERROR, f"the serving layouts could not be measured: {experiment.reason}")]
    arms = {arm.label: arm for arm in experiment.arms}
    measured = experiment.layouts
    service, best = experiment.arms[0], arms[measured.recommended]
    comparison = next((c for c in experiment.comparisons if c.candidate == best.label), None)
    if comparison is None:
        return [passed(RULE, f"the service's layout stays: {measured.why}", service_rps=_rps(service))]
    if comparison.verdict != Effect.IMPROVED:
        return [passed(RULE, f"{best.label} fits the CPU budget but did not serve measurably more requests than the "
                             f"service's layout ({comparison.verdict}); see PD-CPU-010", service_rps=_rps(service))]
    layout = best.layout
    ci = f"{comparison.confidence:.0%} CI {comparison.ci_low:.2f}-{comparison.ci_high:.2f}"
    return [Finding(RULE, Status.FAIL,
                    f"{best.label} serves {comparison.ratio:.2f}x the requests per second of the service's layout "
                    f"({ci}) at concurrency {measured.concurrency}, within the CPU budget",
                    observed=f"{service.label}: {_rps(service)} req/s, p50 {service.p50:.1f} ms, p99 {service.p99:.1f} ms",
                    expected=f"{best.label}: {_rps(best)} req/s, p50 {best.p50:.1f} ms, p99 {best.p99:.1f} ms",
                    evidence={"ratio": round(comparison.ratio, 3), "ci_low": round(comparison.ci_low, 3),
                              "ci_high": round(comparison.ci_high, 3), "switch_to": best.label,
                              "layout": layout.layout.value, "instances": layout.instances, "threads": layout.threads,
                              "layout_code": layout_snippet(layout.layout, layout.instances, layout.threads),
                              "throttling": measured.throttling.get(service.label)})]


def _rps(arm) -> str:
    return f"{arm.throughput_rps:.1f}" if arm.throughput_rps else "?"


CHECK = Check(name="serving_layout", rules=(RULE,), run=check, requires=(Need.MEASUREMENTS,))
