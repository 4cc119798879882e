"""A finding ends consistent with the measurement of its own fix.

A check proposes a fix from what it sees (oneDNN off: turn it on); the rule's experiment then
measures exactly that change on the real predictor. This is the one place where the two meet:

- confirmed (the fix measured faster, outputs unchanged): the finding stands, with the gain, and
  where the recommended configuration leaves the setting as the service has it, the measured reason
  that kept it out (the search measured it otherwise in context, or the changes measured slower together);
- refuted (no measurable effect, slower, or faster only by changing outputs): the finding
  passes and says "measured: keep the current setting" — unless it is a limit the doctor
  enforces (threads within the CPU budget), which stands and says what was measured;
- undecided (the machine was too noisy within the budget): the finding stands and says so.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..base.vocabulary import Effect
from ..facts.verification import ComparisonResult, ExperimentResult, Recommendation, VerificationFacts
from .findings import Finding, Status, Verdict
from .rules import Rulebook
from .verdict_words import describe


def reconcile_findings(findings: list[Finding], measurement: Callable[[Finding], VerificationFacts | None],
                       rulebook: Rulebook) -> list[Finding]:
    """Each finding made consistent with the experiment its rule names, in the measurement of what it is about."""
    reconciled = []
    for finding in findings:
        rule = rulebook.rules.get(finding.rule_id)
        verification = measurement(finding) if rule and rule.experiment else None
        experiment = verification.experiment(rule.experiment) if rule and rule.experiment and verification else None
        reconciled.append(reconcile(finding, experiment, verification.recommendation if verification else None))
    return reconciled


def reconcile(finding: Finding, experiment: ExperimentResult | None, recommendation: Recommendation | None = None) -> Finding:
    """The finding with its status and message made consistent with its experiment's verdict, and with
    the recommended configuration where it was confirmed."""
    proposal = finding.proposal
    if proposal is not None and finding.status in (Status.FAIL, Status.WARN) and experiment is not None and experiment.known_issue:
        # the change the fix makes would hit a known problem here (known_issues.yaml): keep the current setting
        return replace(finding, status=Status.PASS, expected="the current setting, as a known problem says",
                       message=f"keep the current setting: {experiment.reason} (the check saw: {finding.message})")
    if proposal is None or finding.status not in (Status.FAIL, Status.WARN) or experiment is None or not experiment.measured:
        return finding
    configs = {arm.label: arm.config for arm in experiment.arms}
    tested = [c for c in experiment.comparisons
              if c.candidate in configs and getattr(configs[c.candidate], proposal.setting) in proposal.values]
    if not tested:
        return finding
    usable = [c for c in tested if c.verdict == Effect.IMPROVED and not c.changes_outputs]
    if usable:
        recommended = getattr(recommendation.config, proposal.setting) if recommendation is not None else None
        # the change the recommendation makes, where it is among those confirmed: one answer in the finding and the snippet
        best = max(usable, key=lambda c: (getattr(configs[c.candidate], proposal.setting) == recommended, c.ratio))
        left_out = ""
        if recommendation is not None and recommended not in proposal.values:
            left_out = f"; not in the recommended configuration: {recommendation.kept_because(experiment.name) or 'the search left it out'}"
        return replace(finding, message=f"{finding.message}; measured: {outcome(best)}{left_out}", verdict=Verdict.CONFIRMED,
                       measured=best.candidate)
    if any(c.verdict == Effect.UNDECIDED for c in tested):
        # the story of the change the fix's code makes, where that one was measured
        undecided = min((c for c in tested if c.verdict == Effect.UNDECIDED),
                        key=lambda c: getattr(configs[c.candidate], proposal.setting) != proposal.values[-1])
        return replace(finding, message=f"{finding.message}; measured: {outcome(undecided)} within the budget; "
                                        "raise --budget or measure on a quieter machine", verdict=Verdict.UNDECIDED,
                       measured=undecided.candidate)
    best = max(tested, key=lambda c: c.ratio)
    if proposal.binding:
        return replace(finding, verdict=Verdict.REFUTED, measured=best.candidate,
                       message=f"{finding.message}; measured with one request at a time: {outcome(best)}; the limit "
                               "holds: threads past the budget borrow CPU time and collapse under load")
    return replace(finding, status=Status.PASS, verdict=Verdict.REFUTED, expected="the current setting, as measured",
                   measured=best.candidate,
                   message=f"measured: keep the current setting — {outcome(best)} (the check saw: {finding.message})")


def outcome(comparison: ComparisonResult) -> str:
    """``threads=2 1.31x faster than baseline (95% CI 1.20-1.43x faster; p50 ...)`` and the like, for any verdict."""
    return describe(comparison)
