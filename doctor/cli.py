"""The ``paddle-doctor`` command line.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 the doctor itself
failed or was used wrongly (one line on stderr; the traceback only with --debug), or was stopped
by SIGTERM, SIGINT or SIGHUP in any phase: every child process is ended, the report of the phases
that finished is printed (the report says exit code 2), and one line names the signal, the phase
it stopped and what finished. A signal while the checks run or the report is written lets that
finish first; the line says so, and the exit code is the report's.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from . import __version__, children
from .baseline import BaselineError
from .cache_stamp import StampError
from .context import RootError, checked_root
from .demo import DemoFolderError
from .docs import DocsUrlError
from .facts import FactsError
from .fleet.command import fleet
from .render import FORMATS
from .render.escape import terminal_line
from .report import EXIT_DOCTOR_FAILED
from .rules import RulesError
from .serde import OutputError, check_writable, write_text_atomically
from .service import ServiceConfigError, SourceInputError
from .settings import SettingsError
from .verify.layouts import LoadError
from .verify.model import ModelError
from .vocabulary import Layout, Precision, Severity
from .wrappers import WrappersError

DEFAULT_PADDLE_TIMEOUT = 60.0
DEFAULT_GPU_TIMEOUT = 30.0
DEFAULT_BUDGET_S, DEFAULT_LOAD_BUDGET_S = 40.0, 90.0
PROBING, GRAPH, MEASURING = "probing the container", "reading the graph coverage", "measuring"  # the phases, as -v announces them
CHECKING, WRITING = "running the checks", "writing the report"
USER_ERRORS = (OutputError, FactsError, RulesError, SettingsError, ServiceConfigError, ModelError, BaselineError, LoadError,
               StampError, SourceInputError, DemoFolderError, DocsUrlError, WrappersError, RootError)


class DefaultCommandGroup(click.Group):
    """``paddle-doctor [OPTIONS]`` means ``paddle-doctor check [OPTIONS]``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        return super().parse_args(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """Each command with the whole first paragraph of its help, wrapped rather than cut."""
        rows = [(name, " ".join(command.help.split("\n\n")[0].split()) if command.help else "")
                for name, command in sorted(self.commands.items()) if not command.hidden]
        with formatter.section("Commands"):
            formatter.write_dl(rows)

    def format_epilog(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The options of ``check``, which runs when no command is named."""
        default = self.commands["check"]
        records = [record for param in default.get_params(ctx) if param.name != "help" and (record := param.get_help_record(ctx))]
        with formatter.section("Options of check (the command run when none is named)"):
            formatter.write_dl(records)


def probe_options(function):
    options = [
        click.option("--root", default="/", show_default=True, callback=lambda _ctx, _param, root: str(checked_root(root)),
                     help="Read /proc, /sys and files under this directory (a mounted container filesystem)."),
        click.option("--python", "python", default=None,
                     help="Interpreter whose Paddle to probe [default: this one; none with --root]."),
        click.option("--no-paddle", is_flag=True, help="Do not import Paddle in a child process."),
        click.option("--paddle-timeout", type=click.FloatRange(min=1), default=DEFAULT_PADDLE_TIMEOUT, show_default=True,
                     help="Seconds the Paddle import may take."),
        click.option("--gpu/--no-gpu", "gpu", default=None,
                     help="Ask NVML about the driver and GPUs, in a child process [default: on; off with --root]."),
        click.option("--gpu-timeout", type=click.FloatRange(min=1), default=DEFAULT_GPU_TIMEOUT, show_default=True,
                     help="Seconds NVML may take (a wedged driver hangs it)."),
        click.option("--config", "service_config", type=click.Path(dir_okay=False), default=None,
                     help="YAML file describing the service's Paddle Config (see doctor/service.py); flags override it."),
        click.option("--pid", "pid", default=None, envvar="PADDLE_DOCTOR_PID", metavar="PID|auto|none",
                     help="The service's process: read its interpreter, environment, libraries, threads and source from "
                          "/proc/PID [default: auto, the one process with Paddle loaded; none with --root or --facts]."),
        click.option("--source", "source_paths", multiple=True, type=click.Path(),
                     help="The service's Python file or folder, read (never run) for its Config settings "
                          "[default: the script --pid runs] (repeatable)."),
        click.option("--threads", type=click.IntRange(min=1), default=None,
                     help="Math threads per predictor the service sets (set_cpu_math_library_num_threads) [default: Paddle's 1]."),
        click.option("--instances", type=click.IntRange(min=1), default=None,
                     help="Predictor instances (processes or workers) the service runs in this container [default: 1]."),
        click.option("--concurrency", type=click.IntRange(min=1), default=None,
                     help="Concurrent requests the service serves: with --model, measure serving layouts under this load."),
        click.option("--layout", type=click.Choice(Layout.values()), default=None,
                     help="How concurrent requests reach predictors (see doctor/service.py) "
                          "[default: processes with --instances > 1, else lock]."),
        click.option("--onednn/--no-onednn", default=None, help="Whether the service enables oneDNN [default: Paddle's default]."),
        click.option("--precision", type=click.Choice(Precision.values()), default=None,
                     help="Precision the service runs in [default: fp32]."),
        click.option("--model", default=None, type=click.Path(),
                     help="Model directory or file prefix: measure every fix on the real predictor."),
        click.option("--shape", "shapes", multiple=True, metavar="NAME:DIMS",
                     help="Concrete shape for a dynamic input, e.g. x:1x3x48x320; repeat it for one input to measure "
                          "over a set of shapes (the sizes the service sees) [default: the opt shapes of a "
                          "shape_range_info.pbtxt in the model folder, else batch 1 and 224/128]."),
        click.option("--measure", is_flag=True, default=False,
                     help="With no --model: measure the busiest predictor of the service's record (paddle-doctor record), "
                          "its recorded configuration as the baseline, at its most frequent input shapes."),
        click.option("--inputs", "inputs", type=click.Path(), default=None,
                     help="Real inputs: an .npz keyed by input name, or a folder of .npz samples measured in turn."),
        click.option("--budget", type=click.FloatRange(min=2), default=None,
                     help=f"Seconds of measurement for all experiments together [default: {DEFAULT_BUDGET_S:g}; "
                          f"{DEFAULT_LOAD_BUDGET_S:g} with --concurrency, for the serving layouts]."),
        click.option("--min-effect", type=click.FloatRange(min=0.0, max=0.5), default=0.03, show_default=True,
                     help="Smallest speed change that counts (0.03 = 3%)."),
        click.option("--max-drift", type=click.FloatRange(min=0.0), default=0.01, show_default=True,
                     help="Largest max-abs output difference a precision change may cause and still be recommended."),
        click.option("--debug", is_flag=True, help="Show tracebacks for errors."),
    ]
    for option in reversed(options):
        function = option(function)
    return function


def _patient(params: dict[str, Any], ctx):
    """The service's process (--pid, or the one found) and its source (--source, or the process's script)."""
    from .facts import ServiceProcessFacts, SourceFacts
    from .probes.process import open_service_process
    from .source import read_source

    choice = (params.get("pid") or ("auto" if ctx.is_live else "none")).strip().lower()
    sample = None
    if choice == "none":
        process = ServiceProcessFacts(reason="not asked for (--pid none, or --root without --pid)")
    elif choice == "auto":
        process, sample = open_service_process(ctx, None)
    elif choice.isdigit() and int(choice) > 0:
        process, sample = open_service_process(ctx, int(choice))
    else:
        raise click.BadParameter(f"{params['pid']!r} is not a process id; expected a number, auto or none", param_hint="--pid")
    environ = process.environ if process.environ_source else None
    paths = list(params.get("source_paths") or ())
    search = None
    if not paths and process.script and os.access(ctx.path(process.script), os.R_OK):
        from .source.imports import search_path

        paths = [str(ctx.path(process.script))]  # and the modules it imports, where its interpreter finds them
        search = search_path(paths[0], process.interpreter, environ, lambda path: str(ctx.path(path)))
    source = read_source(paths, environ, search) if paths else SourceFacts(reason="no --source, and no script from --pid")
    for error in source.errors:
        click.echo(terminal_line(f"paddle-doctor: warning: {error.location}: {error.message}; the rest of the source and the report follow"),
                   err=True)
    return process, sample, source


def _service_record(ctx, process):
    """The picked process's record of its predictors, and where it was read from (or why not), in one line."""
    from .record.reading import read_record

    record = read_record(ctx, process)
    if record.read:
        count = len(record.predictors)
        click.echo(f"paddle-doctor: read the record of process {process.pid} from {record.source}: "
                   f"{count} predictor{'s' if count != 1 else ''}", err=True)
    elif record.reason and record.status != "not_asked":
        click.echo(f"paddle-doctor: {record.reason}; the rest of the report follows", err=True)
    return record


def _recorded_measurements(record, budget_s: float):
    """``--measure``: what the service's record gives to measure of each predictor, the first to measure
    first (it becomes the report's verification), or a usage error when it gives nothing."""
    from .record.reading import measurements_of

    planned = measurements_of(record, budget_s) if record.read else []
    first = next((plan for plan in planned if plan.not_measured is None), None)
    if first is None:
        why = record.reason or "it names no model in a file" if not record.read else "no predictor of it names a model in a file"
        raise click.UsageError(f"--measure needs the service's record of a predictor and its model ({why}); "
                               "start the service with `paddle-doctor record -- CMD`, or give --model")
    measured = sum(1 for plan in planned if plan.not_measured is None)
    click.echo(f"paddle-doctor: measuring {measured} of the record's {len(planned)} predictors, {first.budget_s:g} s each, "
               "the busiest first", err=True)
    for plan in planned:
        if plan.not_measured:
            click.echo(terminal_line(f"paddle-doctor: predictor {plan.predictor} ({plan.model}) {plan.not_measured}"), err=True)
    record.measured = planned
    return first


def _measuring(plan) -> None:
    from .render.words import shape_options

    click.echo(terminal_line(f"paddle-doctor: measuring predictor {plan.predictor}: {plan.model} at {shape_options(plan.shapes)}"),
               err=True)


def _measure_other_predictors(facts, record, first, params: dict[str, Any]) -> None:
    """``--measure``: each recorded predictor after the first, its model at its recorded shapes, its
    recorded configuration the baseline, within its share of the budget."""
    from .per_predictor import judged_predictors
    from .verify.model import ModelRun

    views = {predictor.id: view for predictor, view in judged_predictors(facts)}
    waiting = [plan for plan in record.measured if plan.not_measured is None and plan is not first]
    for number, plan in enumerate(waiting):
        _measuring(plan)
        try:
            with ModelRun(plan.model) as run:
                if run.program is None:
                    plan.not_measured = f"not measured: {run.unreadable}"
                    continue
                plan.verification = _verify(views[plan.predictor], run, {**params, "shapes": plan.shapes, "budget": plan.budget_s})
                if plan.verification is None:
                    plan.not_measured = "not measured: it runs on the GPU; the doctor measures predictors on the CPU"
        except ModelError as exc:
            plan.not_measured = f"not measured: {exc}"
        except children.Interrupted as stop:
            for left in waiting[number:]:
                left.not_measured = f"not measured: the doctor was stopped by {stop.signal_name}"
            raise


@contextlib.contextmanager
def _service_load(ctx, process, record, measured: bool):
    """With --measure: how busy the service was while its model was measured beside it, in the report and one line."""
    import time

    from .probes.process import cpu_seconds

    before = cpu_seconds(ctx, process.pid) if measured and process.pid and record.read else None
    started = time.monotonic()
    yield
    after = cpu_seconds(ctx, process.pid) if before is not None else None
    if after is not None:
        record.busy_cpus_while_measured = round((after - before) / max(time.monotonic() - started, 1e-3), 2)
        click.echo(f"paddle-doctor: the service used {record.busy_cpus_while_measured:g} CPUs while it was measured "
                   "beside it", err=True)


def _finish_process(process, sample) -> None:
    """The busy-thread sample, waited out after the other probes; then what went wrong with the process, in one line."""
    if sample is not None:
        sample.finish(process)
    if process.reason and process.status != "not_probed":
        click.echo(terminal_line(f"paddle-doctor: {process.reason}"), err=True)


def _collect(params: dict[str, Any], measure: bool = True):
    """Probe the container; with --model (and ``measure``), also measure the model on the real predictor.

    A ``model:`` in --config only describes the service (its TensorRT cache, say); measuring,
    which takes the --budget, happens when --model is asked for.
    """
    from .context import ProbeContext
    from .probes import collect_facts
    from .probes.process import service_interpreter
    from .record.reading import against_paddle, recorded_settings
    from .service_sources import attach_patient, service_from_options
    from .vocabulary import RecordStatus

    run = None
    if measure and params["model"]:  # a model path that names no model, or several, is refused before any work
        from .verify.model import ModelRun

        run = ModelRun(params["model"])
    with children.phase(PROBING):  # a stop signal here leaves nothing to report
        ctx = ProbeContext(params["root"])
        process, sample, source = _patient(params, ctx)
        python = params["python"]
        if python is None and ctx.is_live:
            python = service_interpreter(process) or sys.executable
        if params["no_paddle"]:
            python = None
        record = _service_record(ctx, process)
        service, origins = service_from_options(params, source=source, environ_source=process.environ_source,
                                                recorded=recorded_settings(record))
        first = None
        if measure and params.get("measure") and not params["model"]:
            from .verify.model import ModelRun

            first = _recorded_measurements(record, _budget(service, params))
            _measuring(first)
            params["model"], params["shapes"], params["budget"] = first.model, first.shapes, first.budget_s
            run = ModelRun(params["model"])
        if params["model"]:
            service.model = params["model"]
        probe_gpu = ctx.is_live if params["gpu"] is None else params["gpu"]
        facts = collect_facts(ctx, service, python, params["paddle_timeout"],
                              environ=process.environ if process.environ_source else None,
                              gpu_python=sys.executable if probe_gpu else None, gpu_timeout=params["gpu_timeout"])
        _finish_process(process, sample)
        attach_patient(facts, process, source, origins)
        facts.service_record = record if record.status != RecordStatus.NOT_ASKED else None
        against_paddle(record, facts.paddle.version)
        if record.reason and record.read:
            click.echo(f"paddle-doctor: warning: {record.reason}", err=True)
    if run is not None:
        from .graph.probe import probe_graph

        try:
            with run:  # graph coverage first: it needs Paddle's log, which measuring turns off in the shared worker
                with children.phase(GRAPH):  # an unreadable program is a finding; the rest of the report still comes out
                    facts.graph = probe_graph(facts, run)
                if run.program is not None:
                    with children.phase(MEASURING):  # an interrupted experiment is an error result; those before it stay
                        with _service_load(ctx, process, record, params.get("measure")):
                            facts.verification = _verify(facts, run, params)
                            if first is not None:
                                _measure_other_predictors(facts, record, first, params)
        except children.Interrupted as stop:  # the report shows the phases that finished, and says which did not
            _not_finished(facts, stop.signal_name, params["model"])
    return facts


def _not_finished(facts, signal_name: str, model: str) -> None:
    """Graph coverage or measuring, cut by a stop signal, as what the checks that need them are told."""
    from .facts import ProbeIssue

    if facts.graph is None:
        facts.issues.append(ProbeIssue("graph", model, f"not read: the doctor was stopped by {signal_name} before {GRAPH} finished"))
    if facts.verification is None:
        facts.issues.append(ProbeIssue("verification", model, f"not measured: the doctor was stopped by {signal_name} "
                                                              "before measuring finished"))


def _budget(service, params: dict[str, Any]) -> float:
    """The seconds --budget gives measuring, or its default (longer under concurrency, for the serving layouts)."""
    return params["budget"] or (DEFAULT_LOAD_BUDGET_S if (service.concurrency or 1) > 1 else DEFAULT_BUDGET_S)


def _verify(facts, run, params: dict[str, Any]):
    from .verify.run import VerifyOptions, run_verification

    budget = _budget(facts.service, params)
    options = VerifyOptions(
        shapes=list(params["shapes"]), inputs=params["inputs"],
        budget_s=budget, min_effect=params["min_effect"], max_drift=params["max_drift"],
    )
    if not params.get("progress", True) or not sys.stderr.isatty():
        return run_verification(facts, run, options)
    import time

    from rich.progress import BarColumn, Progress, TextColumn

    started = time.monotonic()
    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[left]}"),
                  transient=True, console=_stderr_console()) as bar:
        task = bar.add_task("measuring", total=budget, left=budget_left(0.0, budget))

        def show(what: str, done: float) -> None:
            spent = time.monotonic() - started
            bar.update(task, description=f"measuring {what} ({done:.0%})", completed=min(spent, budget),
                       left=budget_left(spent, budget))

        return run_verification(facts, run, options, show)


