"""Which findings a run reports and what each weighs: the settings leave a rule out (``ignore:``) or
set its severity, and a problem at or above ``--fail-on`` counts against the exit code. The report
and the healthcheck judge findings alike, through these."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from ..base.vocabulary import Severity, Status
from .findings import Finding
from .policy import Policy
from .rules import AREAS, Rule, Rulebook
from .runner import CheckResult


@dataclass(frozen=True)
class Judged:
    """A finding the settings keep: the check that made it, its rule (None when the rulebook has no
    such rule) and the severity it has here."""

    finding: Finding
    check: str
    rule: Rule | None
    severity: Severity

    @property
    def rule_id(self) -> str:
        return self.finding.rule_id

    @property
    def status(self) -> Status:
        return self.finding.status

    @property
    def message(self) -> str:
        return self.finding.message

    @property
    def area(self) -> str:
        return self.rule.area if self.rule else (self.finding.rule_id.split("-") + ["", ""])[1]


def judge(results: list[CheckResult], rulebook: Rulebook, settings: Policy) -> tuple[list[Judged], list[str]]:
    """The findings the settings keep, in the report's order (by area, then rule id), and the ids of
    the rules they leave out, once each, sorted."""
    kept: list[Judged] = []
    ignored: set[str] = set()
    for result in results:
        for finding in result.findings:
            if settings.is_ignored(finding.rule_id):
                ignored.add(finding.rule_id)
                continue
            rule = rulebook.rules.get(finding.rule_id)
            severity = settings.severity.get(finding.rule_id, rule.severity if rule else Severity.ERROR)
            kept.append(Judged(finding, result.check.name, rule, severity))
    area_order = list(AREAS)
    kept.sort(key=lambda j: (area_order.index(j.area) if j.area in area_order else len(area_order), j.rule_id))
    return kept, sorted(ignored)


class Judgeable(Protocol):
    """What the exit code reads of a finding: a judged one, the report's, or a fleet pod's."""

    @property
    def status(self) -> Status | str: ...

    @property
    def severity(self) -> Severity | str: ...


def counts_against(finding: Judgeable, fail_on: str) -> bool:
    """Whether the finding makes the exit code 1: a problem status at or above the --fail-on severity."""
    return Status(finding.status).is_problem and Severity(finding.severity).rank >= Severity(fail_on).rank
