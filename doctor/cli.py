"""The ``paddle-doctor`` command line.

Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 the doctor itself
failed or was used wrongly (one line on stderr; the traceback only with --debug).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from . import __version__
from .facts import FactsError
from .report import EXIT_DOCTOR_FAILED
from .rules import RulesError
from .service import ServiceConfigError
from .settings import SettingsError
from .verify.layouts import LoadError
from .verify.model import ModelError

DEFAULT_PADDLE_TIMEOUT = 60.0
DEFAULT_BUDGET_S, DEFAULT_LOAD_BUDGET_S = 40.0, 90.0
USER_ERRORS = (FactsError, RulesError, SettingsError, ServiceConfigError, ModelError, LoadError)
SERVICE_FLAGS = ("threads", "instances", "onednn", "precision", "concurrency", "layout")


class DefaultCommandGroup(click.Group):
    """``paddle-doctor [OPTIONS]`` means ``paddle-doctor check [OPTIONS]``."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or (args[0] not in self.commands and args[0] not in ("--help", "-h", "--version")):
            args = ["check", *args]
        return super().parse_args(ctx, args)


def probe_options(function):
    options = [
        click.option("--root", default="/", show_default=True, type=click.Path(file_okay=False),
                     help="Read /proc, /sys and files under this directory (a mounted container filesystem)."),
        click.option("--python", "python", default=None,
                     help="Interpreter whose Paddle to probe [default: this one; none with --root]."),
        click.option("--no-paddle", is_flag=True, help="Do not import Paddle in a child process."),
        click.option("--paddle-timeout", type=click.FloatRange(min=1), default=DEFAULT_PADDLE_TIMEOUT, show_default=True,
                     help="Seconds the Paddle import may take."),
        click.option("--config", "service_config", type=click.Path(dir_okay=False), default=None,
                     help="YAML file describing the service's Paddle Config (see doctor/service.py); flags override it."),
        click.option("--threads", type=click.IntRange(min=1), default=None,
                     help="Math threads per predictor the service sets (set_cpu_math_library_num_threads) [default: Paddle's 1]."),
        click.option("--instances", type=click.IntRange(min=1), default=None,
                     help="Predictor instances (processes or workers) the service runs in this container [default: 1]."),
        click.option("--concurrency", type=click.IntRange(min=1), default=None,
                     help="Concurrent requests the service serves: with --model, measure serving layouts under this load."),
        click.option("--layout", type=click.Choice(["processes", "clone", "pool", "lock", "shared"]), default=None,
                     help="How concurrent requests reach predictors (see doctor/service.py) "
                          "[default: processes with --instances > 1, else lock]."),
        click.option("--onednn/--no-onednn", default=None, help="Whether the service enables oneDNN [default: Paddle's default]."),
        click.option("--precision", type=click.Choice(["fp32", "bf16", "fp16", "int8"]), default=None,
                     help="Precision the service runs in [default: fp32]."),
        click.option("--model", default=None, type=click.Path(),
                     help="Model directory or file prefix: measure every fix on the real predictor."),
        click.option("--shape", "shapes", multiple=True, metavar="NAME:DIMS",
                     help="Concrete shape for a dynamic input, e.g. input_ids:1x128 (repeatable)."),
        click.option("--inputs", "inputs_npz", type=click.Path(dir_okay=False), default=None,
                     help="Real inputs: an .npz keyed by input name."),
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


def _service(params: dict[str, Any], base=None):
    """The service settings: recorded facts or ServiceFacts(), then --config, then flags."""
    from .facts import ServiceFacts
    from .service import load_service_config, validate_service

    service = base or ServiceFacts()
    if params.get("service_config"):
        service = load_service_config(params["service_config"])
    flags = [name for name in SERVICE_FLAGS if params.get(name) is not None]
    for name in flags:
        setattr(service, name, params[name])
    if flags:
        validate_service(service, f"{params.get('service_config') or 'the service'} with --{', --'.join(flags)}")
    return service


def _collect(params: dict[str, Any]):
    from .context import ProbeContext
    from .probes import collect_facts

    ctx = ProbeContext(params["root"])
    python = params["python"]
    if python is None and ctx.is_live:
        python = sys.executable
    if params["no_paddle"]:
        python = None
    service = _service(params)
    if params["model"]:
        service.model = params["model"]
    facts = collect_facts(ctx, service, python, params["paddle_timeout"])
    if service.model:
        facts.verification = _verify(facts, params)
    return facts


def _verify(facts, params: dict[str, Any]):
    from .verify.run import VerifyOptions, run_verification

    budget = params["budget"] or (DEFAULT_LOAD_BUDGET_S if (facts.service.concurrency or 1) > 1 else DEFAULT_BUDGET_S)
    options = VerifyOptions(
        model=facts.service.model, shapes=list(params["shapes"]), inputs_npz=params["inputs_npz"],
        budget_s=budget, min_effect=params["min_effect"], max_drift=params["max_drift"],
    )
    if not sys.stderr.isatty():
        return run_verification(facts, options)
    from rich.progress import Progress

    with Progress(transient=True, console=_stderr_console()) as bar:
        task = bar.add_task("measuring", total=1.0)
        return run_verification(facts, options, lambda what, done: bar.update(task, description=f"measuring {what}", completed=done))


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


@click.group(cls=DefaultCommandGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="paddle-doctor")
def cli() -> None:
    """Find why Paddle Inference is slow in this container.

    With no command, runs `check`.
    """


@cli.command()
@probe_options
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--facts", "facts_file", type=click.Path(dir_okay=False), default=None,
              help="Check these recorded facts (from `paddle-doctor facts`) instead of probing.")