def budget_left(spent: float, budget: float) -> str:
    """What the progress display says of the --budget: the seconds left, or by how much it ran over."""
    left = budget - spent
    return f"{left:.0f} s of the {budget:g} s budget left" if left >= 0 else f"{-left:.0f} s over the {budget:g} s budget"


def _stderr_console():
    from .render.terminal import terminal_console

    return terminal_console(stderr=True)


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="paddle-doctor")
def cli() -> None:
    """Find why Paddle Inference is slow in this container.

    With no command, runs `check`.
    """


@cli.command()
@probe_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object (same as --format json).")
@click.option("--format", "output_format", type=click.Choice(FORMATS), default=None,
              help="Report format: text for people, markdown (CI job summaries) or html (one self-contained page with "
                   "charts); json, junit (CI test reports) or sarif (code scanning) for machines [default: text].")
@click.option("--output", "-o", "output_file", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the report to this file instead of stdout (missing folders are created).")
@click.option("--facts", "facts_file", type=click.Path(dir_okay=False), default=None,
              help="Check these recorded facts (from `paddle-doctor facts`) instead of probing.")
@click.option("--fail-on", type=click.Choice(Severity.values()), default=None,
              help="Exit 1 when a finding has at least this severity [default: error].")
@click.option("--ignore", multiple=True, metavar="ID", help="Leave out a rule id or id prefix (repeatable; an empty one leaves out nothing).")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="YAML file with fail_on, ignore and per-rule severity overrides.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--quiet", "-q", is_flag=True, help="Text report: only the summary (verdict, problems by measured gain, recommendation).")
@click.option("--verbose", "-v", is_flag=True, help="Text report: every finding in full, passes and skips too; and each phase named on stderr as it begins.")
def check(**params: Any) -> None:
    """Probe this container, run every check and print the report."""
    from dataclasses import replace

    from .facts.document import load_facts
    from .registry import discover_checks
    from .report import build_report
    from .rules import load_rules
    from .runner import run_checks
    from .service_sources import merge_origins, service_from_options

    _check_output(params["output_file"], "report")
    output_format = params["output_format"] or ("json" if params["as_json"] else "text")
    if params["as_json"] and output_format != "json":
        raise click.UsageError(f"--json means --format json; it cannot be combined with --format {output_format}")
    if params["verbose"]:
        children.announce_phases()
    rulebook = load_rules(params["rules_file"])
    settings = _settings(params, rulebook)
    if params["fail_on"]:
        settings = replace(settings, fail_on=params["fail_on"])
    if params["facts_file"]:
        facts = load_facts(params["facts_file"])
        facts.service, origins = service_from_options(params, facts.service)
        facts.service_origins = merge_origins(facts.service_origins, origins)
    else:
        params["progress"] = not params["as_json"] and params["output_format"] != "json"
        facts = _collect(params)
    with children.phase(CHECKING, deferred=True):
        checks, load_failures = discover_checks()
        report = build_report(facts, run_checks(checks, facts, rulebook), rulebook, settings, load_failures)
    if children.received():  # stopped by a signal: the partial report says the exit code the doctor ends with
        report.exit_code = EXIT_DOCTOR_FAILED
    with children.phase(WRITING, deferred=True):
        if output_format == "text":
            from .render.text import render_text

            detail = "summary" if params["quiet"] else "full" if params["verbose"] else "default"
            write_rendered(lambda console: render_text(report, console, detail), params["output_file"], "report")
        else:
            from .docs import docs_page
            from .render import render_document

            _write_output(render_document(output_format, report, rulebook, docs_page(settings.docs_url)),
                          params["output_file"], "report")
    if params["output_file"]:
        counts = report.summary.counts
        click.echo(f"paddle-doctor: wrote the {output_format} report to {params['output_file']} "
                   f"({counts['fail']} failed, {counts['warn']} warnings, {counts['error']} errors; "
                   f"{report.summary.problems} at or above --fail-on {report.fail_on}: exit {report.exit_code})", err=True)
    sys.exit(report.exit_code)


