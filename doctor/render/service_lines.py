"""Which process and which source the report read, in the words every report for people uses (the
text, Markdown and HTML reports)."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING

from ..base.vocabulary import BuiltBy, Origin, ProcessStatus, Recorder, SourceStatus
from ..base.words import byte_size, counted, shape_options
from ..facts import DeployedProcess, ServiceProcessFacts, SettingOrigin, SourceFacts
from ..facts.recorded import RecordedPredictor
from ..judge.verdict_words import speed_words
from ..report.report import ServiceSummary

if TYPE_CHECKING:
    from ..report.measured import PredictorMeasurement


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


def deployment_lines(service: ServiceSummary) -> list[str]:
    """A deployment of several processes: how it was found, then a line per process; none for a process alone."""
    if len(service.processes) < 2:
        return []
    found = [f"deployment: {service.process.deployment}"] if service.process.deployment else []
    return [cut_line(line) for line in found + [deployed_line(process) for process in service.processes]]


def deployed_line(process: DeployedProcess) -> str:
    """``worker 8: 5 threads (4 busy), RSS 900.0 MiB; 1 predictor, 4 math threads at once (its record ...)``."""
    threads = counted(process.threads, "thread") if process.threads is not None else "threads unknown"
    busy = f" ({process.busy_threads} busy)" if process.busy_threads is not None else ""
    paddle = {True: "", False: ", no Paddle mapped", None: ", Paddle mapped: not known"}[process.maps_paddle]
    held = (f"; {counted(process.predictors, 'predictor')}, {process.math_threads} math threads at once"
            if process.predictors is not None and process.math_threads is not None else "")
    unsaid = not process.record_reason or process.maps_paddle is False  # a process without Paddle records nothing
    record = f" (record {process.record})" if process.record else ("" if unsaid else f"; {process.record_reason}")
    return f"{process.role.value} {process.pid}: {threads}{busy}, RSS {byte_size(process.rss_bytes)}{paddle}{held}{record}"


def process_note(process: ServiceProcessFacts) -> str | None:
    """Why no process, or not all of it, was read."""
    return process.reason if process.reason and process.status != ProcessStatus.NOT_PROBED else None


def source_line(source: SourceFacts) -> str | None:
    if source.status != SourceStatus.READ:
        return None
    followed = (f" ({len(source.imported)} of them imported, looked for on {source.imports_from}"
                + (f"; {source.imports_left_out} more past the bounds" if source.imports_left_out else "") + ")"
                if source.imports_from and (source.imported or source.imports_left_out) else "")
    return (f"source: {counted(len(source.files), 'file')} read{followed}, {len(source.configs)} Config built "
            f"({', '.join(map(str, source.configs)) or 'none found'})")


SHAPES_SHOWN = 3


def predictor_line(predictor: RecordedPredictor) -> str:
    """One recorded predictor: its model, what it runs (said by the record), where it was built, how it ran;
    one the source builds: where, and that how it runs is not known."""
    model = predictor.model
    head = f"predictor {predictor.id}" + (f" {model.model_dir or (model.prog_file or '').rpartition('/')[0] or model.name()}" if model else "")
    service = predictor.origin.service
    called = f" from {service.where()}" if service and service != predictor.origin.builder else ""
    if predictor.origin.threads_set_at:
        called += f", threads set at {predictor.origin.threads_set_at.where()}"
    if predictor.built_by == BuiltBy.SOURCE:
        return f"{head}: built at {predictor.built_at()}{called} (source; how it runs is known once it is recorded)"
    config = predictor.config
    if config is None:
        runs = "its building was not seen"
    else:
        cpu = config.cpu
        runs = (f"{config.device}, {counted(cpu.threads, 'thread')}, oneDNN {'on' if cpu.onednn else 'off'}, "
                f"IR optim {'on' if cpu.ir_optim else 'off'}" + (f", TensorRT {config.tensorrt_precision or 'on'}" if config.tensorrt else "")
                + " (record)")
    stats = predictor.runs
    ran = counted(stats.runs, "run") + (f", p50 {stats.p50_ms:.3g} ms" if stats.p50_ms is not None else "")
    shapes = ", ".join(" ".join("x".join(map(str, tensor.shape)) for tensor in entry.inputs) + f" ({entry.runs})"
                       for entry in stats.shapes[:SHAPES_SHOWN])
    more = len(stats.shapes) - SHAPES_SHOWN + (1 if stats.shapes_not_kept else 0)
    shapes += f" and {more} more" if more > 0 else ""
    return (f"{head}: {runs}; built at {predictor.built_at()}{called}; "
            f"{ran}" + (f"; shapes {shapes}" if shapes else "") + f"; at most {counted(stats.peak_concurrency, 'run')} at once"
            + sharing_words(predictor))


def sharing_words(predictor: RecordedPredictor) -> str:
    """``; run() from 4 threads, 69 runs crossed another thread's``: a predictor several threads used, as its record says."""
    sharing = predictor.sharing
    if sharing is None or sharing.threads() < 2:
        return ""
    crossed = f", {counted(sharing.crossed, 'run')} crossed another thread's" if sharing.crossed else ", no run crossed another's"
    return f"; used from {sharing.threads()} threads{crossed}"


