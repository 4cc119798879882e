"""The picked process's record, read by the doctor: found by its PID and its start time (field 22 of
/proc/PID/stat), so a record of an earlier process that had the same PID is never taken for it;
in the folder the process's own environment names (a relative one from its working directory,
/proc/PID/cwd), else the default for its user. Everything in
it is the service's word: bounded, decoded into the record's types or refused in one line that
names the field and what it expected, never what the file holds (a value, a key's name)."""

from __future__ import annotations

import json
import os
import posixpath
import time
from dataclasses import replace

from ..base.inputs import SYSTEM_BYTES, NotPrivate, Refused, parse_json, read_private
from ..base.redact import redact, redact_recorded
from ..base.serde import DecodeError, from_data, json_error_text, quoted
from ..base.vocabulary import Origin, ProcessStatus, RecordStatus
from ..facts import ServiceProcessFacts
from ..facts.environment import FLAGS_PREFIX, MAX_VALUE, MAX_VARIABLES, THREAD_VARIABLES, noted_name
from ..facts.knobs import settings_recorded
from ..facts.recorded import SCHEMA_VERSION, Record, RecordedPredictor
from ..facts.service_config import SettingOrigin
from ..facts.service_record import STALE_INTERVALS, PredictorMeasured, ServiceRecord
from ..probes.context import ProbeContext
from ..recorder.live import MAX_PREDICTORS, MAX_THREADS
from ..recorder.location import FOLDER, interval_s, record_folder, record_name, start_ticks


class NotRead(Exception):
    """Why the record was not read (its status and the line that says so, naming the file)."""

    def __init__(self, status: RecordStatus, reason: str) -> None:
        super().__init__(reason)
        self.status, self.reason = status, reason


def read_record(ctx: ProbeContext, process: ServiceProcessFacts) -> ServiceRecord:
    if process.status != ProcessStatus.PROBED or process.pid is None:
        return ServiceRecord(reason="no service process was picked")
    pid = process.pid
    try:
        ticks = start_ticks(ctx.read_text(f"/proc/{pid}/stat"))
    except (OSError, UnicodeDecodeError) as exc:
        return ServiceRecord(RecordStatus.NOT_FOUND, f"no record: the process {pid} is gone ({getattr(exc, 'strerror', None) or exc})")
    uid = process.uid if process.uid is not None else 0
    try:
        path = posixpath.join(_folder(ctx, process, pid, uid), record_name(pid, ticks or 0))
    except NotRead as exc:
        return ServiceRecord(exc.status, exc.reason)
    try:
        record, predictors = _decoded(_record_text(ctx, path, pid, uid), path)
    except NotRead as exc:
        return ServiceRecord(exc.status, exc.reason, path)
    if record.pid != pid or record.start_ticks != ticks:
        return ServiceRecord(RecordStatus.UNREADABLE, f"{path}: the record of another process (pid {record.pid})", path)
    read = ServiceRecord(RecordStatus.READ, None, path, record.paddle_version, record.written_at, record.predictors,
                         record.peak_concurrent_runs, record.peak_concurrent_threads, record.recorder,
                         age_s=round(max(0.0, time.time() - record.written_at), 1), interval_s=interval_s(process.environ)[0],
                         environment=_redacted(record.environment))
    if read.stale:
        read = read.noted(f"{read.written()}, past {STALE_INTERVALS} of the {read.interval_s:g} s it is written every: it may be stale "
                  "(the service stuck, or its recorder's writer gone)")
    if predictors > MAX_PREDICTORS:
        read = read.noted(f"it holds {predictors} predictors, more than the {MAX_PREDICTORS} a recorder keeps: the first {MAX_PREDICTORS} are read")
    return read


def _folder(ctx: ProbeContext, process: ServiceProcessFacts, pid: int, uid: int) -> str:
    """The process's record folder; a relative one is the service's, from its working directory (not the doctor's)."""
    folder = str(record_folder(process.environ, uid))
    if folder.startswith("/"):
        return folder
    try:
        cwd = os.readlink(ctx.path(f"/proc/{pid}/cwd"))
    except OSError as exc:
        raise NotRead(RecordStatus.UNREADABLE, f"no record read: the process's {FOLDER}={folder} is relative, and its "
                                               f"working directory cannot be read (/proc/{pid}/cwd: {exc.strerror or exc})") from None
    return posixpath.normpath(posixpath.join(cwd, folder))