def _settings(params: dict[str, Any], rulebook):
    """--settings, then --ignore; an ignored id or prefix, or a severity override, that names no rule is a usage error."""
    from .settings import Settings, load_settings

    path = params["settings_file"]
    settings = load_settings(path) if path else Settings()
    settings.check_rule_ids(rulebook.rules, path)
    flags = Settings().ignoring(params.get("ignore", ()))
    flags.check_rule_ids(rulebook.rules, None)
    return settings.ignoring(flags.ignore)


def _check_output(path: str | None, kind: str) -> None:
    """Before any work: the file to write the ``kind`` to can be written (its missing folders are created)."""
    if path is not None:
        check_writable(path, OutputError, kind)


def write_rendered(render: Callable[[Any], None], path: str | None, kind: str) -> None:
    """Text for people, drawn by ``render`` on a rich Console: into ``path`` (atomically, 100
    columns, no colour) or onto the terminal."""
    if path:
        from rich.console import Console

        from .render.terminal import strip_trailing_spaces

        console = Console(file=io.StringIO(), width=100, color_system=None)
        render(console)
        _write_output(strip_trailing_spaces(console.file.getvalue()), path, kind)
    else:
        from .render.terminal import terminal_console

        _write_stdout(lambda: render(terminal_console()), kind)