def shown_settings(service: ServiceSummary) -> list[SettingOrigin]:
    """The settings listed one per line: those the record gives are on its predictors' lines instead,
    and the flags given as they were typed on the flags line."""
    return [setting for setting in service.settings
            if not (service.predictors and setting.origin == Origin.RECORD) and not _plain_flag(setting)]


def flags_line(service: ServiceSummary) -> str | None:
    """The service flags given, as typed (``flags: --model '/srv/m' --threads 8``); a flag that overrides
    what the record says keeps its own line, which says so."""
    flags = [setting for setting in service.settings if _plain_flag(setting)]
    if not flags:
        return None
    return "flags: " + " ".join(setting.detail if isinstance(setting.value, bool) else f"{setting.detail} {setting_value(setting.value)}"
                                for setting in flags)


def _plain_flag(setting: SettingOrigin) -> bool:
    return setting.origin == Origin.FLAG and setting.detail.startswith("--") and ":" not in setting.detail


def measured_line(measured: PredictorMeasurement) -> str:
    """One predictor as --measure measured it: where, in what time, its recorded configuration's p50 and each comparison."""
    head = f"measured predictor {measured.predictor} {measured.model}"
    if measured.not_measured:
        return f"{head}: {measured.not_measured}"
    shapes = shape_options(measured.shapes)
    parts = [f"{shapes}, {measured.seconds:.1f} s of {measured.budget_s:g} s" if measured.seconds is not None else shapes]
    if measured.baseline_p50_ms is not None:
        parts.append(f"its recorded configuration p50 {measured.baseline_p50_ms:.3g} ms")
    parts += [f"{c.candidate}: {speed_words(c.ratio)} ({c.verdict})" for c in measured.comparisons]
    if measured.recommended_p50_ms is not None:
        parts.append(f"recommended p50 {measured.recommended_p50_ms:.3g} ms"
                     + (f" ({speed_words(measured.recommended.ratio)}, {measured.recommended.verdict})" if measured.recommended else ""))
    return f"{head}: " + "; ".join(parts + ([f"cut short: {measured.error}"] if measured.error else []))


def record_lines(service: ServiceSummary) -> list[str]:
    """The record read (or why none was), a line per predictor it holds, and one per predictor --measure measured;
    each at most :data:`LINE_CHARS` long (the record is the service's word, and may hold a path of megabytes)."""
    noted = " (runs noted in Python, the C module not built: several µs more per run())" if service.recorder == Recorder.PYTHON else ""
    lines = ([f"record: {service.record}{noted}"] if service.record else []) + [predictor_line(p) for p in service.predictors] \
        + [measured_line(m) for m in service.measured]
    return [cut_line(line) for line in lines]


LINE_CHARS = 8192  # a report for people wraps a line at a cost that grows with the square of its length


def cut_line(line: str) -> str:
    """``line``, or its first :data:`LINE_CHARS` characters and how many more there are (the JSON report has them)."""
    return line if len(line) <= LINE_CHARS else f"{line[:LINE_CHARS]}... ({len(line) - LINE_CHARS} characters more)"


def service_lines(service: ServiceSummary | None) -> list[str]:
    """The process and source lines, the notes on them, each setting with where it came from; empty
    when the report read neither and knows no setting."""
    if service is None:
        return []
    process, source = service.process, service.source
    if process.status == ProcessStatus.NOT_PROBED and source.status == SourceStatus.NOT_READ and not service.settings \
            and not service.predictors:
        return []
    line = process_line(process)
    lines = [line, *(f"{name}={value} ({process.environ_source})" for name, value in process.environ.items())] if line else []
    lines += deployment_lines(service)
    lines += [line for line in (process_note(process), source_line(source)) if line]
    lines += [f"{error.location}: {error.message}" for error in source.errors]
    lines += [line for line in (flags_line(service),) if line]
    lines += [f"{setting.name} = {setting_value(setting.value)} ({setting.origin}: {setting.detail})"
              for setting in shown_settings(service)]
    return lines + record_lines(service)


def setting_value(value: object) -> str:
    """A setting's value as the service would write it: a word of the vocabulary as its word, others as Python."""
    if value is None:
        return "not known"
    return repr(value.value) if isinstance(value, Enum) else repr(value)
