"""From a command's typed options to finished Facts and the Report: the probes, the service, the
graph coverage, the measurements, the checks and their reconciling with the measurements, in
that order and in one place. What it says along the way goes through a :class:`Reporter` (lines on
stderr, the measuring progress), so nothing here knows the command line.

A stop signal while probing leaves nothing to report; while the graph is read or the model is
measured, the Facts say which of them did not finish and the rest of the report still comes out.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from .base import children
from .facts import Facts, ProbeIssue, ProcessFacts, ServiceProcessFacts
from .probes.context import ProbeContext
from .service import ServiceOptions
from .service.resolve import merge_origins, resolve_service

if TYPE_CHECKING:  # the healthcheck's lean mode imports this module: what only ``check`` needs is imported where it is used
    from .base.interpreter import Interpreter
    from .facts import ServiceConfig
    from .facts.baseline import BaselineFacts
    from .facts.graph import GraphFacts
    from .facts.service_record import PredictorMeasured, ServiceRecord
    from .facts.verification import VerificationFacts
    from .judge.policy import Policy
    from .judge.registry import Check
    from .judge.rules import Rulebook
    from .judge.weighing import Judged
    from .report.report import Report
    from .service.reading import PidChoice, Say, ServiceReading
    from .verify.measure import Progress
    from .verify.model import ModelRun

DEFAULT_PADDLE_TIMEOUT = 60.0
DEFAULT_GPU_TIMEOUT = 30.0
DEFAULT_BUDGET_S, DEFAULT_LOAD_BUDGET_S = 40.0, 90.0
PROBING, GRAPH, MEASURING = "probing the container", "reading the graph coverage", "measuring"  # the phases, as -v announces them
CHECKING = "running the checks"
SETTINGS = "reading the service settings"  # the lean mode's first phase


class MeasureError(ValueError):
    """``--measure`` with nothing in the service's record to measure; the message says what to do."""


@dataclass(frozen=True)
class ProbeOptions:
    """What the probing commands (``check``, ``facts``, ``baseline``, ``stamp-cache``) are asked:
    where to look, the service (its flags and --config in ``service``, its process and source),
    and what to measure. ``None`` where the option was not given."""

    root: str = "/"
    python: str | None = None
    no_paddle: bool = False
    paddle_timeout: float = DEFAULT_PADDLE_TIMEOUT
    gpu: bool | None = None
    gpu_timeout: float = DEFAULT_GPU_TIMEOUT
    pid: PidChoice | None = None
    source_paths: tuple[str, ...] = ()
    service: ServiceOptions = field(default_factory=ServiceOptions)
    shapes: tuple[str, ...] = ()
    measure: bool = False
    inputs: str | None = None
    budget: float | None = None
    min_effect: float = 0.03
    max_drift: float = 0.01


class Reporter(Protocol):
    """Where the pipeline says what it does: one line at a time, and the progress of each measurement."""

    def say(self, line: str) -> None: ...

    def measuring(self, budget_s: float) -> AbstractContextManager[Progress | None]:
        """Around one measurement of ``budget_s`` seconds: the callback its progress goes to, or None."""
        ...


