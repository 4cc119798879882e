"""``paddle-doctor fleet``: reports from files and folders, or collected from the pods of a Kubernetes
selector, grouped and printed. Exit 0, 1 (a pod with problems at or above --fail-on, or not
diagnosed) or 2 (bad input: one line naming it; or stopped by a signal: the pods diagnosed before
it are reported, the report says exit 2)."""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any

import click

from ..output import check_output, check_writable, write_output, write_rendered
from ..vocabulary import Severity
from .reports import FleetError

DEFAULT_COMMAND = "paddle-doctor --json"
DEFAULT_POD_TIMEOUT, DEFAULT_PARALLEL = 180.0, 8


@click.command("fleet")
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
    from .. import children
    from ..report import EXIT_DOCTOR_FAILED
    from .grouping import build_fleet
    from .reports import read_reports

    check_output(params["output_file"], "fleet report")
    output_format = params["output_format"] or ("json" if params["as_json"] else "text")
    if params["as_json"] and output_format != "json":
        raise click.UsageError(f"--json means --format json; it cannot be combined with --format {output_format}")
    try:
        if params["use_kubernetes"]:
            if params["reports"]:
                raise click.UsageError("give either report files or --kubernetes, not both")
            reports, unreached = _collect(params)
        else:
            if not params["reports"]:
                raise click.UsageError("no reports given: name --json report files or folders, or use --kubernetes -l SELECTOR")
            with children.phase("reading the reports"):
                reports, unreached = read_reports(list(params["reports"])), []
    except FleetError as exc:
        raise click.ClickException(str(exc)) from None
    with children.phase("writing the fleet report", deferred=True):
        report = build_fleet(reports, unreached, params["fail_on"])
        if children.received():  # the report says the exit code the command ends with
            report.exit_code = EXIT_DOCTOR_FAILED
        _write(report, output_format, params["output_file"])
    sys.exit(report.exit_code)


def _collect(params: dict[str, Any]):
    from .kubernetes import PodCollection, collect_pods

    if not params["selector"]:
        raise click.UsageError("--kubernetes needs -l SELECTOR (a label selector such as app=ocr)")
    try:
        command = shlex.split(params["exec_command"])
    except ValueError as exc:
        raise click.BadParameter(f"{exc}: {params['exec_command']!r}", param_hint="--command") from None
    if params["save_dir"] is not None:  # checked before any pod is reached: a write error later would lose the collection
        check_writable(os.path.join(params["save_dir"], "pod.json"), FleetError, "collected reports")
    collection = PodCollection(namespace=params["namespace"], selector=params["selector"], container=params["container"],
                               command=command, parallel=params["parallel"], timeout_s=params["pod_timeout"],
                               kubeconfig=params["kubeconfig"], context=params["kube_context"], save_dir=params["save_dir"])
    return collect_pods(collection)


def _write(report, output_format: str, output_file: str | None) -> None:
    """Onto stdout, or into ``output_file`` with a line on stderr saying so and what the fleet found (as ``check`` does)."""
    from .render import render_fleet, render_fleet_text, verdict

    if output_format == "text":
        write_rendered(lambda console: render_fleet_text(report, console), output_file, "fleet report")
    else:
        write_output(render_fleet(output_format, report), output_file, "fleet report")
    if output_file:
        click.echo(f"paddle-doctor: wrote the {output_format} fleet report to {output_file} ({verdict(report)})", err=True)
