"""The ``paddle-doctor`` command line.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 the doctor itself
failed or was used wrongly (one line on stderr; the traceback only with --debug), or was stopped
by SIGTERM, SIGINT or SIGHUP in any phase: every child process is ended, the report of the phases
that finished is printed (the report says exit code 2), and one line names the signal, the phase
it stopped and what finished. A signal while the checks run or the report is written lets that
finish first; the line says so, and the exit code is the report's.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, NoReturn

import click

from . import __version__
from .base import children
from .base.escape import terminal_line
from .base.vocabulary import Layout, Precision, Severity
from .demo import DemoFolderError
from .facts import FactsError
from .facts.knobs import knob
from .fix.text import EditRefused, FixRefused
from .fleet.gathering import DEFAULT_COMMAND, DEFAULT_PARALLEL, DEFAULT_POD_TIMEOUT
from .fleet.reports import FleetError
from .health.baselines import BaselineError
from .health.cache_stamp import StampError
from .judge.known_issues import KnownIssuesError, known_issues_from
from .judge.policy import PolicyError
from .judge.rule_docs import DocsUrlError
from .judge.rules import RulesError
from .judge.wrappers import WrappersError
from .pipeline import (
    DEFAULT_BUDGET_S,
    DEFAULT_GPU_TIMEOUT,
    DEFAULT_LOAD_BUDGET_S,
    DEFAULT_PADDLE_TIMEOUT,
    MeasureError,
    ProbeOptions,
    collect,
    from_file,
    policy_for,
    report_of,
)
from .probes.context import RootError, checked_root
from .render import FORMATS
from .render.output import OutputError, check_output, check_writable, write_output, write_rendered
from .report.report import EXIT_DOCTOR_FAILED
from .service import ServiceConfigError, ServiceOptions
from .service.reading import PidChoice, pid_choice
from .source import SourceInputError
from .verify.layouts import LoadError
from .verify.model import ModelError

if TYPE_CHECKING:
    from .verify.measure import Progress

WRITING = "writing the report"
USER_ERRORS = (OutputError, FactsError, RulesError, PolicyError, ServiceConfigError, ModelError, BaselineError, LoadError,
               StampError, SourceInputError, DemoFolderError, DocsUrlError, WrappersError, RootError, MeasureError, FleetError,
               KnownIssuesError, FixRefused, EditRefused)


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
                     help="YAML file describing the service's Paddle Config (see doctor/facts/service_config.py); flags override it."),
        click.option("--pid", "pid", default=None, envvar="PADDLE_DOCTOR_PID", metavar="PID|auto|none",
                     help="The service's process: read its interpreter, environment, libraries, threads and source from "
                          "/proc/PID [default: auto, the one process with Paddle loaded; none with --root or --facts]."),
        click.option("--source", "source_paths", multiple=True, type=click.Path(),
                     help="The service's Python file or folder, read (never run) for its Config settings "
                          "[default: the script --pid runs] (repeatable)."),
        click.option("--threads", type=click.IntRange(min=1), default=None,
                     help=f"Math threads per predictor the service sets ({knob('threads').setter}) [default: Paddle's 1]."),
        click.option("--instances", type=click.IntRange(min=1), default=None,
                     help="Predictor instances (processes or workers) the service runs in this container [default: 1]."),
        click.option("--concurrency", type=click.IntRange(min=1), default=None,
                     help="Concurrent requests the service serves: with --model, measure serving layouts under this load."),
        click.option("--layout", type=click.Choice(Layout.values()), default=None,
                     help="How concurrent requests reach predictors (see doctor/facts/service_config.py) "
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




def known_issues_option(function):
    """``--known-issues FILE``: a team's own known problems beside the built-in ones, validated before the command
    runs (a bad file is one line and exit 2); the command's checks and experiments read both."""
    import functools

    @functools.wraps(function)
    def run(*args: Any, known_issues_file: str | None = None, **params: Any) -> Any:
        with known_issues_from(known_issues_file):
            return function(*args, **params)

    return click.option("--known-issues", "known_issues_file", type=click.Path(dir_okay=False), default=None,
                        help="YAML file of known problems in the form of known_issues.yaml (see docs/known_issues.md), "
                             "matched beside the built-in ones.")(run)


def _probe_options(params: dict[str, Any]) -> ProbeOptions:
    """The probing options click parsed, typed."""
    return ProbeOptions(
        root=params["root"], python=params["python"], no_paddle=params["no_paddle"], paddle_timeout=params["paddle_timeout"],
        gpu=params["gpu"], gpu_timeout=params["gpu_timeout"], pid=_pid(params["pid"]), source_paths=tuple(params["source_paths"]),
        service=_service_options(params), shapes=tuple(params["shapes"]), measure=params["measure"],
        inputs=params["inputs"], budget=params["budget"], min_effect=params["min_effect"], max_drift=params["max_drift"])


