"""Recommended configuration: did measuring find a configuration faster than the service's?"""

from __future__ import annotations

from paddle_doctor.base.quoting import Code
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, Verdict, evidence, passed, skipped
from paddle_doctor.judge.offered import headline, measured_faster
from paddle_doctor.judge.reconcile import outcome
from paddle_doctor.judge.registry import Check, Need, verification_of

RULE = "PD-CFG-001"


@evidence
class RecommendedEvidence(Evidence):
    recommended_calls: Code
    ratio: float
    steps: list[str]


def check(facts: Facts) -> list[Finding]:
    verification = verification_of(facts)
    recommendation = verification.recommendation
    if recommendation is None:
        if verification.load_failure is not None:
            return [skipped(RULE, "the service's configuration does not load; see PD-CFG-002")]
        # --model asked for a measurement and none could be made (budget, interruption): an error, never a silent pass
        return [Finding(RULE, Status.ERROR, f"no configuration could be measured: {verification.error or 'no recommendation was searched'}")]
    comparison = recommendation.comparison
    unconfirmed = recommendation.unconfirmed is not None
    if comparison is None or not (measured_faster(recommendation) or unconfirmed):
        # in the words the recommendation is shown in: enforced, or the service's kept, never as if faster
        return [passed(RULE, f"no configuration measured faster than the service's; {headline(recommendation)}")]
    calls = Code("\n".join(line for line in recommendation.snippet.splitlines() if line.startswith("config.")))
    message = (f"the recommended configuration: {headline(recommendation)}" if unconfirmed
               else f"the recommended configuration, measured as a whole: {outcome(comparison)}")
    return [Finding(RULE, Status.FAIL, message, verdict=Verdict.UNDECIDED if unconfirmed else None,
                    observed=_p50("service", comparison.baseline_p50), expected=_p50("recommended", comparison.candidate_p50),
                    evidence=RecommendedEvidence(calls, round(comparison.ratio, 3), recommendation.steps))]


def _p50(arm: str, ms: float | None) -> str | None:
    """The arm's p50 over the final race's paired blocks (None in facts recorded before they were kept)."""
    return f"{arm} p50 {ms:.2f} ms" if ms is not None else None


CHECK = Check(name="recommended_config", rules=(RULE,), run=check, requires=(Need.MEASUREMENTS,),
              evidence={RULE: RecommendedEvidence})