@click.option("--fail-on", type=click.Choice(["error", "warning", "info"]), default=None,
              help="Exit 1 when a finding has at least this severity [default: error].")
@click.option("--ignore", multiple=True, metavar="ID", help="Leave out a rule id or id prefix (repeatable).")
@click.option("--settings", "settings_file", type=click.Path(dir_okay=False), default=None,
              help="YAML file with fail_on, ignore and per-rule severity overrides.")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--quiet", "-q", is_flag=True, help="Text report: show only findings that need attention.")
def check(**params: Any) -> None:
    """Probe this container, run every check and print the report."""
    from dataclasses import replace

    from .facts import load_facts
    from .registry import discover_checks
    from .report import build_report
    from .rules import load_rules
    from .runner import run_checks
    from .settings import Settings, load_settings

    rulebook = load_rules(params["rules_file"])
    settings = load_settings(params["settings_file"]) if params["settings_file"] else Settings()
    if params["fail_on"]:
        settings = replace(settings, fail_on=params["fail_on"])
    if params["ignore"]:
        settings = replace(settings, ignore=settings.ignore + tuple(params["ignore"]))
    if params["facts_file"]:
        facts = load_facts(params["facts_file"])
        facts.service = _service(params, facts.service)
    else:
        facts = _collect(params)
    checks, load_failures = discover_checks()
    report = build_report(facts, run_checks(checks, facts, rulebook), rulebook, settings, load_failures)
    if params["as_json"]:
        from .render.json_report import render_json

        click.echo(render_json(report), nl=False)
    else:
        from rich.console import Console

        from .render.text import render_text

        render_text(report, Console(), show_passed=not params["quiet"])
    sys.exit(report.exit_code)