def collect(options: ProbeOptions, reporter: Reporter, measure: bool = True) -> Facts:
    """Probe the container; with --model or --measure (and ``measure``), also measure the model on the real predictor.

    A ``model:`` in --config only describes the service (its TensorRT cache, say); measuring,
    which takes the --budget, happens when --model is asked for.
    """
    from .probes import NOT_PROBED, collect_facts
    from .service.reading import read_service
    from .service.record import against_paddle, model_origin, recorded_settings

    run = _flagged_run(options.service) if measure else None  # a path that names no model is refused first
    with children.phase(PROBING):  # a stop signal here leaves nothing to report
        ctx = ProbeContext(options.root)
        reading = read_service(ctx, options.pid, options.source_paths, reporter.say)
        interpreter, refused = chosen_interpreter(options, ctx, reading.process)
        if refused:
            reporter.say(f"paddle-doctor: {refused}")
        recorded = _recorded_runs(reading.record, options.inputs) if measure and options.measure and run is None else None
        first = recorded.first if recorded is not None else None
        # the record names the model to measure, and says so
        measured = [model_origin(reading.record, first, first=True)] if first is not None else []
        service, origins = resolve_service(options.service, reading.source, environ_source=reading.process.environ_source,
                                           recorded=recorded_settings(reading.record) + measured)
        if recorded is not None:
            recorded = _share_budget(recorded, measuring_budget(options, service.concurrency), reporter.say)
            first = recorded.first
        if recorded is not None and first is not None:
            run = recorded.runs[first.predictor]
        probe_gpu = ctx.is_live if options.gpu is None else options.gpu
        probed = collect_facts(ctx, service, interpreter, options.paddle_timeout, environ=reading.environ,
                               gpu_python=sys.executable if probe_gpu else None, gpu_timeout=options.gpu_timeout,
                               not_probed=refused or NOT_PROBED)
        reading = reading.finished(reporter.say)
        reading = replace(reading, record=against_paddle(reading.record, probed.paddle.version))
        facts = replace(probed, service_process=reading.process, service_source=reading.source, service_origins=origins,
                        service_record=reading.kept_record(), process=judged_process(probed.process, reading.process))
        if reading.record.reason and reading.record.read:
            reporter.say(f"paddle-doctor: warning: {reading.record.reason}")
    if run is None:
        return facts if recorded is None else _holding(facts, recorded.planned)
    if first is not None:
        options = replace(options, shapes=tuple(first.shapes), budget=first.budget_s)
    return _measured(facts, run, options, ctx, reading, recorded, reporter, interpreter)


def collect_lean(root: str, service: ServiceOptions, step: Callable[[str], None], base: ServiceConfig | None = None,
                 baseline: Callable[[ProbeContext], BaselineFacts | None] | None = None) -> Facts:
    """:func:`collect`'s lean mode, the healthcheck's, which runs every few seconds: the cheap probes alone (no
    Paddle, no GPU, no service process, source or record, nothing measured), the service as its flags and
    --config say it over ``base``, and what ``baseline`` read of a baseline. ``step`` is told each phase as it starts."""
    from .probes import collect_facts

    step(SETTINGS)
    declared, origins = resolve_service(service, base=base)
    ctx = ProbeContext(root)
    step(PROBING)
    probed = collect_facts(ctx, declared, None, 0)
    return replace(probed, service_origins=origins, baseline=baseline(ctx) if baseline is not None else None)


def chosen_interpreter(options: ProbeOptions, ctx: ProbeContext,
                       process: ServiceProcessFacts) -> tuple[Interpreter | None, str | None]:
    """The Python whose Paddle is probed and measured, and as whom: --python as the doctor (the user
    vouches for it), else the service's as the service's user; (None, why) where none is run, the
    reason None where nothing needs saying (--no-paddle, --root without --python)."""
    from .base.interpreter import Interpreter
    from .probes.process import service_interpreter

    if options.no_paddle:
        return None, None
    if options.python is not None:
        return Interpreter(options.python), None
    return service_interpreter(ctx, process) if ctx.is_live else (None, None)


def judged_process(doctor: ProcessFacts, service: ServiceProcessFacts) -> ProcessFacts:
    """The process whose CPU affinity the checks judge: the service's where /proc/PID gave it, else the doctor's own."""
    if not service.affinity_source:
        return doctor
    return replace(doctor, affinity=service.affinity, affinity_source=service.affinity_source)


def from_file(path: str, service: ServiceOptions) -> Facts:
    """Recorded facts (``check --facts``), with the service as the flags and --config given now say it."""
    from .facts.loading import load_facts

    facts = load_facts(path)
    declared, origins = resolve_service(service, base=facts.service)
    return replace(facts, service=declared, service_origins=merge_origins(facts.service_origins, origins))


