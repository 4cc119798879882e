"""Which process and which source the report read, in the words every report for people uses (the
text, Markdown and HTML reports)."""

from __future__ import annotations

from ..facts import ServiceProcessFacts, SourceFacts
from ..report import ServiceSummary
from ..vocabulary import ProcessStatus, SourceStatus
from .words import byte_size, counted


def process_line(process: ServiceProcessFacts) -> str | None:
    """The process read from /proc and why it was picked; None when none was read."""
    if process.status not in (ProcessStatus.PROBED, ProcessStatus.NO_PERMISSION):
        return None
    busy = f", {process.busy_threads} busy over {process.sample_s:g} s" if process.busy_threads is not None else ""
    threads = counted(process.threads, "thread") if process.threads is not None else "threads unknown"
    libraries = ", ".join(dict.fromkeys(f"{lib.kind} {lib.version}" if lib.version else lib.kind for lib in process.libraries))
    return (f"process {process.pid} ({process.chosen_because}): {process.interpreter or 'interpreter unknown'}"
            f"{' ' + process.script if process.script else ''}; {threads}{busy}; "
            f"RSS {byte_size(process.rss_bytes)}; libraries: {libraries or 'unknown'}")


def process_note(process: ServiceProcessFacts) -> str | None:
    """Why no process, or not all of it, was read."""
    return process.reason if process.reason and process.status != ProcessStatus.NOT_PROBED else None


def source_line(source: SourceFacts) -> str | None:
    if source.status != SourceStatus.READ:
        return None
    return (f"source: {counted(len(source.files), 'file')} read, {len(source.configs)} Config built "
            f"({', '.join(map(str, source.configs)) or 'none found'})")


def service_lines(service: ServiceSummary | None) -> list[str]:
    """The process and source lines, the notes on them, each setting with where it came from; empty
    when the report read neither and knows no setting."""
    if service is None:
        return []
    process, source = service.process, service.source
    if process.status == ProcessStatus.NOT_PROBED and source.status == SourceStatus.NOT_READ and not service.settings:
        return []
    line = process_line(process)
    lines = [line, *(f"{name}={value} ({process.environ_source})" for name, value in process.environ.items())] if line else []
    lines += [line for line in (process_note(process), source_line(source)) if line]
    lines += [f"{error.location}: {error.message}" for error in source.errors]
    lines += [f"{setting.name} = {'not known' if setting.value is None else repr(setting.value)} "
              f"({setting.origin}: {setting.detail})" for setting in service.settings]
    return lines