@cli.command()
@probe_options
@click.option("--output", "-o", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write the facts to this file instead of stdout.")
def facts(**params: Any) -> None:
    """Probe this container and print the facts as JSON (secrets redacted), for `check --facts`."""
    text = _collect(params).to_json()
    if params["output"]:
        with open(params["output"], "w", encoding="utf-8") as handle:
            handle.write(text)
    else:
        click.echo(text, nl=False)


@cli.command("rules")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--markdown", is_flag=True, help="Print the table as Markdown (as in the README).")
@click.option("--debug", is_flag=True, hidden=True)
def list_rules(rules_file: str | None, markdown: bool, debug: bool) -> None:
    """List every rule: id, severity, whether a check evaluates it yet, title."""
    from rich.console import Console
    from rich.table import Table

    from .rules import load_rules

    if markdown:
        from .docs import rules_table_markdown

        click.echo(rules_table_markdown(load_rules(rules_file)), nl=False)
        return
    table = Table(show_lines=False)
    for column in ("id", "severity", "checked", "experiment", "title"):
        table.add_column(column)
    for rule in load_rules(rules_file).ordered():
        checked = {"stable": "yes", "planned": "not yet checked", "removed": "removed"}[rule.status]
        table.add_row(rule.id, rule.severity, checked, rule.experiment or "-", rule.title)
    Console().print(table)


@cli.command()
@click.argument("rule_id")
@click.option("--rules", "rules_file", type=click.Path(dir_okay=False), default=None, help="Use this rules file.")
@click.option("--debug", is_flag=True, hidden=True)
def explain(rule_id: str, rules_file: str | None, debug: bool) -> None:
    """Print one rule in full: symptom, cause, fix, docs, experiment."""
    from rich.console import Console

    from .rules import load_rules

    rulebook = load_rules(rules_file)
    rule = rulebook.rules.get(rule_id.upper())
    if rule is None:
        raise click.UsageError(f"unknown rule id {rule_id!r}; `paddle-doctor rules` lists them")
    console = Console()
    console.print(f"[bold]{rule.id}[/] {rule.slug} — {rule.title}")
    console.print(f"severity: {rule.severity}; status: {rule.status}; experiment: {rule.experiment or 'none'}")
    for label, value in (("Symptom", rule.symptom), ("Cause", rule.cause), ("Fix", rule.fix_text)):
        console.print(f"\n[bold]{label}[/]\n{value}", highlight=False)
    for change in rule.fix_changes:
        console.print(f"  [{change.kind}]", style="dim", end=" ")
        console.print(change.code, style="cyan", highlight=False, markup=False)
    if rule.docs:
        console.print("\n[bold]Docs[/]")
        for url in rule.docs:
            console.print(f"  {url}", highlight=False)


@cli.command()
@click.option("--out", type=click.Path(file_okay=False), default=None,
              help="Keep the demo model in this directory [default: a temporary one, removed afterwards].")
@click.option("--budget", type=click.FloatRange(min=2), default=40.0, show_default=True, help="Seconds of measurement.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
@click.option("--debug", is_flag=True, hidden=True)
def demo(out: str | None, budget: float, as_json: bool, debug: bool) -> None:
    """Build a small conv-bn-relu CNN with paddle.jit.save and diagnose a misconfigured service
    on it (8 threads, oneDNN off): every fix measured, a configuration recommended."""
    import shutil
    import tempfile

    from .modelzoo import build_model

    directory = out or tempfile.mkdtemp(prefix="paddle-doctor-demo-")
    try:
        click.echo(f"building the demo model in {directory} ...", err=True)
        build_model("cnn", "pir", directory)
        args = ["--model", directory, "--threads", "8", "--no-onednn", "--budget", str(budget)]
        check.main(args=args + (["--json"] if as_json else []), prog_name="paddle-doctor", standalone_mode=False)
    finally:
        if out is None:
            shutil.rmtree(directory, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    try:
        cli.main(args=args, prog_name="paddle-doctor", standalone_mode=False)
    except SystemExit:
        raise
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("paddle-doctor: aborted", err=True)
        sys.exit(EXIT_DOCTOR_FAILED)
    except click.UsageError as exc:
        if debug:
            raise
        click.echo(f"paddle-doctor: error: {exc.format_message()}", err=True)
        sys.exit(EXIT_DOCTOR_FAILED)
    except USER_ERRORS as exc:
        if debug:
            raise
        click.echo(f"paddle-doctor: error: {exc}", err=True)
        sys.exit(EXIT_DOCTOR_FAILED)
    except click.ClickException as exc:
        if debug:
            raise
        click.echo(f"paddle-doctor: error: {exc.format_message()}", err=True)
        sys.exit(EXIT_DOCTOR_FAILED)
    except Exception as exc:
        if debug:
            raise
        click.echo(f"paddle-doctor: internal error: {type(exc).__name__}: {exc} (run with --debug for the traceback)", err=True)
        sys.exit(EXIT_DOCTOR_FAILED)
    sys.exit(0)