def policy_for(path: str | None, ignore: tuple[str, ...], rulebook: Rulebook) -> Policy:
    """--settings, then --ignore; an ignored id or prefix, or a severity override, that names no rule is a PolicyError."""
    from .judge.policy import Policy, load_policy

    settings = load_policy(path) if path else Policy()
    settings.check_rule_ids(rulebook.rules, path)
    flags = Policy().ignoring(ignore)
    flags.check_rule_ids(rulebook.rules, None)
    return settings.ignoring(flags.ignore)


def report_of(facts: Facts, rulebook: Rulebook, settings: Policy) -> Report:
    """Every check run on the facts, each finding reconciled with its measurement, in one Report."""
    from .judge.registry import discover_checks
    from .judge.runner import run_checks
    from .report.report import EXIT_DOCTOR_FAILED, build_report

    with children.phase(CHECKING, deferred=True):
        checks, load_failures = discover_checks(rulebook)
        report = build_report(facts, run_checks(checks, facts, rulebook), rulebook, settings, load_failures)
    if children.received():  # stopped by a signal: the partial report says the exit code the doctor ends with
        report.exit_code = EXIT_DOCTOR_FAILED
    return report


def judged_lean(checks: list[Check], facts: Facts, rulebook: Rulebook, settings: Policy, step: Callable[[str], None],
                deadline: float | None = None) -> list[Judged]:
    """:func:`report_of`'s lean mode, the healthcheck's: the checks run on the facts and their findings judged by
    the settings, in the report's order, with no report built. ``step`` is told each check as it starts; ``deadline``
    (``time.monotonic()``): when the caller, run in a thread of its own, is given up on."""
    from .judge.runner import run_checks
    from .judge.weighing import judge

    results = run_checks(checks, facts, rulebook, lambda check: step(f"running check {check.name}"), deadline)
    return judge(results, rulebook, settings)[0]


def measuring_budget(options: ProbeOptions, concurrency: int | None) -> float:
    """The seconds --budget gives measuring, or its default (longer under concurrency, for the serving layouts)."""
    return options.budget or (DEFAULT_LOAD_BUDGET_S if (concurrency or 1) > 1 else DEFAULT_BUDGET_S)


def _flagged_run(service: ServiceOptions) -> ModelRun | None:
    from .verify.model import flagged_run

    return flagged_run(service)


@dataclass(frozen=True)
class RecordedRuns:
    """``--measure``: what the service's record gives to measure of each predictor (``planned``, the busiest first,
    each saying why not where it is not measured), and the run of the model of each predictor to measure, by predictor."""

    planned: list[PredictorMeasured]
    runs: dict[int, ModelRun]

    @property
    def first(self) -> PredictorMeasured | None:
        """The recorded predictor measured first (its measurement is the report's verification); None where none can be."""
        return next((plan for plan in self.planned if plan.predictor in self.runs and plan.not_measured is None), None)

    def after_first(self) -> list[PredictorMeasured]:
        """The recorded predictors measured after the first, in turn."""
        first = self.first
        return [plan for plan in self.planned if plan.predictor in self.runs and plan.not_measured is None and plan is not first]


def _measurable_run(plan: PredictorMeasured, inputs: str | None) -> tuple[PredictorMeasured, ModelRun | None]:
    """The plan and the run of a recorded predictor's model, its program read and its recorded shapes (or --inputs)
    checked against it; no run where it cannot be measured (no such model, a program that cannot be read, shapes its
    inputs do not take): the plan's ``not_measured`` says why, and the other predictors are measured."""
    from .verify.graph_probe import unreadable_program
    from .verify.model import ModelError, ModelRun

    if plan.not_measured is not None:
        return plan, None
    try:
        run = ModelRun(plan.model)
    except ModelError as exc:
        return replace(plan, not_measured=f"not measured: {exc}"), None
    try:
        run.planned_inputs(plan.shapes, 1, inputs_path=inputs)  # a batch size fills in only what the record lacks, and fits
    except ModelError as exc:
        return replace(plan, not_measured=f"not measured: {exc}", graph=unreadable_program(run) if run.program is None else None), None
    return plan, run


