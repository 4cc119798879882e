"""``paddle-doctor fleet``: reports from files and folders, or collected from the pods of a Kubernetes
selector, grouped and printed. Exit 0, 1 (a pod with problems at or above --fail-on, or not
diagnosed) or 2 (bad input: one line naming it; or stopped by a signal: the pods diagnosed before
it are reported, the report says exit 2). The command's options are click's, in ``doctor/cli.py``;
this module takes them typed (:class:`FleetOptions`)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..base import children
from ..base.vocabulary import Severity
from ..render.output import check_writable, write_output, write_rendered
from .reports import FleetError

if TYPE_CHECKING:
    from .grouping import FleetReport
    from .reports import PodReport, Unreached

DEFAULT_COMMAND = "paddle-doctor --json"
DEFAULT_POD_TIMEOUT, DEFAULT_PARALLEL = 180.0, 8


@dataclass(frozen=True)
class FleetOptions:
    """Where the reports come from: files and folders (``reports``), or the pods of ``selector`` (``kubernetes``)."""

    reports: tuple[str, ...] = ()
    kubernetes: bool = False
    namespace: str | None = None
    selector: str | None = None
    container: str | None = None
    exec_command: str = DEFAULT_COMMAND
    parallel: int = DEFAULT_PARALLEL
    pod_timeout: float = DEFAULT_POD_TIMEOUT
    kubeconfig: str | None = None
    kube_context: str | None = None
    save_dir: str | None = None
    fail_on: Severity = Severity.ERROR


def gather(options: FleetOptions) -> tuple[list[PodReport], list[Unreached]]:
    """The reports read or collected, and the pods not reached; FleetError (one line) for input the fleet cannot use."""
    from .reports import read_reports

    if options.kubernetes:
        if options.reports:
            raise FleetError("give either report files or --kubernetes, not both")
        return _collect(options)
    if not options.reports:
        raise FleetError("no reports given: name --json report files or folders, or use --kubernetes -l SELECTOR")
    with children.phase("reading the reports"):
        return read_reports(list(options.reports)), []


def report_and_write(gathered: tuple[list[PodReport], list[Unreached]], fail_on: Severity, output_format: str,
                     output_file: str | None, say: Callable[[str], None]) -> int:
    """The fleet report grouped and written; the exit code it says (2 when a stop signal came)."""
    from ..report.report import EXIT_DOCTOR_FAILED
    from .grouping import build_fleet

    with children.phase("writing the fleet report", deferred=True):
        report = build_fleet(*gathered, fail_on)
        if children.received():  # the report says the exit code the command ends with
            report.exit_code = EXIT_DOCTOR_FAILED
        _write(report, output_format, output_file, say)
    return report.exit_code


def _collect(options: FleetOptions) -> tuple[list[PodReport], list[Unreached]]:
    from .kubernetes import PodCollection, collect_pods

    if not options.selector:
        raise FleetError("--kubernetes needs -l SELECTOR (a label selector such as app=ocr)")
    try:
        command = shlex.split(options.exec_command)
    except ValueError as exc:
        raise FleetError(f"Invalid value for --command: {exc}: {options.exec_command!r}") from None
    if options.save_dir is not None:  # checked before any pod is reached: a write error later would lose the collection
        check_writable(os.path.join(options.save_dir, "pod.json"), FleetError, "collected reports")
    collection = PodCollection(namespace=options.namespace, selector=options.selector, container=options.container,
                               command=command, parallel=options.parallel, timeout_s=options.pod_timeout,
                               kubeconfig=options.kubeconfig, context=options.kube_context, save_dir=options.save_dir)
    return collect_pods(collection)


def _write(report: FleetReport, output_format: str, output_file: str | None, say: Callable[[str], None]) -> None:
    """Onto stdout, or into ``output_file`` with a line for ``say`` saying so and what the fleet found (as ``check`` does)."""
    from .render import render_fleet, render_fleet_text, verdict

    if output_format == "text":
        write_rendered(lambda console: render_fleet_text(report, console), output_file, "fleet report")
    else:
        write_output(render_fleet(output_format, report), output_file, "fleet report")
    if output_file:
        say(f"paddle-doctor: wrote the {output_format} fleet report to {output_file} ({verdict(report)})")
