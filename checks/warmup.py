"""Warm-up: is the first request after start far slower than the rest, with no warm-up to absorb it?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Experiment
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

RULE = "PD-START-002"
FIRST_OVER_STEADY_LIMIT = 10.0


@evidence
class WarmupEvidence(Evidence):
    first_ms: float
    steady_p50_ms: float
    ratio: float


def check(facts: Facts) -> list[Finding]:
    runs = facts.service.warmup_runs
    if runs:
        return [passed(RULE, f"the service warms up with {runs} inference{'s' if runs > 1 else ''} at start")]
    experiment = facts.verification.experiment(Experiment.WARMUP) if facts.verification else None
    warmup = experiment.warmup if experiment is not None and experiment.measured else None
    if warmup is None or warmup.first_over_steady is None:
        if runs == 0:
            return [Finding(RULE, Status.WARN, "the service runs no warm-up at start (warmup_runs: 0); measure with --model",
                            observed="warmup_runs: 0", expected="a warm-up before the service reports ready")]
        return [skipped(RULE, "measured with --model or --measure")]
    first, steady, ratio = warmup.first_ms, warmup.steady_p50_ms, warmup.first_over_steady
    evidence = WarmupEvidence(round(first, 2), round(steady, 2), round(ratio, 1))
    observed = f"first inference {first:.1f} ms, steady state p50 {steady:.1f} ms ({ratio:.1f}x)"
    if ratio >= FIRST_OVER_STEADY_LIMIT:
        return [Finding(RULE, Status.FAIL, f"the first request takes {ratio:.0f}x the steady-state latency and nothing warms up",
                        observed=observed, expected=f"under {FIRST_OVER_STEADY_LIMIT:g}x, or a warm-up at start", evidence=evidence)]
    return [passed(RULE, f"the first request takes {ratio:.1f}x the steady state", evidence)]


CHECK = Check(name="warmup", rules=(RULE,), run=each_predictor(check), evidence={RULE: WarmupEvidence})