def _write_output(text: str, path: str | None, kind: str) -> None:
    if path:
        write_text_atomically(path, text, OutputError, kind)
    else:
        _write_stdout(lambda: click.echo(text.encode("utf-8"), nl=False), kind)  # machine formats: UTF-8 whatever the locale


def _write_stdout(write: Callable[[], None], kind: str) -> None:
    """Run ``write``; a stdout that cannot take it (a full disk, a closed pipe) is an OutputError."""
    try:
        write()
        sys.stdout.flush()
    except OSError as exc:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is still buffered goes nowhere at exit
        raise OutputError(f"stdout: cannot write the {kind} ({exc.strerror or exc})") from None


@cli.command()
@probe_options
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the facts to this file instead of stdout (missing folders are created).")
def facts(**params: Any) -> None:
    """Probe this container and print the facts as JSON (secrets redacted), for `check --facts`."""
    _check_output(params["output"], "facts")
    facts = _collect(params)
    with children.phase("writing the facts", deferred=True):
        _write_output(facts.to_json(), params["output"], "facts")


@cli.command("rules")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--markdown", is_flag=True, help="Print the table as Markdown (as in the README), with each rule's experiment.")
@click.option("--debug", is_flag=True, hidden=True)
def list_rules(rules_file: str | None, markdown: bool, debug: bool) -> None:
    """List every rule by area: id, severity, title (and the experiment, on a terminal of 120 columns or more)."""
    from .docs import rules_listing, rules_table_markdown
    from .render.terminal import terminal_width
    from .rules import load_rules

    rulebook = load_rules(rules_file)
    click.echo(rules_table_markdown(rulebook) if markdown else rules_listing(rulebook, terminal_width()), nl=False)


