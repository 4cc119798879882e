"""The report: one model built from Facts, check results, rules and settings. Renderers only render it."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from . import __version__
from .budget import cpu_budget
from .docs import docs_link, docs_page
from .facts import Facts, ServiceProcessFacts, SettingOrigin, SourceFacts, SourceLocation
from .findings import Finding, Status, severity_rank
from .gpu import summary as gpu_summary
from .profile import Profile, build_profile
from .registry import LoadFailure
from .rules import AREAS, Rule, Rulebook
from .serde import to_data
from .runner import CheckResult
from .settings import Settings

SCHEMA_VERSION = 1
EXIT_OK, EXIT_FINDINGS, EXIT_DOCTOR_FAILED = 0, 1, 2
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
SERVICE_ENVIRONMENT = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                       "KMP_AFFINITY", "OMP_PROC_BIND", "LD_LIBRARY_PATH")
HEADLINE_FLAGS = ("avx", "avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16")


@dataclass
class Fix:
    """A finding's fix: the rule's text and changes with the finding's evidence filled in."""

    text: str
    changes: list[dict[str, str]]


@dataclass
class ReportFinding:
    """A finding with its rule: what the report shows for one rule."""

    rule_id: str
    slug: str
    title: str
    area: str
    check: str
    status: str
    severity: str
    message: str
    observed: str | None
    expected: str | None
    evidence: dict[str, Any]
    symptom: str
    cause: str
    fix: Fix
    docs: list[str]
    docs_link: str | None
    explain: str
    experiment: str | None
    verification: dict[str, Any] | None = None
    verdict: str | None = None
    locations: list[SourceLocation] = field(default_factory=list)


@dataclass
class Summary:
    """Findings counted by status, how many count against the exit code, and the rules ignored."""

    counts: dict[str, int]
    problems: int
    ignored: list[str]


@dataclass
class ServiceSummary:
    """The service's settings with where each came from, its process (only the environment
    variables that steer Paddle's threads and devices, or that the source reads) and its source."""

    settings: list[SettingOrigin]
    process: ServiceProcessFacts
    source: SourceFacts


@dataclass
class Report:
    """Everything a renderer needs: findings with their rules, check errors, summary and exit code."""

    schema_version: int
    tool: dict[str, str]
    host: dict[str, Any]
    fail_on: str
    findings: list[ReportFinding]
    check_errors: list[dict[str, str]]
    summary: Summary
    exit_code: int = EXIT_OK
    areas: dict[str, str] = field(default_factory=lambda: dict(AREAS))
    verification: dict[str, Any] | None = None
    graph: dict[str, Any] | None = None
    profile: Profile | None = None
    service: ServiceSummary | None = None


def build_report(
    facts: Facts,
    results: list[CheckResult],
    rulebook: Rulebook,
    settings: Settings,
    load_failures: list[LoadFailure] = (),
) -> Report:
    findings: list[ReportFinding] = []
    ignored: list[str] = []
    page = docs_page(settings.docs_url)
    for result in results:
        for finding in result.findings:
            if settings.is_ignored(finding.rule_id):
                ignored.append(finding.rule_id)
                continue
            findings.append(_report_finding(finding, result.check.name, rulebook, settings, page, facts))
    area_order = list(AREAS)
    findings.sort(key=lambda f: (area_order.index(f.area) if f.area in area_order else len(area_order), f.rule_id))
    counts = {status.value: sum(1 for f in findings if f.status == status.value) for status in Status}
    problems = [f for f in findings if counts_against(f, settings.fail_on)]
    check_errors = [{"entry_point": failure.entry_point, "reason": failure.reason} for failure in load_failures]
    return Report(
        schema_version=SCHEMA_VERSION,
        tool={"name": "paddle-doctor", "version": __version__},
        host=host_summary(facts),
        fail_on=settings.fail_on,
        findings=findings,
        check_errors=check_errors,
        summary=Summary(counts=counts, problems=len(problems), ignored=sorted(set(ignored))),
        exit_code=EXIT_FINDINGS if problems or check_errors else EXIT_OK,
        verification=verification_summary(facts),
        graph=graph_summary(facts),
        profile=build_profile(facts),
        service=service_summary(facts),
    )


def counts_against(finding: ReportFinding, fail_on: str) -> bool:
    """Whether the finding makes the exit code 1: a problem status at or above the --fail-on severity."""
    return Status(finding.status).is_problem and severity_rank(finding.severity) >= severity_rank(fail_on)


