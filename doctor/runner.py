"""Runs checks against Facts. A check that raises, overruns its timeout, or emits a rule it did
not declare becomes an ``error`` finding for each of its rules; the other checks still run."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from .facts import Facts
from .findings import Finding, Status
from .registry import Check
from .rules import Rulebook


@dataclass
class CheckResult:
    """One check's findings and the time it took."""

    check: Check
    findings: list[Finding]
    seconds: float


def run_checks(checks: list[Check], facts: Facts, rulebook: Rulebook) -> list[CheckResult]:
    """Every check's findings; with measurements, each finding made consistent with its experiment."""
    results = [run_one(check, facts, rulebook) for check in checks]
    if facts.verification is None:
        return results
    from .reconcile import reconcile_results

    return reconcile_results(results, facts.verification, rulebook)


def run_one(check: Check, facts: Facts, rulebook: Rulebook) -> CheckResult:
    unknown = [rule for rule in check.rules if rule not in rulebook]
    if unknown:
        return _errored(check, f"declares rule {unknown[0]} which is not in {rulebook.source}", 0.0, rulebook)
    outcome: dict[str, object] = {}

    def target() -> None:
        try:
            outcome["findings"] = check.run(facts)
        except BaseException as exc:  # a check must never take the doctor down
            outcome["error"] = exc

    start = time.perf_counter()
    worker = threading.Thread(target=target, name=f"check-{check.name}", daemon=True)
    worker.start()
    worker.join(check.timeout)
    seconds = time.perf_counter() - start
    if worker.is_alive():
        return _errored(check, f"did not finish within its {check.timeout:g} s timeout", seconds, rulebook)
    if "error" in outcome:
        exc = outcome["error"]
        return _errored(check, f"raised {type(exc).__name__}: {exc}", seconds, rulebook)
    findings = outcome.get("findings")
    if not isinstance(findings, list) or not all(isinstance(f, Finding) for f in findings):
        return _errored(check, "returned something other than a list of Findings", seconds, rulebook)
    stray = [f.rule_id for f in findings if f.rule_id not in check.rules]
    if stray:
        return _errored(check, f"emitted rule {stray[0]} which it does not declare", seconds, rulebook)
    return CheckResult(check, findings, seconds)


def _errored(check: Check, reason: str, seconds: float, rulebook: Rulebook) -> CheckResult:
    message = f"check {check.name!r} {reason} (after {seconds:.3f} s)"
    rules = [rule for rule in check.rules if rule in rulebook] or list(check.rules)
    findings = [
        Finding(rule, Status.ERROR, message, evidence={"check": check.name, "seconds": round(seconds, 3)})
        for rule in rules
    ]
    return CheckResult(check, findings, seconds)