@cli.command()
@click.argument("rule_id")
@click.option("--instances", type=click.IntRange(min=1), default=1, show_default=True,
              help="Predictor processes in this container, for the threads each may run.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--debug", is_flag=True, hidden=True)
def explain(rule_id: str, instances: int, rules_file: str | None, debug: bool) -> None:
    """Print one rule in full: symptom, cause, fix (filled in for this machine where it can be), docs."""
    from .docs import docs_link, docs_page
    from .explain import machine_values, needs_machine, render_explain
    from .render.terminal import terminal_console
    from .rules import load_rules

    rulebook = load_rules(rules_file)
    rule = rulebook.rules.get(rule_id.upper())
    if rule is None:
        raise click.UsageError(f"unknown rule id {rule_id!r}; `paddle-doctor rules` lists them")
    known = machine_values(instances) if needs_machine(rule) else None
    render_explain(rule, known, [docs_link(rule.id, docs_page()), *rule.docs], terminal_console())


@cli.command("baseline")
@probe_options
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False), help="Write the baseline (JSON) to this file (missing folders are created).")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="YAML file with fail_on, ignore and severity overrides the healthcheck will apply.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
def baseline(**params: Any) -> None:
    """Record what must stay true in this container, for `healthcheck --baseline`.

    Run it in the entrypoint after the warm-up (at image build it would record the builder's): it
    records the CPU budget against the threads, the memory limit, throttling counters, the Paddle
    build, a GPU service's GPUs and driver, and the TensorRT / optimisation cache, and pins the fast
    checks the healthcheck runs.
    """
    from .baseline import record_baseline, write_baseline
    from .context import ProbeContext
    from .rules import load_rules

    check_writable(params["out"], BaselineError, "baseline")
    rulebook = load_rules(params["rules_file"])
    settings = _settings(params, rulebook)
    facts = _collect(params, measure=False)
    with children.phase("recording the baseline"):  # written atomically: cut, the old one stays
        record, load_failures = record_baseline(facts, ProbeContext(params["root"]), rulebook, settings)
        write_baseline(record, params["out"])
    for failure in load_failures:
        click.echo(f"paddle-doctor: warning: check not pinned, it could not be loaded: {failure.entry_point}: {failure.reason}", err=True)
    click.echo(f"paddle-doctor: baseline written to {params['out']}: {record.describe(facts)}")


