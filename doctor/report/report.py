"""The report: one model built from Facts, check results, rules and settings. Renderers only render it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from .. import __version__
from ..base.quoting import quoted
from ..base.schema import Count, ExitCode, RuleId, Url, UrlReference, version_metadata
from ..base.vocabulary import Experiment, FixSafety, PaddleStatus, Recorder, Severity
from ..facts import DeployedProcess, Facts, ServiceProcessFacts, SettingOrigin, SourceFacts, SourceLocation
from ..facts.budget import advised_threads, cpu_budget
from ..facts.recorded import RecordedPredictor
from ..facts.verification import ExperimentResult, Recommendation
from ..judge.findings import Finding, Status, Verdict
from ..judge.gpu_support import summary as gpu_summary
from ..judge.policy import Policy
from ..judge.registry import LoadFailure
from ..judge.rule_docs import docs_link, docs_page
from ..judge.rules import AREAS, PLACEHOLDER, Change, Rule, Rulebook
from ..judge.runner import CheckResult
from ..judge.weighing import Judged, counts_against, judge
from ..judge.wrapper_fix import WrapperFix, in_wrapper_terms
from ..service.sources import source_predictors
from .measured import (
    GraphSummary,
    PredictorMeasurement,
    VerificationSummary,
    predictor_measurement,
    summarize_verification,
)
from .profile import Profile, build_profile

SCHEMA_VERSION = 2
RECOMMEND = Experiment.RECOMMEND  # the experiment of the rule that reports the recommended configuration
EXIT_OK, EXIT_FINDINGS, EXIT_DOCTOR_FAILED = 0, 1, 2
SERVICE_ENVIRONMENT = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "CUDA_VISIBLE_DEVICES",
                       "KMP_AFFINITY", "OMP_PROC_BIND", "LD_LIBRARY_PATH")
HEADLINE_FLAGS = ("avx", "avx2", "avx512f", "avx512_vnni", "avx512_bf16", "amx_bf16")


@dataclass
class Fix:
    """A finding's fix: the rule's text and changes with the finding's evidence filled in, and what
    applying it may change (the rule's ``fix.safety``). Where a known wrapper built the predictor,
    ``wrapper`` names it and its own settings lead ``changes``."""

    text: str
    changes: list[Change]
    safety: FixSafety
    wrapper: WrapperFix | None = None


@dataclass
class ReportFinding:
    """A finding with its rule: what the report shows for one rule; ``measured`` is the candidate of
    its experiment that its verdict rests on."""

    rule_id: RuleId
    slug: str
    title: str
    area: str
    check: str
    status: Status
    severity: Severity
    message: str
    observed: str | None
    expected: str | None
    evidence: dict[str, Any]
    symptom: str
    cause: str
    fix: Fix
    docs: list[Url]
    docs_link: UrlReference | None
    explain: str
    experiment: str | None
    verification: ExperimentResult | Recommendation | None = None
    verdict: Verdict | None = None
    locations: list[SourceLocation] = field(default_factory=list)
    measured: str | None = None

    @property
    def recommendation(self) -> Recommendation | None:
        """The recommendation, for the finding whose experiment is the search for it (``recommend``)."""
        found = self.verification
        return found if self.experiment == RECOMMEND and isinstance(found, Recommendation) else None

    @property
    def experiment_result(self) -> ExperimentResult | None:
        """What the finding's own experiment measured, for every other finding."""
        found = self.verification
        return found if self.experiment != RECOMMEND and isinstance(found, ExperimentResult) else None


@dataclass
class Tool:
    name: Literal["paddle-doctor"]
    version: str


@dataclass
class HostSummary:
    """The host in a few lines: CPU (only the headline flags), CPU budget and what sets it, memory,
    container, Paddle and the GPU in words (None when nothing about one was probed or found)."""

    hostname: str | None
    root: str
    container: str
    cpu_model: str | None
    cpu_arch: str | None
    cpu_flags: list[str]
    cpu_budget: float | None
    cpu_budget_limited_by: str | None
    cpu_budget_file: str | None
    memory_limit_bytes: Count | None
    shm_bytes: Count | None
    paddle_status: PaddleStatus
    paddle_version: str | None
    paddle_distribution: str | None
    python: str | None
    gpu: str | None


@dataclass
class CheckError:
    """A check that could not be loaded: its entry point and why."""

    entry_point: str
    reason: str


@dataclass
class Summary:
    """Findings counted by status, how many count against the exit code, and the rules ignored."""

    counts: dict[str, Count]
    problems: Count
    ignored: list[RuleId]


@dataclass
class ServiceSummary:
    """The service's settings with where each came from, its process (only the environment
    variables that steer Paddle's threads and devices, or that the source reads) and its source;
    ``predictors`` what the service recorded of each predictor it built (``paddle-doctor record``),
    or, where nothing was recorded, each Config its source builds (built by ``source``),
    ``record`` the file that was read, or why none was, ``recorder`` what noted its runs, and
    ``busy_cpus_while_measured`` the CPUs the service used while ``--measure`` measured its model
    beside it; ``measured`` each predictor as ``--measure`` measured it, busiest first; ``processes`` the
    deployment's master and workers, each with its threads, memory and record."""

    settings: list[SettingOrigin]
    process: ServiceProcessFacts
    source: SourceFacts
    predictors: list[RecordedPredictor] = field(default_factory=list)
    record: str | None = None
    busy_cpus_while_measured: float | None = None
    measured: list[PredictorMeasurement] = field(default_factory=list)
    recorder: Recorder | None = None
    processes: list[DeployedProcess] = field(default_factory=list)


@dataclass
class Report:
    """Everything a renderer needs: findings with their rules, check errors, summary and exit code."""

    schema_version: int = field(metadata=version_metadata(SCHEMA_VERSION))
    tool: Tool
    host: HostSummary
    fail_on: Severity
    findings: list[ReportFinding]
    check_errors: list[CheckError]
    summary: Summary
    exit_code: ExitCode = field(default=EXIT_OK, metadata={"schema": {"description": "What the doctor exits with: 0 nothing at or above fail_on, 1 findings at or above it, 2 stopped by SIGTERM, SIGINT or SIGHUP (the report is partial)"}})
    areas: dict[str, str] = field(default_factory=lambda: dict(AREAS))
    verification: VerificationSummary | None = None
    graph: GraphSummary | None = None
    profile: Profile | None = None
    service: ServiceSummary | None = None


def build_report(
    facts: Facts,
    results: list[CheckResult],
    rulebook: Rulebook,
    settings: Policy,
    load_failures: Sequence[LoadFailure] = (),
) -> Report:
    judged, ignored = judge(results, rulebook, settings)
    page = docs_page(settings.docs_url)
    findings = [_report_finding(one, page, facts) for one in judged]
    counts = {status.value: sum(1 for f in findings if f.status == status) for status in Status}
    problems = [f for f in findings if counts_against(f, settings.fail_on)]
    check_errors = [CheckError(failure.entry_point, failure.reason) for failure in load_failures]
    return Report(
        schema_version=SCHEMA_VERSION,
        tool=Tool("paddle-doctor", __version__),
        host=host_summary(facts),
        fail_on=settings.fail_on,
        findings=findings,
        check_errors=check_errors,
        summary=Summary(counts=counts, problems=len(problems), ignored=ignored),
        exit_code=EXIT_FINDINGS if problems or check_errors else EXIT_OK,
        verification=verification_summary(facts),
        graph=graph_summary(facts),
        profile=build_profile(facts),
        service=service_summary(facts),
    )


def _report_finding(judged: Judged, page: str, facts: Facts) -> ReportFinding:
    finding, rule = judged.finding, judged.rule
    return ReportFinding(
        rule_id=finding.rule_id,
        slug=rule.slug if rule else "unknown-rule",
        title=rule.title if rule else f"unknown rule {finding.rule_id}",
        area=judged.area,
        check=judged.check,
        status=finding.status,
        severity=judged.severity,
        message=finding.message,
        observed=finding.observed,
        expected=finding.expected,
        evidence=dict(finding.evidence),
        symptom=rule.symptom if rule else "",
        cause=rule.cause if rule else "",
        fix=_fix(rule, finding, facts) if rule else Fix("", [], FixSafety.UNSAFE),
        docs=list(rule.docs) if rule else [],
        docs_link=docs_link(rule.id, page) if rule else None,
        explain=rule.explain_command if rule else "",
        experiment=rule.experiment if rule else None,
        verification=_measured(facts, rule.experiment) if rule and rule.experiment else None,
        verdict=finding.verdict,
        locations=list(finding.locations),
        measured=finding.measured,
    )


def _fix(rule: Rule, finding: Finding, facts: Facts) -> Fix:
    """The rule's fix with the finding's values filled in (and the report's own, ``report_wide``), in the
    terms of the wrapper that built the predictor where one did."""
    values = {**finding.evidence, **report_wide(facts)}
    changes = [replace(change, code=fill_placeholders(change.code, values, change.kind)) for change in rule.fix_changes]
    text, changes, wrapper = in_wrapper_terms(facts, finding, rule.fix_text, changes)
    return Fix(text, changes, rule.fix_safety, wrapper)


def _measured(facts: Facts, experiment: str) -> ExperimentResult | Recommendation | None:
    """The measurement that confirms a rule's fix, attached to its finding."""
    if facts.verification is None:
        return None
    if experiment == RECOMMEND:
        return facts.verification.recommendation
    return facts.verification.experiment(experiment)


def verification_summary(facts: Facts) -> VerificationSummary | None:
    if facts.verification is None:
        return None
    return summarize_verification(facts.verification)


def graph_summary(facts: Facts) -> GraphSummary | None:
    if facts.graph is None:
        return None
    experiment = facts.verification.experiment("ir_optim") if facts.verification else None
    return GraphSummary(**vars(facts.graph), ir_optim_experiment=experiment)


def service_summary(facts: Facts) -> ServiceSummary:
    read_by_source = {setting.env_var for setting in facts.service_source.settings if setting.env_var}
    shown = {name: value for name, value in facts.service_process.environ.items()
             if name in SERVICE_ENVIRONMENT or name.startswith("FLAGS_") or name in read_by_source}
    record = facts.service_record
    said = record.line() if record is not None else None
    recorded = list(record.predictors) if record is not None else []
    return ServiceSummary(facts.service_origins, replace(facts.service_process, environ=shown, processes=[]), facts.service_source,
                          recorded or source_predictors(facts.service_source), said,
                          record.busy_cpus_while_measured if record is not None else None,
                          _measured_predictors(facts), record.recorder if record is not None and record.read else None,
                          list(facts.service_process.processes))


def _measured_predictors(facts: Facts) -> list[PredictorMeasurement]:
    """Each recorded predictor as --measure measured it; the first measured one is the report's verification."""
    record = facts.service_record
    if record is None or not record.measured:
        return []
    first = record.measured_first()
    return [predictor_measurement(plan, facts.verification if plan is first else plan.verification) for plan in record.measured]


def report_wide(facts: Facts) -> dict[str, int]:
    """The placeholders every fix of the report fills the same way (``rules.REPORT_WIDE``): the one thread count it advises."""
    threads = advised_threads(facts)
    return {"threads_per_instance": threads} if threads is not None else {}


def fill_placeholders(code: str, values: Mapping[str, Any], kind: str) -> str:
    """``{name}`` in a rule's fix becomes the finding's evidence value, quoted for the change's kind
    (a shell word, a Python literal, ...), so the fix is concrete and pastes as that value."""
    return PLACEHOLDER.sub(lambda m: quoted(values[m.group(1)], kind) if m.group(1) in values else m.group(0), code)


def host_summary(facts: Facts) -> HostSummary:
    budget = cpu_budget(facts)
    paddle = facts.paddle
    return HostSummary(
        hostname=facts.host.hostname,
        root=facts.root,
        container=facts.container.runtime or ("yes" if facts.container.detected else "not detected"),
        cpu_model=facts.cpu.model_name,
        cpu_arch=facts.cpu.arch,
        cpu_flags=[flag for flag in HEADLINE_FLAGS if flag in facts.cpu.flags],
        cpu_budget=budget.cpus if budget else None,
        cpu_budget_limited_by=budget.limited_by.what if budget else None,
        cpu_budget_file=budget.limited_by.source if budget else None,
        memory_limit_bytes=facts.memory.limit_bytes,
        shm_bytes=facts.memory.shm_bytes,
        paddle_status=paddle.status,
        paddle_version=paddle.version,
        paddle_distribution=paddle.distribution,
        python=paddle.python,
        gpu=gpu_summary(facts),
    )