def _measured(facts: Facts, run: ModelRun, options: ProbeOptions, ctx: ProbeContext, reading: ServiceReading,
              recorded: RecordedRuns | None, reporter: Reporter, interpreter: Interpreter | None) -> Facts:
    """The facts with the graph coverage and the measurements of the model (and, with --measure, of each
    recorded predictor, in the record the facts hold), in workers of ``interpreter``."""
    from .verify.graph_probe import probe_graph

    graph: GraphFacts | None = None
    verification: VerificationFacts | None = None
    busy = None
    finished: dict[int, PredictorMeasured] = {}  # with --measure, each predictor measured after the first, as it was
    stopped: str | None = None
    try:
        with run:  # graph coverage first: it needs Paddle's log, which measuring turns off in the shared worker
            with children.phase(GRAPH):  # an unreadable program is a finding; the rest of the report still comes out
                graph = probe_graph(facts, run, interpreter)
            facts = replace(facts, graph=graph)
            if run.program is not None:
                with children.phase(MEASURING):  # an interrupted experiment is an error result; those before it stay
                    with _service_load(ctx, reading, options.measure) as load:
                        verification = _verify(facts, run, options, reporter, interpreter)
                        facts = replace(facts, verification=verification)
                        if recorded is not None:
                            for plan in _other_predictors_measured(facts, recorded, options, reporter, interpreter):
                                finished[plan.predictor] = plan
                    busy = load.busy_cpus
                    if busy is not None:
                        reporter.say(f"paddle-doctor: the service used {busy:g} CPUs while it was measured beside it")
    except children.Interrupted as stop:  # the report shows the phases that finished, and says which did not
        facts = replace(facts, issues=facts.issues + _not_finished(graph, verification, stop.signal_name, run.path))
        stopped = stop.signal_name
    if recorded is None:
        return facts if busy is None else _holding(facts, [], busy_cpus_while_measured=busy)
    waiting = {plan.predictor for plan in recorded.after_first()}
    plans = [finished.get(plan.predictor) or (replace(plan, not_measured=f"not measured: the doctor was stopped by {stopped}")
                                              if stopped and plan.predictor in waiting else plan) for plan in recorded.planned]
    return _holding(facts, plans, busy_cpus_while_measured=busy)


def _holding(facts: Facts, plans: list[PredictorMeasured], **more: Any) -> Facts:
    """The facts whose record holds what ``--measure`` made of each recorded predictor (``plans``), and ``more``."""
    record = facts.service_record
    return facts if record is None else replace(facts, service_record=replace(record, measured=plans, **more))


def _recorded_runs(record: ServiceRecord, inputs: str | None) -> RecordedRuns:
    """``--measure``: what the service's record gives to measure of each predictor, the first that can be measured
    first (it becomes the report's verification); a MeasureError when it gives nothing."""
    from .service.record import planned_measurements

    planned = planned_measurements(record) if record.read else []
    if all(plan.not_measured for plan in planned):
        why = record.reason or "it names no model in a file" if not record.read else "no predictor of it names a model in a file"
        raise MeasureError(f"--measure needs the service's record of a predictor and its model ({why}); "
                           "start the service with `paddle-doctor record -- CMD`, or give --model")
    checked = [_measurable_run(plan, inputs) for plan in planned]
    return RecordedRuns([plan for plan, _ in checked], {plan.predictor: run for plan, run in checked if run is not None})


def _share_budget(recorded: RecordedRuns, budget_s: float, say: Say) -> RecordedRuns:
    """The budget shared among the predictors that can be measured, and what will be measured, said."""
    from .base.escape import terminal_line
    from .service.record import share_budget

    shared = replace(recorded, planned=share_budget(recorded.planned, budget_s)) if recorded.first is not None else recorded
    first, planned = shared.first, shared.planned
    measured = [plan for plan in planned if plan.not_measured is None]
    each = f", {first.budget_s:g} s each, the busiest first" if first is not None else ""
    alike = sum(len(plan.stands_for) for plan in planned)
    kinds = f" (one per model and configuration: {len(planned)} distinct)" if alike else ""
    say(f"paddle-doctor: measuring {len(measured)} of the record's {len(planned) + alike} predictors{kinds}{each}")
    for plan in planned:
        if plan.not_measured:
            say(terminal_line(f"paddle-doctor: predictor {plan.predictor} ({plan.model}) {plan.not_measured}"))
    if first is not None:
        _say_measuring(first, say)
    return shared