@cli.command("stamp-cache")
@probe_options
@click.option("--force", is_flag=True, help="Overwrite a stamp that names another TensorRT version or GPU.")
def stamp_cache(**params: Any) -> None:
    """Record beside the TensorRT engines which TensorRT and GPU built them (read by PD-TRT-004).

    Run it where the engines were just built: on the target GPU, after the warm-up that builds
    them, with the service's --config. It writes paddle-doctor-cache.json into the engine cache.
    """
    from .cache_stamp import write_stamp
    from .context import ProbeContext

    facts = _collect(params, measure=False)
    with children.phase("stamping the cache"):
        path, stamp, written = write_stamp(ProbeContext(params["root"]), facts, params["force"])
    described = ", ".join(f"{key} {value}" for key, value in sorted(stamp.items()))
    click.echo(f"paddle-doctor: {path} {'written' if written else 'already says so'}: {described}")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True}, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def healthcheck(args: tuple[str, ...]) -> None:
    """Cheap probe for HEALTHCHECK / exec probes: exit 0 healthy, 1 unhealthy (--help for options)."""
    from .healthcheck import main as healthcheck_main

    healthcheck_main(list(args))


@cli.command()
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Build and keep the demo model in this folder (new, empty, or holding a demo model) "
                   "[default: ~/.cache/paddle-doctor/demo, or $XDG_CACHE_HOME/paddle-doctor/demo].")
