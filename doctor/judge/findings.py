"""Findings: what a check concluded about one rule. Status and severity are separate.

Status says what the check found (pass, fail, warn, skip, error: the doctor could not carry the
check out); severity (from rules.yaml, overridable) says how much a failure matters.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, TypeVar

from ..base.deferred import dataclass_transform, deferred_dataclass
from ..base.vocabulary import Status, Verdict
from ..facts import SourceLocation

E = TypeVar("E", bound=type)


@dataclass(frozen=True)
class Evidence(Mapping[str, Any]):
    """What a finding saw that its rule's fix names: a frozen dataclass per rule family, whose fields are
    the ``{placeholders}`` of rules.yaml's fix (checked by tests/test_rules.py). Read by key, and
    serialised, as the mapping of its fields in their order; a field named in ``UNSAID`` is left out
    while it is None (the finding had nothing to say there)."""

    UNSAID: ClassVar[frozenset[str]] = frozenset()

    def _said(self) -> list[str]:
        return [f.name for f in fields(self) if f.name not in self.UNSAID or getattr(self, f.name) is not None]

    def __getitem__(self, key: str) -> Any:
        if key not in self._said():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._said())

    def __len__(self) -> int:
        return len(self._said())


@dataclass_transform(frozen_default=True)
def evidence(cls: E) -> E:
    """An evidence type: ``@dataclass(frozen=True)``, made when first used (:mod:`..base.deferred`), so that
    a check's types for what fails cost nothing where it passes (the healthcheck imports every fast check)."""
    return deferred_dataclass(cls, frozen=True)


@deferred_dataclass(frozen=True)
class CheckFailed(Evidence):
    """The evidence of the error findings a check that raised or overran its timeout leaves for its rules."""

    check: str
    seconds: float


@deferred_dataclass(frozen=True)
class ForPredictors(Mapping[str, Any]):
    """A finding's evidence folded over the recorded predictors it holds for: the evidence of the worst
    finding, then ``predictors``, their ids (in its place, where that evidence says predictors already)."""

    evidence: Mapping[str, Any]
    predictors: list[int]

    def __getitem__(self, key: str) -> Any:
        return self.predictors if key == "predictors" else self.evidence[key]

    def __iter__(self) -> Iterator[str]:
        yield from self.evidence
        if "predictors" not in self.evidence:
            yield "predictors"

    def __len__(self) -> int:
        return len(self.evidence) + ("predictors" not in self.evidence)


@dataclass(frozen=True)
class Proposal:
    """The setting a finding's fix changes, and the values that carry the fix out.

    ``setting`` is a field of the measured PredictorConfig (threads, onednn, ir_optim,
    feed_fetch, precision); ``values`` end with the one the fix's code sets; ``binding`` marks a
    limit the doctor enforces (threads within the CPU budget): a measurement informs it but never
    overturns it.
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
    evidence: Mapping[str, Any] = field(default_factory=dict)
    proposal: Proposal | None = None
    verdict: Verdict | None = None
    locations: list[SourceLocation] = field(default_factory=list)
    measured: str | None = None


def passed(rule_id: str, message: str, evidence: Mapping[str, Any] | None = None) -> Finding:
    return Finding(rule_id, Status.PASS, message, evidence=evidence if evidence is not None else {})


def skipped(rule_id: str, message: str) -> Finding:
    return Finding(rule_id, Status.SKIP, message)