def _report_finding(finding: Finding, check: str, rulebook: Rulebook, settings: Settings, page: str, facts: Facts) -> ReportFinding:
    rule: Rule | None = rulebook.rules.get(finding.rule_id)
    severity = settings.severity.get(finding.rule_id, rule.severity if rule else "error")
    return ReportFinding(
        rule_id=finding.rule_id,
        slug=rule.slug if rule else "unknown-rule",
        title=rule.title if rule else f"unknown rule {finding.rule_id}",
        area=rule.area if rule else (finding.rule_id.split("-") + ["", ""])[1],
        check=check,
        status=finding.status.value,
        severity=severity,
        message=finding.message,
        observed=finding.observed,
        expected=finding.expected,
        evidence=finding.evidence,
        symptom=rule.symptom if rule else "",
        cause=rule.cause if rule else "",
        fix=Fix(rule.fix_text, [{"kind": c.kind, "code": fill_placeholders(c.code, finding.evidence)} for c in rule.fix_changes])
        if rule
        else Fix("", []),
        docs=list(rule.docs) if rule else [],
        docs_link=docs_link(rule.id, page) if rule else None,
        explain=rule.explain_command if rule else "",
        experiment=rule.experiment if rule else None,
        verification=_measured(facts, rule.experiment) if rule and rule.experiment else None,
        verdict=finding.verdict.value if finding.verdict else None,
        locations=list(finding.locations),
    )


def _measured(facts: Facts, experiment: str) -> dict[str, Any] | None:
    """The measurement that confirms a rule's fix, attached to its finding."""
    if facts.verification is None:
        return None
    if experiment == "recommend":
        recommendation = facts.verification.recommendation
        return to_data(recommendation) if recommendation else None
    found = facts.verification.experiment(experiment)
    return to_data(found) if found else None


def verification_summary(facts: Facts) -> dict[str, Any] | None:
    verification = facts.verification
    if verification is None:
        return None
    return {
        "model": to_data(verification.model),
        "budget_s": verification.budget_s,
        "seconds": verification.seconds,
        "min_effect": verification.min_effect,
        "max_drift": verification.max_drift,
        "baseline": to_data(verification.baseline),
        "error": verification.error,
        "over_budget": verification.over_budget,
        "experiments": [{"name": e.name, "status": e.status, "reason": e.reason, "seconds": e.seconds}
                        for e in verification.experiments],
        "recommendation": to_data(verification.recommendation) if verification.recommendation else None,
    }


def graph_summary(facts: Facts) -> dict[str, Any] | None:
    """The fusion coverage, with the ir_optim experiment that measures what the fusions are worth."""
    if facts.graph is None:
        return None
    experiment = facts.verification.experiment("ir_optim") if facts.verification else None
    return {**to_data(facts.graph), "ir_optim_experiment": to_data(experiment) if experiment else None}


def service_summary(facts: Facts) -> ServiceSummary:
    read_by_source = {setting.env_var for setting in facts.service_source.settings if setting.env_var}
    shown = {name: value for name, value in facts.service_process.environ.items()
             if name in SERVICE_ENVIRONMENT or name.startswith("FLAGS_") or name in read_by_source}
    return ServiceSummary(facts.service_origins, replace(facts.service_process, environ=shown), facts.service_source)


def fill_placeholders(code: str, values: dict[str, Any]) -> str:
    """``{name}`` in a rule's fix becomes the finding's evidence value, so the fix is concrete."""
    return PLACEHOLDER.sub(lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), code)


def host_summary(facts: Facts) -> dict[str, Any]:
    budget = cpu_budget(facts)
    paddle = facts.paddle
    return {
        "hostname": facts.host.hostname,
        "root": facts.root,
        "container": facts.container.runtime or ("yes" if facts.container.detected else "not detected"),
        "cpu_model": facts.cpu.model_name,
        "cpu_arch": facts.cpu.arch,
        "cpu_flags": [flag for flag in HEADLINE_FLAGS if flag in facts.cpu.flags],
        "cpu_budget": budget.cpus if budget else None,
        "cpu_budget_limited_by": budget.limited_by.what if budget else None,
        "cpu_budget_file": budget.limited_by.source if budget else None,
        "memory_limit_bytes": facts.memory.limit_bytes,
        "shm_bytes": facts.memory.shm_bytes,
        "paddle_status": paddle.status,
        "paddle_version": paddle.version,
        "paddle_distribution": paddle.distribution,
        "python": paddle.python,
        "gpu": gpu_summary(facts),
    }