def _service_options(params: dict[str, Any]) -> ServiceOptions:
    """--config and the service flags, typed."""
    return ServiceOptions(
        config=params["service_config"], model=params["model"], threads=params["threads"], instances=params["instances"], onednn=params["onednn"],
        precision=Precision(params["precision"]) if params["precision"] else None, concurrency=params["concurrency"],
        layout=Layout(params["layout"]) if params["layout"] else None)


def _pid(text: str | None) -> PidChoice | None:
    if not text:
        return None
    try:
        return pid_choice(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--pid") from None


class Terminal:
    """The pipeline's lines on stderr, and a progress bar while measuring when stderr is a terminal and ``progress``."""

    def __init__(self, progress: bool = True):
        self.progress = progress

    def say(self, line: str) -> None:
        click.echo(line, err=True)

    @contextmanager
    def measuring(self, budget_s: float) -> Iterator[Progress | None]:
        if not self.progress or not sys.stderr.isatty():
            yield None
            return
        from rich.progress import BarColumn, TextColumn
        from rich.progress import Progress as Bar

        from .render.terminal import terminal_console

        started = time.monotonic()
        with Bar(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.fields[left]}"),
                 transient=True, console=terminal_console(stderr=True)) as bar:
            task = bar.add_task("measuring", total=budget_s, left=budget_left(0.0, budget_s))

            def show(what: str, done: float) -> None:
                spent = time.monotonic() - started
                bar.update(task, description=f"measuring {what} ({done:.0%})", completed=min(spent, budget_s),
                           left=budget_left(spent, budget_s))

            yield show


def budget_left(spent: float, budget: float) -> str:
    """What the progress display says of the --budget: the seconds left, or by how much it ran over."""
    left = budget - spent
    return f"{left:.0f} s of the {budget:g} s budget left" if left >= 0 else f"{-left:.0f} s over the {budget:g} s budget"



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
@known_issues_option
def check(**params: Any) -> None:
    """Probe this container, run every check and print the report."""
    from dataclasses import replace

    from .judge.rules import load_rules

    check_output(params["output_file"], "report")
    output_format = params["output_format"] or ("json" if params["as_json"] else "text")
    if params["as_json"] and output_format != "json":
        raise click.UsageError(f"--json means --format json; it cannot be combined with --format {output_format}")
    if params["verbose"]:
        children.announce_phases()
    rulebook = load_rules(params["rules_file"])
    settings = policy_for(params["settings_file"], params["ignore"], rulebook)
    if params["fail_on"]:
        settings = replace(settings, fail_on=params["fail_on"])
    if params["facts_file"]:
        facts = from_file(params["facts_file"], _service_options(params))
    else:
        facts = collect(_probe_options(params), Terminal(progress=output_format != "json"))
    report = report_of(facts, rulebook, settings)
    with children.phase(WRITING, deferred=True):
        if output_format == "text":
            from .render.text import render_text

            detail = "summary" if params["quiet"] else "full" if params["verbose"] else "default"
            write_rendered(lambda console: render_text(report, console, detail), params["output_file"], "report")
        else:
            from .judge.rule_docs import docs_page
            from .render import render_document

            write_output(render_document(output_format, report, rulebook, docs_page(settings.docs_url)),
                         params["output_file"], "report")
    if params["output_file"]:
        counts = report.summary.counts
        click.echo(f"paddle-doctor: wrote the {output_format} report to {params['output_file']} "
                   f"({counts['fail']} failed, {counts['warn']} warnings, {counts['error']} errors; "
                   f"{report.summary.problems} at or above --fail-on {report.fail_on}: exit {report.exit_code})", err=True)
    sys.exit(report.exit_code)


@cli.command()
@probe_options
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the facts to this file instead of stdout (missing folders are created).")
@known_issues_option
def facts(**params: Any) -> None:
    """Probe this container and print the facts as JSON (secrets redacted), for `check --facts`."""
    check_output(params["output"], "facts")
    facts = collect(_probe_options(params), Terminal())
    with children.phase("writing the facts", deferred=True):
        write_output(facts.to_json(), params["output"], "facts")


