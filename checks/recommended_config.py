"""Recommended configuration: did measuring find a configuration faster than the service's?

Why: each fix is measured alone, but fixes interact; this check reports the configuration
found by measuring setting after setting in context, and measured as a whole against the
service's own configuration on the real predictor.
Fix: use the recommended configuration (the ready-to-paste snippet is in the report).
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.reconcile import outcome
from paddle_doctor.quoting import Code
from paddle_doctor.registry import Check, Need
from paddle_doctor.vocabulary import Effect

RULE = "PD-CFG-001"


def check(facts: Facts) -> list[Finding]:
    verification = facts.verification
    recommendation = verification.recommendation if verification else None
    if recommendation is None:
        if verification.load_failure is not None:
            return [skipped(RULE, "the service's configuration does not load; see PD-CFG-002")]
        # --model asked for a measurement and none could be made (budget, interruption): an error, never a silent pass
        return [Finding(RULE, Status.ERROR, f"no configuration could be measured: {verification.error or 'no recommendation was searched'}")]
    comparison = recommendation.comparison
    if comparison is not None and recommendation.enforced and comparison.verdict != Effect.IMPROVED:
        return [passed(RULE, f"no configuration within {', '.join(recommendation.enforced)} measured faster than the service's: "
                             f"{outcome(comparison)}; the recommendation keeps that rule, which the service breaks")]
    if comparison is None or comparison.verdict != Effect.IMPROVED:
        verdict = comparison.verdict if comparison else "no candidate was faster"
        return [passed(RULE, f"no configuration measured faster than the service's ({verdict})")]
    calls = Code("\n".join(line for line in recommendation.snippet.splitlines() if line.startswith("config.")))
    base, best = recommendation.baseline, recommendation.recommended
    return [Finding(RULE, Status.FAIL,
                    f"the recommended configuration is {comparison.ratio:.2f}x faster "
                    f"({comparison.confidence:.0%} CI {comparison.ci_low:.2f}-{comparison.ci_high:.2f}) than the service's",
                    observed=f"service p50 {base.p50:.2f} ms", expected=f"recommended p50 {best.p50:.2f} ms",
                    evidence={"recommended_calls": calls, "ratio": round(comparison.ratio, 3), "steps": recommendation.steps})]


CHECK = Check(name="recommended_config", rules=(RULE,), run=check, requires=(Need.MEASUREMENTS,))
