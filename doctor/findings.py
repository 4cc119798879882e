"""Findings: what a check concluded about one rule. Status and severity are separate.

Status says what the check found (pass, fail, warn, skip, error: the doctor could not carry the
check out); severity (from rules.yaml, overridable) says how much a failure matters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .facts import SourceLocation
from .vocabulary import Status, Verdict


@dataclass(frozen=True)
class Proposal:
    """The setting a finding's fix changes, and the values that carry the fix out.

    ``setting`` is a field of the measured PredictorConfig (threads, onednn, ir_optim,
    feed_fetch, precision); ``binding`` marks a limit the doctor enforces (threads within the CPU
    budget): a measurement informs it but never overturns it.
    """

    setting: str
    values: tuple[Any, ...]
    binding: bool = False


@dataclass
class Finding:
    """What a check concluded about one rule: status, message, what it saw and expected, evidence
    for the fix text, and the lines of the service's source it is about; ``measured`` names the
    candidate of the rule's experiment that the verdict rests on (the change measured)."""

    rule_id: str
    status: Status
    message: str
    observed: str | None = None
    expected: str | None = None
    evidence: dict[str, Any] = field(default_factory=dict)
    proposal: Proposal | None = None
    verdict: Verdict | None = None
    locations: list[SourceLocation] = field(default_factory=list)
    measured: str | None = None


def passed(rule_id: str, message: str, **evidence: Any) -> Finding:
    return Finding(rule_id, Status.PASS, message, evidence=evidence)


def skipped(rule_id: str, message: str) -> Finding:
    return Finding(rule_id, Status.SKIP, message)