def _record_text(ctx: ProbeContext, path: str, pid: int, uid: int) -> str:
    """The record's text, read only where no user but ``uid`` could have written it (a record other users
    can plant is their word for the service's, and a link may point at a file only root may read)."""
    folder, name = posixpath.split(path)
    try:
        return read_private(_under_root(ctx, folder), name, uid, SYSTEM_BYTES).decode("utf-8")
    except FileNotFoundError:
        raise NotRead(RecordStatus.NOT_FOUND, f"no record of process {pid} in {folder} (start it with "
                                              "`paddle-doctor record -- CMD`, or PADDLE_DOCTOR_RECORD=1)") from None
    except UnicodeDecodeError:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not a record (not UTF-8 text)") from None
    except NotPrivate as exc:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not read: the record {exc}; a record is read only where no "
                                               f"user but the service's (uid {uid}) could have written it") from None
    except Refused as exc:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not read: the record {exc}") from None
    except OSError as exc:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: cannot read the record ({exc.strerror or exc})") from None


def _decoded(text: str, path: str) -> tuple[Record, int]:
    """The record in ``text``, with at most :data:`MAX_PREDICTORS` predictors, and how many it holds; or
    NotRead naming the field that does not fit and what it expected, never what it holds."""
    try:
        data = parse_json(text, path)
    except json.JSONDecodeError as exc:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not a record, or cut short ({json_error_text(exc)})") from None
    except Refused as exc:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not a record ({exc})") from None
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        said = quoted(version) if type(version) is int else "not a number" if version is not None else "missing"
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: record schema_version is {said}, this paddle-doctor "
                                               f"reads {SCHEMA_VERSION}; run the service under this paddle-doctor's record")
    predictors = data.get("predictors")
    count = len(predictors) if isinstance(predictors, list) else 0
    if count > MAX_PREDICTORS:  # no recorder writes more: the rest would cost their decoding and a line each
        data = {**data, "predictors": predictors[:MAX_PREDICTORS]}
    try:
        record = from_data(Record, redact_recorded(data), echo=False)  # the service's word: a secret in it stays in it
    except DecodeError as exc:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not a record ({exc})") from None
    crowded = _crowded_threads(record)
    if crowded is not None:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not a record ({crowded}: holds more than the {MAX_THREADS} "
                                               "threads a recorder keeps)")
    unnoted = _unnoted_environment(record.environment)
    if unnoted is not None:
        raise NotRead(RecordStatus.UNREADABLE, f"{path}: not a record (Record.environment {unnoted})")
    return record, count


def _unnoted_environment(environment: dict[str, str] | None) -> str | None:
    """What in the record's environment no recorder notes (more variables, another name, a longer value), or None."""
    if environment is None:
        return None
    if len(environment) > MAX_VARIABLES:
        return f"holds more than the {MAX_VARIABLES} variables a recorder notes"
    if not all(noted_name(name) for name in environment):
        return f"holds a name a recorder does not note (expected {', '.join(THREAD_VARIABLES)} or {FLAGS_PREFIX}*)"
    if any(len(value) > MAX_VALUE for value in environment.values()):
        return f"holds a value longer than the {MAX_VALUE} characters a recorder keeps"
    return None


def _redacted(environment: dict[str, str] | None) -> dict[str, str] | None:
    return None if environment is None else {name: redact(name, value) for name, value in environment.items()}


def _crowded_threads(record: Record) -> str | None:
    """The field of a predictor's calling threads that holds more than a recorder keeps, or None."""
    for index, predictor in enumerate(record.predictors):
        sharing = predictor.sharing
        if sharing is None:
            continue
        for name in ("run", "copy_from_cpu", "get_output_handle"):
            if len(getattr(sharing, name).threads) > MAX_THREADS:
                return f"Record.predictors[{index}].sharing.{name}.threads"
    return None


def _under_root(ctx: ProbeContext, folder: str) -> str:
    """The record folder on this machine: its parent's links followed as the container sees them, the folder itself not."""
    parent, name = posixpath.split(posixpath.normpath(folder))
    return str(ctx.path(posixpath.join(ctx.resolve(parent), name)))


def against_paddle(record: ServiceRecord, paddle_version: str | None) -> ServiceRecord:
    """The record; one made under another Paddle than the one probed says so, in its one line."""
    if record.read and paddle_version and record.paddle_version and record.paddle_version != paddle_version:
        return record.noted(f"recorded under Paddle {record.paddle_version}, the doctor probes {paddle_version}: "
                            "the settings are what the service ran, the probes this Paddle's")
    return record


def recorded_settings(record: ServiceRecord) -> list[SettingOrigin]:
    """The service's settings as its busiest predictor runs them (every predictor is in the report)."""
    main = record.main_predictor()
    return predictor_settings(record, main) if main is not None else []