@cli.command("rules")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--markdown", is_flag=True, help="Print the table as Markdown (as at the top of docs/rules.md), with each rule's experiment.")
@click.option("--debug", is_flag=True, hidden=True)
@known_issues_option
def list_rules(rules_file: str | None, markdown: bool, debug: bool) -> None:
    """List every rule by area: id, severity, title (and the experiment, on a terminal of 120 columns or more);
    then the known problems, under the rule each is reported under."""
    from .judge.known_issues import active_book
    from .judge.rule_docs import known_issues_listing, rules_listing, rules_table_markdown
    from .judge.rules import load_rules
    from .render.terminal import terminal_width

    rulebook = load_rules(rules_file)
    if markdown:
        click.echo(rules_table_markdown(rulebook), nl=False)
        return
    width = terminal_width()
    click.echo(rules_listing(rulebook, width) + known_issues_listing(active_book(), width), nl=False)


@cli.command("fix")
@probe_options
@click.option("--facts", "facts_file", type=click.Path(dir_okay=False), default=None,
              help="Fix from these recorded facts (from `paddle-doctor facts`) instead of probing.")
@click.option("--diff", "show_diff", is_flag=True, default=True, help="Print the changes as a unified diff (the default).")
@click.option("--write", "write", is_flag=True, help="Apply the changes to the files, all or none.")
@click.option("--unsafe-fixes", "unsafe", is_flag=True,
              help="Include the fixes that may change the service's outputs or behaviour (rules.yaml's fix.safety).")
@click.option("--select", "select", multiple=True, metavar="ID", help="Only the fixes of this rule id or prefix (repeatable).")
@click.option("--ignore", "ignore", multiple=True, metavar="ID", help="Leave out the fixes of this rule id or prefix (repeatable).")
@click.option("--dockerfile", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The service's Dockerfile: a setting read from an environment variable is set in its ENV.")
@click.option("--manifest", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The service's Kubernetes manifest: a setting read from an environment variable is set in its env.")
@click.option("--container", default=None, help="With --manifest: the container to edit [default: the only one].")
@click.option("--verify", "verify", is_flag=True,
              help="With --write and --model: measure the configuration the patched files give against the original.")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="YAML file with fail_on, ignore and per-rule severity overrides.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@known_issues_option
def fix_command(**params: Any) -> None:
    """Apply the measured fixes to the service's own files: print them as a diff, or --write them.

    Each change is made where its setting comes from: the service's Config calls, a wrapper's keyword or
    YAML key, its --config file, its Dockerfile or manifest; a flag, or a wrapper's installed code, is
    never edited. Exit 0 when nothing is left to change, 1 when changes are shown or some could not be
    made, 2 when the fix was refused (a file changed since it was read, two fixes on one line).
    """
    from .fix.run import run_fix

    sys.exit(run_fix(params, _probe_options(params), Terminal(progress=True)))


@cli.command()
@click.argument("rule_id")
@click.option("--instances", type=click.IntRange(min=1), default=1, show_default=True,
              help="Predictor processes in this container, for the threads each may run.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--debug", is_flag=True, hidden=True)
@known_issues_option
def explain(rule_id: str, instances: int, rules_file: str | None, debug: bool) -> None:
    """Print one rule in full: symptom, cause, fix (filled in for this machine where it can be), docs; or one
    known problem (KI-001): what it affects and when, its symptom, fix, workaround and threads."""
    from .judge.known_issues import active_book
    from .judge.rule_docs import docs_link, docs_page
    from .judge.rules import load_rules
    from .render.explain import machine_values, needs_machine, render_explain, render_known_issue
    from .render.terminal import terminal_console

    rulebook = load_rules(rules_file)
    rule = rulebook.rules.get(rule_id.upper())
    entry = active_book().get(rule_id) if rule is None else None
    if entry is not None:
        render_known_issue(entry, rulebook.rules.get(entry.rule), terminal_console())
        return
    if rule is None:
        raise click.UsageError(f"unknown rule or known problem id {rule_id!r}; `paddle-doctor rules` lists them")
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
    from .health.baselines import record_baseline, write_baseline
    from .judge.rules import load_rules
    from .probes.context import ProbeContext

    check_writable(params["out"], BaselineError, "baseline")
    rulebook = load_rules(params["rules_file"])
    settings = policy_for(params["settings_file"], (), rulebook)
    facts = collect(_probe_options(params), Terminal(), measure=False)
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
    from .health.cache_stamp import write_stamp
    from .probes.context import ProbeContext

    facts = collect(_probe_options(params), Terminal(), measure=False)
    with children.phase("stamping the cache"):
        path, stamp, written = write_stamp(ProbeContext(params["root"]), facts, params["force"])
    described = ", ".join(f"{key} {value}" for key, value in sorted(stamp.items()))
    click.echo(f"paddle-doctor: {path} {'written' if written else 'already says so'}: {described}")


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True}, add_help_option=False)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def healthcheck(args: tuple[str, ...]) -> None:
    """Cheap probe for HEALTHCHECK / exec probes: exit 0 healthy, 1 unhealthy (--help for options)."""
    from .health.healthcheck import main as healthcheck_main

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
    from .verify.modelzoo import build_model

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
    from .recorder.launch import main as record_main

    record_main(list(args))