@click.option("--budget", type=click.FloatRange(min=2), default=40.0, show_default=True, help="Seconds of measurement.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--debug", is_flag=True, hidden=True)
def demo(out: str | None, budget: float, as_json: bool, debug: bool) -> None:
    """Build a small conv-bn-relu CNN with paddle.jit.save and diagnose a misconfigured service
    on it (8 threads, oneDNN off): every fix measured, a configuration recommended.

    The model is kept where the recommended snippet loads it from; the last line says where."""
    import shlex

    from .demo import demo_folder
    from .modelzoo import build_model

    directory = demo_folder(out)
    click.echo(f"building the demo model in {directory} ...", err=True)
    build_model("cnn", "pir", directory)
    args = ["--model", str(directory), "--pid", "none", "--threads", "8", "--no-onednn", "--budget", str(budget)]
    try:
        check.main(args=args + (["--json"] if as_json else []), prog_name="paddle-doctor", standalone_mode=False)
    finally:
        click.echo(f"paddle-doctor demo: the demo model is kept in {directory}, where the recommended snippet loads it "
                   f"(--out DIR keeps it elsewhere; rm -r {shlex.quote(str(directory))} removes it)", err=True)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True}, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def record(args: tuple[str, ...]) -> None:
    """Run a service with its predictors recorded: record [--dir FOLDER] -- CMD ARGS (--help for more)."""
    from .record.command import main as record_main

    record_main(list(args))


