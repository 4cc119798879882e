"""The service as it runs: its process (``--pid``, or the one found), its source (``--source``, or
the script the process runs, with the modules it imports) and its record of its predictors
(``paddle-doctor record``). Each reading that goes wrong is a line for ``say``, never an error:
the rest of the report follows."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Literal

from ..base.escape import terminal_line
from ..base.vocabulary import ProcessRole, ProcessStatus, RecordStatus
from ..facts import DeployedProcess, ServiceProcessFacts, SourceFacts
from ..facts.launcher import LauncherFacts, LauncherKnob
from ..facts.service_record import ServiceRecord
from ..probes.context import ProbeContext
from ..probes.process import ThreadSample, open_service_process, read_process
from ..source import read_source
from .config import ServiceConfigError
from .record import read_record

Say = Callable[[str], None]  # one line on stderr
PidChoice = int | Literal["auto", "none"]  # --pid: a process, the one found, or none


def pid_choice(text: str) -> PidChoice:
    """``--pid``: a process id, ``auto`` or ``none``; ValueError saying what was expected."""
    choice = text.strip().lower()
    if choice in ("auto", "none"):
        return "auto" if choice == "auto" else "none"
    if choice.isdigit() and int(choice) > 0:
        return int(choice)
    raise ValueError(f"{text!r} is not a process id; expected a number, auto or none")


@dataclass(frozen=True)
class ServiceReading:
    """The process, the source and the record, read before the other probes; the busy-thread
    ``sample`` of the process is waited out after them (:meth:`finished`)."""

    process: ServiceProcessFacts
    source: SourceFacts
    record: ServiceRecord
    sample: ThreadSample | None = None

    @property
    def environ(self) -> dict[str, str] | None:
        """The process's environment, where it was read."""
        return self.process.environ if self.process.environ_source else None

    def finished(self, say: Say) -> ServiceReading:
        """The reading with the busy-thread sample waited out; what went wrong with the process said in one line."""
        process = self.sample.finish(self.process) if self.sample is not None else self.process
        if process.reason and process.status != "not_probed":
            say(terminal_line(f"paddle-doctor: {process.reason}"))
        return replace(self, process=process, sample=None)

    def kept_record(self) -> ServiceRecord | None:
        """The record as the facts hold it: None where none was asked for."""
        return self.record if self.record.status != RecordStatus.NOT_ASKED else None


def read_service(ctx: ProbeContext, pid: PidChoice | None, source_paths: tuple[str, ...], say: Say) -> ServiceReading:
    """The service's process (``pid``; by default the one found, or none with --root), its source and its record."""
    choice = pid if pid is not None else ("auto" if ctx.is_live else "none")
    sample = None
    if choice == "none":
        process = ServiceProcessFacts(reason="not asked for (--pid none, or --root without --pid)")
    else:
        process, sample = open_service_process(ctx, None if choice == "auto" else choice)
    if process.status == ProcessStatus.SEVERAL:  # judging one of them, or none, on Paddle's defaults would be a guess
        raise ServiceChoiceError(process.reason or "several unrelated services have Paddle mapped; choose one with --pid")
    source = _read_source(ctx, process, list(source_paths), say)
    record = _read_record(ctx, process, say)
    return ServiceReading(_with_workers_records(ctx, process, record, say), source, record, sample)


class ServiceChoiceError(ServiceConfigError):
    """No --pid, and several unrelated services (different parents or programs) have Paddle mapped: the
    flags do not say which one is the service."""


def _with_workers_records(ctx: ProbeContext, process: ServiceProcessFacts, record: ServiceRecord, say: Say) -> ServiceProcessFacts:
    """The deployment's processes, each with its own record (``<its pid>-<its start ticks>.json``, read with
    the same trust as the service's): the predictors it holds and the math threads they run at once."""
    if len(process.processes) < 2:
        return replace(process, processes=[_with_record(deployed, record) for deployed in process.processes])
    processes = []
    for deployed in process.processes:
        own = record if deployed.pid == process.pid else read_record(ctx, read_process(ctx, deployed.pid))
        processes.append(_with_record(deployed, own))
    workers = [deployed for deployed in processes if deployed.role == ProcessRole.WORKER]
    recorded = [f"{deployed.pid} ({deployed.predictors} predictor{'s' if deployed.predictors != 1 else ''}, "
                f"{deployed.math_threads} math threads at once)" for deployed in workers if deployed.record]
    said = f"; the records of its workers: {', '.join(recorded)}" if recorded else "; no worker has a record"
    say(terminal_line(f"paddle-doctor: the service runs {process.deployment or 'several processes'}{said}"))
    return replace(process, processes=processes)


def _with_record(deployed: DeployedProcess, record: ServiceRecord) -> DeployedProcess:
    if not record.read:
        return replace(deployed, record_reason=record.reason)
    threads, _, how = record.threads_at_once()
    return replace(deployed, record=record.source, predictors=len(record.predictors), math_threads=threads,
                   math_threads_source=f"{record.source} ({how})")


