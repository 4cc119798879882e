"""Pods grouped by identical findings and facts; every group compared with the usual one (the group
of more than half of the pods) or, with no majority, with the healthiest group, or with none when no
group is healthier than the others."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from .. import __version__
from ..base.schema import Count, ExitCode, version_metadata
from ..base.vocabulary import Severity
from ..judge.findings import Status
from ..report.report import EXIT_FINDINGS, EXIT_OK, Tool, counts_against
from .reports import PodFacts, PodFinding, PodReport, Unreached

SCHEMA_VERSION = 2
ABSENT = "not reported"


class Reference(str, Enum):
    """What the groups are compared with: the majority's group (the usual one); without a majority
    the healthiest group (fewest problems at or above --fail-on, then fewest problems, then most
    pods); none when no group is alone the healthiest."""

    MAJORITY = "majority"
    HEALTHIEST = "healthiest"
    NONE = "none"


@dataclass
class Difference:
    """A fact or a rule on which a group differs from the group it is compared with (``usual``: that group's value)."""

    what: str
    usual: str
    here: str


@dataclass
class Group:
    """Pods with the same facts and findings; ``findings`` lists its problems (fail, warn, error);
    ``usual``: its pods are more than half of those diagnosed."""

    pods: list[str] = field(metadata={"schema": {"minItems": 1}})
    nodes: list[str]
    usual: bool
    facts: PodFacts
    findings: list[PodFinding]
    problems: Count
    differences: list[Difference]


@dataclass
class FleetReport:
    """The groups, the one the others are compared with first (see ``compared_with``), then largest
    first; the pods not diagnosed and the exit code."""

    schema_version: int = field(metadata=version_metadata(SCHEMA_VERSION))
    tool: Tool
    fail_on: Severity
    pods: Count
    compared_with: Reference
    groups: list[Group]
    unreached: list[Unreached]
    problem_pods: list[str]
    exit_code: ExitCode = field(metadata={"schema": {"description": "What the fleet command exits with: 0 no pod with problems, "
                                                     "1 a pod with problems or not diagnosed, 2 stopped by a signal (the report is partial)"}})

    @property
    def reference(self) -> Group | None:
        """The group the others are compared with."""
        return self.groups[0] if self.groups and self.compared_with != Reference.NONE else None

    @property
    def outliers(self) -> list[Group]:
        """The groups that differ from the reference; none when there is nothing to compare with."""
        return self.groups[1:] if self.reference else []


def build_fleet(reports: list[PodReport], unreached: list[Unreached], fail_on: str) -> FleetReport:
    """Exit 1 when a pod has a finding at or above ``fail_on`` or could not be diagnosed."""
    members: dict[tuple, list[PodReport]] = {}
    for report in reports:
        members.setdefault((report.facts, tuple(f.identity for f in report.findings)), []).append(report)

    def problems(pods: list[PodReport]) -> int:
        return sum(counts_against(finding, fail_on) for finding in pods[0].findings)

    ordered = sorted(members.values(), key=lambda pods: (-len(pods), problems(pods), min(p.pod for p in pods)))
    compared_with, reference = _reference(ordered, problems)
    if reference:
        ordered.remove(reference)
        ordered.insert(0, reference)
    groups = [
        Group(pods=sorted(p.pod for p in pods), nodes=sorted({p.node for p in pods if p.node}),
              usual=compared_with == Reference.MAJORITY and pods is reference, facts=pods[0].facts,
              findings=[f for f in pods[0].findings if Status(f.status).is_problem], problems=problems(pods),
              differences=[] if reference is None or pods is reference else differences(reference[0], pods[0]))
        for pods in ordered
    ]
    problem_pods = sorted(pod for group in groups if group.problems for pod in group.pods)
    failed = problem_pods or unreached
    return FleetReport(
        schema_version=SCHEMA_VERSION, tool=Tool("paddle-doctor", __version__), fail_on=Severity(fail_on),
        pods=len(reports) + len(unreached), compared_with=compared_with, groups=groups,
        unreached=sorted(unreached, key=lambda u: u.pod), problem_pods=problem_pods, exit_code=EXIT_FINDINGS if failed else EXIT_OK,
    )


def _reference(ordered: list[list[PodReport]], problems: Callable[[list[PodReport]], int]) -> tuple[Reference, list[PodReport] | None]:
    """The group of more than half of the pods; else the one alone healthiest; else none."""
    if not ordered:
        return Reference.NONE, None
    if 2 * len(ordered[0]) > sum(len(pods) for pods in ordered):
        return Reference.MAJORITY, ordered[0]

    def health(pods: list[PodReport]) -> tuple[int, int, int]:
        return problems(pods), sum(Status(f.status).is_problem for f in pods[0].findings), -len(pods)

    ranked = sorted(ordered, key=health)
    if len(ranked) > 1 and health(ranked[0]) == health(ranked[1]):
        return Reference.NONE, None
    return Reference.HEALTHIEST, ranked[0]


def differences(usual: PodReport, here: PodReport) -> list[Difference]:
    """Facts first, in PodFacts' order, then rules whose status or severity differ."""
    found = [Difference(item.metadata["label"], getattr(usual.facts, item.name), getattr(here.facts, item.name))
             for item in dataclasses.fields(PodFacts)
             if getattr(usual.facts, item.name) != getattr(here.facts, item.name)]
    before, after = _by_rule(usual.findings), _by_rule(here.findings)
    for rule_id in sorted(before.keys() | after.keys()):
        was, now = before.get(rule_id), after.get(rule_id)
        if (was and was.identity) != (now and now.identity):
            found.append(Difference(rule_id, _finding_state(was), _finding_state(now)))
    return found


def _by_rule(findings: list[PodFinding]) -> dict[str, PodFinding]:
    return {finding.rule_id: finding for finding in findings}


def _finding_state(finding: PodFinding | None) -> str:
    return f"{finding.status} ({finding.severity})" if finding else ABSENT
