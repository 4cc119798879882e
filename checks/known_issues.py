"""Known problems: does a bug known for these versions (known_issues.yaml) hold for this setup?"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paddle_doctor.base.quoting import Code
from paddle_doctor.base.vocabulary import PaddleStatus, ProblemKind, Verdict
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, ForPredictors, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import named
from paddle_doctor.judge.registry import Check

if TYPE_CHECKING:
    from paddle_doctor.facts.recorded import RecordedPredictor
    from paddle_doctor.facts.verification import KnownIssueTrial
    from paddle_doctor.judge.known_issues import Decision, KnownIssue, Setup

RULES = tuple(dict.fromkeys(kind.rule for kind in ProblemKind))
NOTICES = (ProblemKind.DEPRECATED, ProblemKind.NOTICE)  # worth knowing: a warning, not a failure


@evidence
class KnownIssueEvidence(Evidence):
    """The entry a finding is about, its threads, the release that fixes it, its workaround (its text, then
    each change's code) and, where the predictor worker tried it, what it saw there."""

    UNSAID = frozenset({"confirmed"})

    known_issue: str
    title: str
    kind: ProblemKind
    fixed: str
    links: list[str]
    workaround: str
    confirmed: str | None = None


Judged = tuple["RecordedPredictor | None", "Setup", "Decision"]


def check(facts: Facts) -> list[Finding]:
    paddle = facts.paddle
    if paddle.status != PaddleStatus.OK or not paddle.version:  # (the healthcheck probes no Paddle: nor are the entries loaded)
        reason = f"Paddle's version is not known ({paddle.reason or paddle.status}): the known problems are told by version"
        return [skipped(rule, reason) for rule in RULES]
    from paddle_doctor.judge.known_issues import active_book, setups

    book = active_book()
    views = setups(facts)
    findings = []
    for rule in RULES:
        entries = book.of_rule(rule)
        found = [finding for entry in entries for finding in entry_findings(entry, views)]
        label = f"{paddle.distribution or 'Paddle'} {paddle.version}"
        findings += found or [passed(rule, f"none of the {len(entries)} known problems of its kind holds for {label} here")]
    return findings


def entry_findings(entry: KnownIssue, views: list[tuple[RecordedPredictor | None, Setup]]) -> list[Finding]:
    """The entry's finding: where it holds for some predictor (or the service), one naming them; else, where the
    facts cannot tell for some, one saying what is missing; else none (it does not concern this setup)."""
    from paddle_doctor.judge.known_issues import matches

    judged = [(predictor, setup, matches(entry, setup)) for predictor, setup in views]
    held = [one for one in judged if one[2].holds]
    if held:
        return holding(entry, held)
    open_ = [one for one in judged if one[2].holds is None]
    if not open_:
        return []
    missing = "; ".join(dict.fromkeys(why for _, _, decision in open_ for why in decision.missing))
    return [_about(entry.rule, Status.SKIP, f"{entry.id} may hold ({entry.title}): {missing}",
                   [predictor for predictor, _, _ in open_])]


def holding(entry: KnownIssue, held: list[Judged]) -> list[Finding]:
    """The findings of an entry that holds: one for the predictors it stands for, confirmed where the predictor
    worker reproduced it on one of them, and one passing for those it was tried on and not reproduced."""
    tried = [(one, trial_of(entry, one[1])) for one in held]
    standing = [(one, trial) for one, trial in tried if trial is None or trial.reproduced]
    refuted = [(one, trial) for one, trial in tried if trial is not None and not trial.reproduced]
    found = []
    if standing:
        reproduced = next((trial for _, trial in standing if trial is not None), None)
        found.append(_held(entry, [one for one, _ in standing], reproduced))
    if refuted:
        found.append(_held(entry, [one for one, _ in refuted], refuted[0][1]))
    return found


def _held(entry: KnownIssue, held: list[Judged], trial: KnownIssueTrial | None) -> Finding:
    """The finding of an entry that holds for ``held``: what matched, the fix's release and the threads; confirmed
    or not reproduced where the predictor worker tried it (``trial``)."""
    from paddle_doctor.judge.known_issues import called_at

    said = list(dict.fromkeys(words for _, _, decision in held for words in decision.said))
    message = f"{entry.id} {entry.title}: {'; '.join(said)}; {entry.fixed()}; see {entry.threads()}"
    status = Status.WARN if entry.kind in NOTICES else Status.FAIL
    verdict, confirmed = None, None
    if trial is not None and trial.reproduced:
        verdict, confirmed = Verdict.CONFIRMED, confirmation(trial)
        message += f"; confirmed in the predictor worker: {confirmed}"
    elif trial is not None:
        status, verdict = Status.PASS, Verdict.REFUTED
        message += f"; not reproduced in the predictor worker: {trial.message or 'the configuration ran the model'}"
    evidence = KnownIssueEvidence(entry.id, entry.title, entry.kind, entry.fixed(), list(entry.links),
                                  Code("\n".join(entry.workaround.lines())), confirmed)
    setup = held[0][1]
    finding = _about(entry.rule, status, message, [predictor for predictor, _, _ in held], evidence,
                     locations=called_at(entry.when.calls, setup.facts) if entry.when.calls else [])
    finding.observed, finding.expected, finding.verdict = "; ".join(said), entry.workaround.text, verdict
    return finding


def trial_of(entry: KnownIssue, setup: Setup) -> KnownIssueTrial | None:
    """What the predictor worker saw of the entry, where it tried it on this predictor's model (--model, --measure)."""
    verification = setup.facts.verification
    if verification is None:
        return None
    return next((trial for trial in verification.known_issues if trial.known_issue == entry.id), None)


def confirmation(trial: KnownIssueTrial) -> str:
    """``the service's configuration failed: ...; its workaround (oneDNN off) ran the model: ...``."""
    failed = f"was killed by {trial.signal}" if trial.signal else f"failed: {trial.message}"
    words = f"the service's configuration {failed}"
    if trial.workaround is None:
        return words
    if trial.workaround_ran:
        return (f"{words}; its workaround ({trial.workaround}) ran the model: first run {trial.workaround_first_ms:.1f} ms, "
                f"then {trial.workaround_warm_ms:.2f} ms a run")
    return f"{words}; its workaround ({trial.workaround}) did not run either: {trial.workaround_error}"


def _about(rule: str, status: Status, message: str, predictors: list[RecordedPredictor | None],
           evidence: KnownIssueEvidence | None = None, locations: list | None = None) -> Finding:
    """A finding of ``rule``, naming the recorded predictors it is about (none: the service as the facts say it)."""
    recorded = [predictor for predictor in predictors if predictor is not None]
    shown = evidence if evidence is not None else {}
    if recorded:
        message = f"{named(recorded)}: {message}"
        shown = ForPredictors(shown, [predictor.id for predictor in recorded])
    return Finding(rule, status, message, evidence=shown, locations=locations or [])


CHECK = Check(name="known_issues", rules=RULES, run=check,
              evidence=dict.fromkeys(RULES, KnownIssueEvidence))