def predictor_settings(record: ServiceRecord, predictor: RecordedPredictor) -> list[SettingOrigin]:
    """The settings one recorded predictor runs, each with the record and the place it was built as its origin."""
    if predictor.config is None:
        return []
    known = sum(1 for other in record.predictors if other.config is not None)
    busiest = predictor is record.main_predictor() and known > 1
    detail = f"{record.source}: predictor {predictor.id} built at {predictor.built_at()}" + (f" (the busiest of {known})" if busiest else "")
    threads_at = f", threads set at {predictor.origin.threads_set_at.where()}" if predictor.origin.threads_set_at else ""
    values = settings_recorded(predictor.config)
    return [SettingOrigin(name, value, Origin.RECORD, detail + (threads_at if name == "threads" else ""))
            for name, value in sorted(values.items()) if value is not None]


MEASURED_SAMPLES = 8
MEASURE_FLOOR_S = 4.0  # the least --budget share a predictor is measured in


def measurement_of(predictor: RecordedPredictor) -> PredictorMeasured:
    """What ``--measure`` measures of a predictor: its model, and ``--shape`` options for its most
    frequent input shapes, repeated by their counts (at most 8 samples, each shape seen at least once
    among them); ``not_measured`` says why not when its model is in no file the doctor can load."""
    model = predictor.model
    if model is None or model.in_memory or not (model.model_dir or model.prog_file):
        why = "its model was handed over in memory" if model is not None and model.in_memory else "its model was not seen"
        return PredictorMeasured(predictor.id, predictor.name(), not_measured=f"not measured: {why}")
    path = model.model_dir or model.prog_file.rsplit(".", 1)[0]  # type: ignore[union-attr]
    seen = [entry for entry in predictor.runs.shapes if len(entry.inputs) == len(predictor.input_names)]
    total = sum(entry.runs for entry in seen)
    samples = []
    for entry in seen[:MEASURED_SAMPLES]:
        samples += [entry] * max(1, round(MEASURED_SAMPLES * entry.runs / total))
    options = [f"{name}:{'x'.join(str(n) for n in tensor.shape)}"
               for entry in samples[:MEASURED_SAMPLES] for name, tensor in zip(predictor.input_names, entry.inputs)]
    return PredictorMeasured(predictor.id, path, options)


def measurements_of(record: ServiceRecord, budget_s: float) -> list[PredictorMeasured]:
    """What ``--measure`` measures of each predictor whose configuration is known, the busiest first,
    ``budget_s`` shared among those that can be measured (``share_budget``)."""
    return share_budget(planned_measurements(record), budget_s)


def planned_measurements(record: ServiceRecord) -> list[PredictorMeasured]:
    """What ``--measure`` would measure of the predictors whose configuration is known: one per distinct model
    and configuration (the busiest of those alike, standing for the others), the busiest first."""
    main = record.main_predictor()
    known = sorted((p for p in record.predictors if p.config is not None), key=lambda p: (p is not main, -p.runs.runs))
    kinds: list[tuple[RecordedPredictor, list[int]]] = []
    for predictor in known:
        alike = next((others for first, others in kinds
                      if predictor.model is not None and first.model == predictor.model and first.config == predictor.config), None)
        if alike is None:
            kinds.append((predictor, []))
        else:
            alike.append(predictor.id)
    return [replace(measurement_of(predictor), stands_for=others) for predictor, others in kinds]


def share_budget(planned: list[PredictorMeasured], budget_s: float) -> list[PredictorMeasured]:
    """``planned`` with ``budget_s`` split evenly among those that can be measured; when it cannot give each at
    least 4 s, the busiest it can are measured and the others say so."""
    measurable = [plan.predictor for plan in planned if plan.not_measured is None]
    count = max(1, min(len(measurable), int(budget_s // MEASURE_FLOOR_S)))
    measured, share = measurable[:count], round(budget_s / count, 3)
    left_out = (f"not measured: --budget {budget_s:g} s gives {count} of the {len(measurable)} predictors "
                f"{MEASURE_FLOOR_S:g} s or more each; --budget {MEASURE_FLOOR_S * len(measurable):g} measures them all")
    return [plan if plan.not_measured is not None else replace(plan, budget_s=share) if plan.predictor in measured
            else replace(plan, not_measured=left_out) for plan in planned]


def model_origin(record: ServiceRecord, plan: PredictorMeasured, first: bool) -> SettingOrigin:
    """The model a recorded predictor is measured on, as a setting of the record (the first's says it was measured first)."""
    return SettingOrigin("model", plan.model, Origin.RECORD,
                         f"{record.source}: predictor {plan.predictor}" + (", measured first" if first else ""))
