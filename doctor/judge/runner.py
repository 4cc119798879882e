"""Runs checks against Facts. A check whose needs the facts lack is skipped, saying what is missing;
one that raises, overruns its timeout, or emits a rule it did not declare becomes an ``error``
finding for each of its rules; the other checks still run. Each check runs under its timeout in
:func:`paddle_doctor.base.timebox.run_within`, as the whole healthcheck does under its budget."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..base.timebox import Bounded, run_here, run_within
from ..facts import Facts
from .findings import CheckFailed, Finding, Status, skipped
from .registry import Check
from .rules import Rulebook


@dataclass
class CheckResult:
    """One check's findings and the time it took."""

    check: Check
    findings: list[Finding]
    seconds: float


def run_checks(checks: list[Check], facts: Facts, rulebook: Rulebook, starting: Callable[[Check], None] | None = None,
               deadline: float | None = None) -> list[CheckResult]:
    """Every check's findings; with measurements, each finding made consistent with its experiment.
    ``starting`` is told each check as it starts (the healthcheck says which one a timeout cut); ``deadline``
    (``time.monotonic()``), when the caller itself is given up on: see :func:`run_one`."""
    results = []
    for check in checks:
        if starting is not None:
            starting(check)
        results.append(run_one(check, facts, rulebook, deadline))
    record = facts.service_record
    if facts.verification is None and (record is None or not any(plan.verification for plan in record.measured)):
        return results
    from .per_predictor import measurement_for
    from .reconcile import reconcile_findings

    return [replace(result, findings=reconcile_findings(result.findings, lambda finding: measurement_for(facts, finding), rulebook))
            for result in results]


def run_one(check: Check, facts: Facts, rulebook: Rulebook, deadline: float | None = None) -> CheckResult:
    """The check's findings. It runs under its timeout in a thread of its own, unless the caller is itself given up on
    at ``deadline`` (the healthcheck's budget) before that timeout could end: then it runs in the caller's thread,
    where the caller's deadline ends it first just the same, and no thread is started for it."""
    unknown = [rule for rule in check.rules if rule not in rulebook]
    if unknown:
        return _errored(check, f"declares rule {unknown[0]} which is not in {rulebook.source}", 0.0, rulebook)
    missing = check.missing(facts)
    if missing:
        return CheckResult(check, [skipped(rule, missing) for rule in check.rules], 0.0)
    bounded = _ran(check, facts, deadline)
    seconds = bounded.seconds
    if not bounded.finished:
        return _errored(check, f"did not finish within its {check.timeout:g} s timeout", seconds, rulebook)
    if bounded.error is not None:
        exc = bounded.error
        return _errored(check, f"raised {type(exc).__name__}: {exc}", seconds, rulebook)
    findings = bounded.value
    if not isinstance(findings, list) or not all(isinstance(f, Finding) for f in findings):
        return _errored(check, "returned something other than a list of Findings", seconds, rulebook)
    stray = [f.rule_id for f in findings if f.rule_id not in check.rules]
    if stray:
        return _errored(check, f"emitted rule {stray[0]} which it does not declare", seconds, rulebook)
    return CheckResult(check, findings, seconds)


def _ran(check: Check, facts: Facts, deadline: float | None) -> Bounded[list[Finding]]:
    if deadline is not None and check.timeout >= deadline - time.monotonic():
        return run_here(lambda: check.run(facts))
    return run_within(lambda: check.run(facts), check.timeout, f"check-{check.name}")


def _errored(check: Check, reason: str, seconds: float, rulebook: Rulebook) -> CheckResult:
    message = f"check {check.name!r} {reason} (after {seconds:.3f} s)"
    rules = [rule for rule in check.rules if rule in rulebook] or list(check.rules)
    findings = [
        Finding(rule, Status.ERROR, message, evidence=CheckFailed(check.name, round(seconds, 3)))
        for rule in rules
    ]
    return CheckResult(check, findings, seconds)