def _say_measuring(plan: PredictorMeasured, say: Say) -> None:
    from .base.escape import terminal_line
    from .base.words import shape_options

    say(terminal_line(f"paddle-doctor: measuring predictor {plan.predictor}: {plan.model} at {shape_options(plan.shapes)}"))


NOT_ON_THE_CPU = "not measured: it runs on the GPU; the doctor measures predictors on the CPU"


def _other_predictors_measured(facts: Facts, recorded: RecordedRuns, options: ProbeOptions, reporter: Reporter,
                               interpreter: Interpreter | None) -> Iterator[PredictorMeasured]:
    """``--measure``: each recorded predictor after the first, finished in turn: its model's graph coverage, then its
    model at its recorded shapes, its recorded configuration the baseline, within its share of the budget. A stop
    signal ends them after the one it cut short, which says so."""
    from .judge.per_predictor import judged_predictors
    from .verify.graph_probe import probe_graph
    from .verify.model import ModelError

    views = {predictor.id: view for predictor, view in judged_predictors(_holding(facts, recorded.planned))}
    for plan in recorded.after_first():
        _say_measuring(plan, reporter.say)
        graph = None
        try:
            with recorded.runs[plan.predictor] as run:
                graph = probe_graph(views[plan.predictor], run, interpreter)  # its program was read (_measurable_run)
                verification = _verify(views[plan.predictor], run, replace(options, shapes=tuple(plan.shapes), budget=plan.budget_s),
                                       reporter, interpreter)
        except ModelError as exc:
            yield replace(plan, graph=graph, not_measured=f"not measured: {exc}")
            continue
        except children.Interrupted as stop:
            yield replace(plan, graph=graph, not_measured=f"not measured: the doctor was stopped by {stop.signal_name}")
            raise
        yield replace(plan, graph=graph, verification=verification, not_measured=None if verification is not None else NOT_ON_THE_CPU)


@dataclass
class _ServiceLoad:
    busy_cpus: float | None = None


@contextmanager
def _service_load(ctx: ProbeContext, reading: ServiceReading, measured: bool) -> Iterator[_ServiceLoad]:
    """With --measure: how busy the service was while its model was measured beside it (its CPU time over the wall time)."""
    from .probes.process import cpu_seconds

    process, load = reading.process, _ServiceLoad()
    before = cpu_seconds(ctx, process.pid) if measured and process.pid and reading.record.read else None
    started = time.monotonic()
    yield load
    after = cpu_seconds(ctx, process.pid) if before is not None and process.pid else None
    if before is not None and after is not None:
        load.busy_cpus = round((after - before) / max(time.monotonic() - started, 1e-3), 2)


def _verify(facts: Facts, run: ModelRun, options: ProbeOptions, reporter: Reporter,
            interpreter: Interpreter | None) -> VerificationFacts | None:
    from .verify.run import VerifyOptions, run_verification

    budget = measuring_budget(options, facts.service.concurrency)
    verify = VerifyOptions(shapes=list(options.shapes), inputs=options.inputs, budget_s=budget,
                           min_effect=options.min_effect, max_drift=options.max_drift)
    with reporter.measuring(budget) as progress:
        return run_verification(facts, run, verify, progress, interpreter)


def _not_finished(graph: GraphFacts | None, verification: VerificationFacts | None, signal_name: str,
                  model: str) -> list[ProbeIssue]:
    """Graph coverage or measuring, cut by a stop signal, as what the checks that need them are told."""
    issues = []
    if graph is None:
        issues.append(ProbeIssue("graph", model, f"not read: the doctor was stopped by {signal_name} before {GRAPH} finished"))
    if verification is None:
        issues.append(ProbeIssue("verification", model, f"not measured: the doctor was stopped by {signal_name} "
                                                        "before measuring finished"))
    return issues