def _read_source(ctx: ProbeContext, process: ServiceProcessFacts, paths: list[str], say: Say) -> SourceFacts:
    """The files given, or the file the process's launcher runs (a script, ``-m pkg``, ``gunicorn app:app``, a
    console script's entry point) with the launcher's configuration file (gunicorn's hooks build predictors);
    a file is followed into the modules it imports, found where the service's interpreter finds them (--pid)
    or this one (--source). The launcher and its settings go with the source."""
    environ = process.environ if process.environ_source else None
    launcher = process.launcher
    search: list[str] | None
    imports_from: str | None
    if not paths and process.script and os.access(ctx.contained(process.script), os.R_OK):
        paths, search, imports_from = _process_files(ctx, process, environ)
    else:
        search, imports_from = _given_search(ctx, paths)
    if paths and not process.script:
        launcher, paths = _folder_launcher(paths)
    unsaid = launcher.reason if launcher is not None and launcher.entry is None and process.status == ProcessStatus.PROBED else None
    source = read_source(paths, environ, search, launcher=launcher) if paths else SourceFacts(reason=unsaid or "no --source, and no script from --pid")
    if search is not None:
        source = replace(source, imports_from=imports_from)
    if launcher is not None:
        source = _with_launcher(source, launcher, process, unsaid if not paths else None, say)
    for error in source.errors:
        say(terminal_line(f"paddle-doctor: warning: {error.location}: {error.message}; the rest of the source and the report follow"))
    return source


def _process_files(ctx: ProbeContext, process: ServiceProcessFacts, environ: dict[str, str] | None
                   ) -> tuple[list[str], list[str], str]:
    """The file the process runs with its launcher's configuration files, where its interpreter finds modules, and its words."""
    from ..source.imports import search_path

    launcher = process.launcher
    files = [process.script] if process.script else []
    paths = list(dict.fromkeys(str(ctx.contained(file)) for file in files + list(launcher.config_files if launcher else [])))
    search = search_path(paths[0], process.interpreter, environ, lambda path: str(ctx.contained(path)))
    search = list(dict.fromkeys([str(ctx.contained(folder)) for folder in (launcher.search if launcher else [])] + search))
    return paths, search, f"the service interpreter's sys.path ({process.interpreter or 'interpreter unknown'})"


def _given_search(ctx: ProbeContext, paths: list[str]) -> tuple[list[str] | None, str | None]:
    """Where the modules the files given import are looked for (none where no file is given), and its words."""
    from ..source.imports import given_search_path

    if not any(os.path.isfile(path) for path in paths):
        return None, None
    return given_search_path(paths, ctx.is_live), (f"this interpreter's sys.path ({sys.executable}) and the folders given" if ctx.is_live
                                                  else "the folders given (with --root, not this interpreter's sys.path)")


def _folder_launcher(paths: list[str]) -> tuple[LauncherFacts | None, list[str]]:
    """The launcher the folders of the files given configure (their gunicorn.conf.py), and the files with its hooks."""
    from ..source.launchers import folder_launcher

    launcher = folder_launcher([path if os.path.isdir(path) else os.path.dirname(os.path.abspath(path)) for path in paths])
    hooks = [file for file in (launcher.config_files if launcher else []) if not _within(file, paths)]
    return launcher, paths + hooks  # its hooks (post_fork) are the service's code too


def _with_launcher(source: SourceFacts, launcher: LauncherFacts, process: ServiceProcessFacts, unsaid: str | None,
                   say: Say) -> SourceFacts:
    """The source with its launcher, checked against the live workers (a difference said); why no source, said."""
    checked, agrees = _against_live(launcher, process)
    if checked.live and not agrees:
        say(terminal_line(f"paddle-doctor: warning: {checked.live}"))
    if unsaid:
        say(terminal_line(f"paddle-doctor: no source from process {process.pid}: {unsaid}"))
    return replace(source, launcher=checked)


def _within(file: str, paths: list[str]) -> bool:
    """Whether ``file`` is one of ``paths`` or under a folder of them."""
    real = os.path.realpath(file)
    return any(real == os.path.realpath(path) or real.startswith(os.path.realpath(path) + os.sep) for path in paths)


def _against_live(launcher: LauncherFacts, process: ServiceProcessFacts) -> tuple[LauncherFacts, bool]:
    """The launcher's worker count against the live deployment's workers, where both are known, and whether they agree."""
    workers = launcher.setting(LauncherKnob.WORKERS)
    live = process.workers()
    if workers is None or workers.value is None or not live:
        return launcher, True
    count, workers_said = len(live), f"{workers.value} of {workers.detail}"
    if count == workers.value:
        said = f"the live deployment runs {count} worker{'s' if count != 1 else ''}, as {workers.detail} says"
    elif count == 1:
        said = (f"the process tree shows no other worker of its program ({process.deployment or 'one process'}): "
                f"the launcher's {workers_said} are judged")
    else:
        said = f"the live deployment runs {count} workers ({process.deployment or 'its processes'}), not the {workers_said}: the live workers are judged"
    return replace(launcher, live=said), count == workers.value


def _read_record(ctx: ProbeContext, process: ServiceProcessFacts, say: Say) -> ServiceRecord:
    """The picked process's record of its predictors, and where it was read from (or why not), in one line."""
    record = read_record(ctx, process)
    if record.read:
        count = len(record.predictors)
        say(f"paddle-doctor: read the record of process {process.pid} from {record.source}: "
            f"{count} predictor{'s' if count != 1 else ''}, {record.written()}")
    elif record.reason and record.status != "not_asked":
        say(f"paddle-doctor: {record.reason}; the rest of the report follows")
    return record