cli.add_command(fleet)


def main(argv: list[str] | None = None) -> None:
    """The command line, with SIGTERM, SIGINT and SIGHUP handled: see the module's docstring."""
    args = sys.argv[1:] if argv is None else argv
    with children.handling_stop_signals():
        try:
            _run(args)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else EXIT_DOCTOR_FAILED if exc.code else 0
            if not children.stopped():
                _exit(code)
        except children.Interrupted:
            code = None
    stop = children.stopped()
    exit_code = code if stop.deferred and code is not None else EXIT_DOCTOR_FAILED
    click.echo(f"paddle-doctor: {stop.line(reported=code is not None, exit_code=exit_code)}", err=True)
    _exit(exit_code)


def _exit(code: int) -> None:
    """sys.exit; or, where a thread is left in a wait that never ends (timebox), the exit without the
    interpreter's shutdown, which that thread, waking during it, would abort."""
    from .timebox import left_behind

    if left_behind():
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    sys.exit(code)


def _run(args: list[str]) -> None:
    try:
        cli.main(args=args, prog_name="paddle-doctor", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        _fail("aborted")
    except Exception as exc:
        if "--debug" in args:  # the traceback as well, and the same exit code
            import traceback

            traceback.print_exc()
        if isinstance(exc, click.ClickException):
            _fail(f"error: {exc.format_message()}")
        if isinstance(exc, USER_ERRORS):
            _fail(f"error: {exc}")
        _fail(f"internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)")
    sys.exit(0)


def _fail(message: str) -> None:
    """One line on stderr and exit 2: the doctor itself failed or was used wrongly."""
    click.echo(terminal_line(f"paddle-doctor: {message}"), err=True)
    sys.exit(EXIT_DOCTOR_FAILED)
