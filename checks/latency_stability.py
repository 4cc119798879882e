"""Latency stability: does the same request take very different times from run to run?"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import advised_threads
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check, Need, verification_of

if TYPE_CHECKING:
    from paddle_doctor.facts.verification import MachineNoise

RULE = "PD-CPU-015"
CV_LIMIT = 0.25


@evidence
class StabilityEvidence(Evidence):
    cv: float
    p50_ms: float
    p99_ms: float
    undecided_for_noise: list[str]
    threads_per_instance: int


def check(facts: Facts) -> list[Finding]:
    verification = verification_of(facts)
    measured = [e for e in verification.experiments if e.measured and e.arms]
    # the service's own configuration (the switches are measured at it within the CPU budget), else any baseline
    baselines = [arm for e in measured for arm in e.arms if arm.label == "baseline" and arm.cv is not None]
    baseline = next((arm for arm in baselines if arm.config == verification.baseline), baselines[0] if baselines else None)
    if baseline is None or baseline.cv is None or baseline.p50 is None or baseline.p99 is None:
        return [skipped(RULE, "measured with --model")]
    noisy = [e.name for e in measured if e.noisy]
    evidence = StabilityEvidence(round(baseline.cv, 3), round(baseline.p50, 3), round(baseline.p99, 3), noisy,
                                 advised_threads(facts) or 1)
    variation = f"coefficient of variation {baseline.cv:.0%} over {baseline.runs} runs (p50 {baseline.p50:.2f} ms, p99 {baseline.p99:.2f} ms)"
    if baseline.cv > CV_LIMIT:
        return [Finding(RULE, Status.FAIL, f"steady-state latency varies by {baseline.cv:.0%} run to run",
                        observed=variation, expected=f"a coefficient of variation under {CV_LIMIT:.0%}", evidence=evidence)]
    if noisy:
        return [Finding(RULE, Status.FAIL, f"too noisy to decide {', '.join(noisy)} within the budget (the baseline "
                                           f"alone varies by {baseline.cv:.0%}; {competition(verification.noise)})",
                        observed=f"undecided for noise: {', '.join(noisy)}; {variation}",
                        expected="every experiment decided within the budget", evidence=evidence)]
    return [passed(RULE, f"steady-state latency is stable ({variation})", evidence)]


def competition(noise: MachineNoise | None) -> str:
    """What competed for the CPU while measuring, as far as the counters tell."""
    if noise is None or noise.others_share is None:
        return "other work competed for the CPU"
    return f"other processes took {noise.others_share:.0%} of the CPU time"


CHECK = Check(name="latency_stability", rules=(RULE,), run=check, requires=(Need.MEASUREMENTS,), evidence={RULE: StabilityEvidence})