@cli.command("fleet")
@click.argument("reports", nargs=-1, type=click.Path())
@click.option("--kubernetes", "use_kubernetes", is_flag=True,
              help="Collect the reports by exec'ing the doctor in each pod matching -n/-l (needs paddle-doctor[k8s]).")
@click.option("--namespace", "-n", default=None, help="With --kubernetes: the pods' namespace [default: the context's, else 'default'].")
@click.option("--selector", "-l", default=None, help="With --kubernetes: label selector of the pods, e.g. app=ocr.")
@click.option("--container", "-c", default=None, help="With --kubernetes: the container to exec in [default: each pod's first].")
@click.option("--command", "exec_command", default=DEFAULT_COMMAND, show_default=True,
              help="With --kubernetes: what to run in each pod; it must print a --json report (add --config FILE for the service).")
@click.option("--parallel", type=click.IntRange(min=1, max=64), default=DEFAULT_PARALLEL, show_default=True,
              help="With --kubernetes: pods diagnosed at the same time.")
@click.option("--pod-timeout", type=click.FloatRange(min=1), default=DEFAULT_POD_TIMEOUT, show_default=True,
              help="With --kubernetes: seconds one pod's doctor may take.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False), default=None,
              help="With --kubernetes: kubeconfig file [default: in-cluster service account, else $KUBECONFIG or ~/.kube/config].")
@click.option("--context", "kube_context", default=None, help="With --kubernetes: kubeconfig context.")
@click.option("--save", "save_dir", type=click.Path(file_okay=False), default=None,
              help="With --kubernetes: also write each collected report to DIR/<pod>.json (read them again with `fleet DIR`).")
@click.option("--json", "as_json", is_flag=True, help="Print the fleet report as one JSON object (same as --format json).")
@click.option("--format", "output_format", type=click.Choice(["text", "json", "markdown", "html"]), default=None,
              help="text for people, json for machines, markdown (tables) or html (one self-contained page) [default: text].")
@click.option("--output", "-o", "output_file", type=click.Path(dir_okay=False), default=None,
              help="Write the fleet report to this file instead of stdout (missing folders are created).")
@click.option("--fail-on", type=click.Choice(Severity.values()), default="error", show_default=True,
              help="Exit 1 when a pod has a finding of at least this severity.")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
def fleet(**params: Any) -> None:
    """Group the doctor's reports of many pods by findings and facts, and name the pods that differ.

    REPORTS are `paddle-doctor --json` files, or folders of them (one file per pod, named after it).
    """
    from .fleet.gathering import FleetOptions, gather, report_and_write

    check_output(params["output_file"], "fleet report")
    output_format = params["output_format"] or ("json" if params["as_json"] else "text")
    if params["as_json"] and output_format != "json":
        raise click.UsageError(f"--json means --format json; it cannot be combined with --format {output_format}")
    options = FleetOptions(
        reports=tuple(params["reports"]), kubernetes=params["use_kubernetes"], namespace=params["namespace"],
        selector=params["selector"], container=params["container"], exec_command=params["exec_command"],
        parallel=params["parallel"], pod_timeout=params["pod_timeout"], kubeconfig=params["kubeconfig"],
        kube_context=params["kube_context"], save_dir=params["save_dir"], fail_on=Severity(params["fail_on"]))
    gathered = gather(options)
    sys.exit(report_and_write(gathered, options.fail_on, output_format, params["output_file"], Terminal().say))


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
    assert stop is not None  # a run that ends here was stopped by a signal
    exit_code = code if stop.deferred and code is not None else EXIT_DOCTOR_FAILED
    click.echo(f"paddle-doctor: {stop.line(reported=code is not None, exit_code=exit_code)}", err=True)
    _exit(exit_code)


def _exit(code: int) -> NoReturn:
    """sys.exit; or, where a thread is left in a wait that never ends (timebox), the exit without the
    interpreter's shutdown, which that thread, waking during it, would abort."""
    from .base.timebox import left_behind

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


def _fail(message: str) -> NoReturn:
    """One line on stderr and exit 2: the doctor itself failed or was used wrongly."""
    click.echo(terminal_line(f"paddle-doctor: {message}"), err=True)
    sys.exit(EXIT_DOCTOR_FAILED)
