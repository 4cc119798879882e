"""The doctor reads the picked process's record: found by PID and start time under the root, refused
in one line when it is cut short, of another schema or another process; its settings sit between
--config and the source; PD-CPU-010 counts the threads of the predictors that ran at once."""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import FIXTURES, report_json, run_doctor
from factories import by_rule, make_facts
from paddle_doctor.base.serde import to_data
from paddle_doctor.base.vocabulary import BuiltBy, Device, Origin, ProcessStatus, Recorder, RecordStatus
from paddle_doctor.checks import cpu_budget
from paddle_doctor.facts import ServiceProcessFacts, SourceFacts, SourceLocation, SourceSetting
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.recorded import BuildSite, Frame, ModelFiles, Record, RecordedConfig, RecordedPredictor, RunStats
from paddle_doctor.facts.service_record import ServiceRecord
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.service import ServiceOptions
from paddle_doctor.service.record import against_paddle, read_record, recorded_settings
from paddle_doctor.service.resolve import resolve_service
from record_files import owned_by

PID, TICKS = 4242, 777


def runs(count: int, peak: int = 1) -> RunStats:
    return RunStats(count, 30.0 if count else None, 5.0 if count > 1 else None, 6.0 if count > 1 else None,
                    7.0 if count > 1 else None, 0.1, 1.0, None, peak if count else 0, [], 0)


def predictor(number: int, threads: int, model: str, ran: int, builder: Frame | None = None) -> RecordedPredictor:
    set_at = Frame("/usr/lib/python3/site-packages/ocrkit/utility.py", 263, "create_predictor", "ocrkit", "2.7.3",
                   "ocrkit/utility.py")
    own = Frame("/app/app.py", 12, "<module>")
    return RecordedPredictor(number, BuiltBy.CREATE_PREDICTOR,
                             RecordedConfig(PredictorConfig(threads=threads, onednn=True), Device.CPU),
                             ModelFiles(None, f"/models/{model}/inference.pdmodel", f"/models/{model}/inference.pdiparams"),
                             BuildSite(builder or set_at, own, set_at), runs(ran))


def record(*predictors: RecordedPredictor, peak_runs: int = 1, peak_threads: int = 0, paddle: str = "3.3.1") -> Record:
    return Record(PID, TICKS, ["python", "app.py"], paddle, "0.1.0", 1.0, list(predictors), 0, peak_runs, peak_threads, [])


OCR = record(predictor(0, 10, "det", 40), predictor(1, 10, "cls", 40), predictor(2, 10, "rec", 40), peak_threads=10)


def patient(tmp_path: Path, text: str | None, ticks: int = TICKS, alive: bool = True) -> tuple[ProbeContext, ServiceProcessFacts]:
    """A root holding the process's /proc/PID/stat and, in its user's default folder, a record file."""
    if alive:
        (tmp_path / "proc" / str(PID)).mkdir(parents=True)
        (tmp_path / "proc" / str(PID) / "stat").write_text(f"{PID} (python app.py) S " + "1 " * 18 + f"{ticks} 0 0\n")
    folder = tmp_path / "tmp" / "paddle-doctor-record-1000"
    folder.mkdir(parents=True)
    if text is not None:
        (folder / f"{PID}-{TICKS}.json").write_text(text)
    owned_by(1000, folder)
    return ProbeContext(tmp_path), ServiceProcessFacts(status=ProcessStatus.PROBED, pid=PID, uid=1000)



def record_text(changes: dict[tuple, str], record: Record = OCR) -> str:
    """The record as JSON, written now, each value at a path of ``changes`` written as the JSON text given (``NaN``, ``-5``)."""
    data = {**to_data(record), "written_at": round(time.time(), 3)}
    for number, (*parents, leaf) in enumerate(changes):
        functools.reduce(lambda part, key: part[key], parents, data)[leaf] = f"CHANGE-{number}"
    text = json.dumps(data)
    for number, value in enumerate(changes.values()):
        text = text.replace(f'"CHANGE-{number}"', value)
    return text


def test_the_record_of_the_picked_process_is_read_from_its_users_folder(tmp_path):
    read = read_record(*patient(tmp_path, record_text({})))
    assert read.status == RecordStatus.READ and read.reason is None
    assert read.source == "/tmp/paddle-doctor-record-1000/4242-777.json"
    assert [p.model.name() for p in read.predictors] == ["det", "cls", "rec"]


def test_the_folder_the_process_names_is_where_its_record_is(tmp_path):
    ctx, process = patient(tmp_path, None)
    (tmp_path / "records").mkdir()
    (tmp_path / "records" / f"{PID}-{TICKS}.json").write_text(json.dumps(to_data(OCR)))
    owned_by(1000, tmp_path / "records")
    process = replace(process, environ={"PADDLE_DOCTOR_RECORD_DIR": "/records"})
    assert read_record(ctx, process).source == "/records/4242-777.json"


def test_a_relative_record_folder_is_found_from_the_services_working_directory_under_the_root(tmp_path):
    ctx, process = patient(tmp_path, None)
    (tmp_path / "proc" / str(PID) / "cwd").symlink_to("/srv/app")  # as the container sees it
    records = tmp_path / "srv" / "app" / "records"
    records.mkdir(parents=True)
    (records / f"{PID}-{TICKS}.json").write_text(record_text({}))
    owned_by(1000, records)
    process = replace(process, environ={"PADDLE_DOCTOR_RECORD_DIR": "records"})
    assert read_record(ctx, process).source == "/srv/app/records/4242-777.json"
    (tmp_path / "proc" / str(PID) / "cwd").unlink()
    assert read_record(ctx, process).reason == ("no record read: the process's PADDLE_DOCTOR_RECORD_DIR=records is relative, and "
                                                f"its working directory cannot be read (/proc/{PID}/cwd: No such file or directory)")


def test_a_relative_record_folder_is_the_services_own_not_the_doctors(tmp_path):
    from paddle_doctor.recorder.location import start_ticks_of

    app = tmp_path / "app"
    (app / "records").mkdir(parents=True, mode=0o700)
    env = {"PATH": os.environ["PATH"], "PADDLE_DOCTOR_RECORD_DIR": "records"}
    service = subprocess.Popen(["sleep", "60"], cwd=app, env=env)
    try:
        ticks = start_ticks_of(service.pid)
        text = record_text({("pid",): str(service.pid), ("start_ticks",): str(ticks)})
        (app / "records" / f"{service.pid}-{ticks}.json").write_text(text)
        result = run_doctor("--pid", str(service.pid), "--json", "--no-paddle", "--no-gpu", env={"PADDLE_DOCTOR_PID": ""})
    finally:
        service.kill()
        service.wait()
    assert os.getcwd() != str(app)
    assert f"read the record of process {service.pid} from {app}/records/{service.pid}-{ticks}.json: 3 predictors" in result.stderr
    assert len(report_json(result)["service"]["predictors"]) == 3


@pytest.mark.parametrize("text, ticks, alive, status, said", [
    (json.dumps(to_data(OCR))[:300], TICKS, True, RecordStatus.UNREADABLE, "not a record, or cut short"),
    (json.dumps({**to_data(OCR), "schema_version": 9}), TICKS, True, RecordStatus.UNREADABLE, "record schema_version is 9"),
    (json.dumps({**to_data(OCR), "predictors": "many"}), TICKS, True, RecordStatus.UNREADABLE, "not a record"),
    (json.dumps({**to_data(OCR), "pid": 99}), TICKS, True, RecordStatus.UNREADABLE, "the record of another process"),
    # the same PID, started later: the record of the earlier process is not this one's
    (json.dumps(to_data(OCR)), TICKS + 1, True, RecordStatus.NOT_FOUND, "no record of process 4242"),
    (json.dumps(to_data(OCR)), TICKS, False, RecordStatus.NOT_FOUND, "the process 4242 is gone"),
])
def test_a_record_that_cannot_be_used_is_one_line(tmp_path, text, ticks, alive, status, said):
    read = read_record(*patient(tmp_path, text, ticks, alive))
    assert read.status == status and not read.predictors
    assert said in read.reason and "\n" not in read.reason


@pytest.mark.parametrize("where, value, said", [
    (("predictors", 0, "runs", "p50_ms"), "NaN", "Record.predictors[0].runs.p50_ms: expected a finite number"),
    (("predictors", 0, "runs", "p90_ms"), "Infinity", "Record.predictors[0].runs.p90_ms: expected a finite number"),
    (("predictors", 2, "runs", "busy_s"), "1e400", "Record.predictors[2].runs.busy_s: expected a finite number"),
    (("predictors", 1, "runs", "runs"), "-5", "Record.predictors[1].runs.runs: expected at least 0"),
    (("predictors", 1, "runs", "p99_ms"), "-0.5", "Record.predictors[1].runs.p99_ms: expected at least 0"),
    (("written_at",), "NaN", "Record.written_at: expected a finite number"),
])
def test_a_recorded_value_out_of_its_range_is_refused_in_one_line(tmp_path, where, value, said):
    read = read_record(*patient(tmp_path, record_text({where: value})))
    assert read.status == RecordStatus.UNREADABLE and not read.predictors
    assert read.reason == f"/tmp/paddle-doctor-record-1000/{PID}-{TICKS}.json: not a record ({said})"


def recorded_tree(tmp_path: Path, text: str) -> Path:
    """The recorded one-service /proc tree (process 4242 of user 1000) with ``text`` as its record."""
    root = tmp_path / "root"
    shutil.copytree(FIXTURES / "processes" / "one-service", root, symlinks=True)
    folder = root / "tmp" / "paddle-doctor-record-1000"
    folder.mkdir(parents=True)
    (folder / "4242-123456.json").write_text(text)  # 123456: field 22 of the tree's /proc/4242/stat
    owned_by(1000, folder)
    return root


def test_a_report_on_a_record_holding_nan_is_json(tmp_path):
    text = record_text({("pid",): "4242", ("start_ticks",): "123456", ("predictors", 0, "runs", "p50_ms"): "NaN"})
    result = run_doctor("--root", str(recorded_tree(tmp_path, text)), "--pid", "4242", "--json", "--no-paddle", "--no-gpu")
    report = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(f"{name} in the JSON report"))
    assert "not a record (Record.predictors[0].runs.p50_ms: expected a finite number)" in report["service"]["record"]


@pytest.mark.parametrize("where, value, said", [
    (("predictors", 0, "config", "cpu", "threads"), "0", "Record.predictors[0].config.cpu.threads: expected at least 1"),
    (("predictors", 2, "config", "cpu", "threads"), "-4", "Record.predictors[2].config.cpu.threads: expected at least 1"),
    (("predictors", 1, "runs", "runs"), "9" * 5000, "holds an integer of more than 4300 digits, more than the doctor reads"),
    (("argv", 0), r'"python\ud800"', r"holds text that is no Unicode (a lone surrogate, \ud800)"),
    (("predictors", 0, "model", "model_dir"), r'"/models/\udc80"', r"holds text that is no Unicode (a lone surrogate, \udc80)"),
])
def test_a_record_no_service_setting_or_output_can_hold_is_one_line_and_the_report_follows(tmp_path, where, value, said):
    changes = {("pid",): "4242", ("start_ticks",): "123456", where: value}
    result = run_doctor("--root", str(recorded_tree(tmp_path, record_text(changes))), "--pid", "4242", "--no-paddle", "--no-gpu")
    assert result.returncode in (0, 1), result.stderr
    assert f"paddle-doctor: /tmp/paddle-doctor-record-1000/4242-123456.json: not a record ({said}); the rest of the report follows" \
        in result.stderr.splitlines()
    assert "Service" in result.stdout and "not a record" in result.stdout


def test_a_record_of_more_predictors_than_a_recorder_keeps_is_cut_and_says_so(tmp_path):
    from paddle_doctor.recorder.live import MAX_PREDICTORS

    many = record(*(replace(predictor(0, 2, "det", 5), id=number) for number in range(3 * MAX_PREDICTORS)))
    changes = {("pid",): "4242", ("start_ticks",): "123456"}
    result = run_doctor("--root", str(recorded_tree(tmp_path, record_text(changes, many))), "--pid", "4242", "--json",
                        "--no-paddle", "--no-gpu")
    report = report_json(result)
    said = (f"/tmp/paddle-doctor-record-1000/4242-123456.json: it holds {3 * MAX_PREDICTORS} predictors, more than the "
            f"{MAX_PREDICTORS} a recorder keeps: the first {MAX_PREDICTORS} are read")
    assert [p["id"] for p in report["service"]["predictors"]] == list(range(MAX_PREDICTORS))
    assert report["service"]["record"].startswith(f"{said}; written ") and f"paddle-doctor: warning: {said}" in result.stderr.splitlines()


@pytest.mark.parametrize("interval, stale", [(None, True), ("300", False), ("junk", True)])
def test_a_record_says_its_age_and_one_not_written_for_three_intervals_may_be_stale(tmp_path, interval, stale):
    ctx, process = patient(tmp_path, record_text({("written_at",): str(time.time() - 600)}))
    process = replace(process, environ={"PADDLE_DOCTOR_RECORD_INTERVAL": interval} if interval else {})  # the service's: 5 s unless it says
    read = read_record(ctx, process)
    assert read.read and read.written() == "written 10 min ago" and read.stale is stale
    path = f"/tmp/paddle-doctor-record-1000/{PID}-{TICKS}.json"
    if stale:
        assert read.reason == (f"{path}: written 10 min ago, past 3 of the 5 s it is written every: it may be stale "
                               "(the service stuck, or its recorder's writer gone)")
        assert read.line() == read.reason
    else:
        assert read.reason is None and read.line() == f"{path}, written 10 min ago"


def test_the_report_and_its_warnings_say_how_old_the_record_is(tmp_path):
    fresh = run_doctor("--root", str(recorded_tree(tmp_path / "fresh", record_text({("pid",): "4242", ("start_ticks",): "123456"}))),
                       "--pid", "4242", "--json", "--no-paddle", "--no-gpu")
    path = "/tmp/paddle-doctor-record-1000/4242-123456.json"
    assert report_json(fresh)["service"]["record"] in (f"{path}, written 0 s ago", f"{path}, written 1 s ago")
    assert "warning" not in fresh.stderr and "3 predictors, written " in fresh.stderr
    text = record_text({("pid",): "4242", ("start_ticks",): "123456", ("written_at",): str(time.time() - 7200)})
    old = run_doctor("--root", str(recorded_tree(tmp_path / "old", text)), "--pid", "4242", "--no-paddle", "--no-gpu")
    said = f"{path}: written 2 h ago, past 3 of the 5 s it is written every: it may be stale"
    assert f"paddle-doctor: warning: {said} (the service stuck, or its recorder's writer gone)" in old.stderr.splitlines()
    assert f"record: {said}" in " ".join(old.stdout.split())


def test_a_record_from_another_paddle_says_so_and_stays_read(tmp_path):
    read = read_record(*patient(tmp_path, json.dumps(to_data(record(*OCR.predictors, paddle="2.6.2")))))
    read = against_paddle(read, "3.3.1")
    assert read.read and "recorded under Paddle 2.6.2, the doctor probes 3.3.1" in read.reason


def _recorded_ocr() -> ServiceRecord:
    return ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0, OCR.predictors, 1, 10)


def test_the_record_stands_between_config_and_source(tmp_path):
    source = SourceFacts(settings=[SourceSetting(name="threads", value=4, evaluated=True, location=SourceLocation("app.py", 3), code="set(4)")])
    recorded = recorded_settings(_recorded_ocr())
    service, origins = resolve_service(source=source, recorded=recorded)
    threads = next(o for o in origins if o.name == "threads")
    assert service.threads == 10 and threads.origin == Origin.RECORD
    assert "threads set at ocrkit 2.7.3 ocrkit/utility.py:263" in threads.detail
    config = tmp_path / "service.yaml"
    config.write_text("threads: 3\n")
    service, origins = resolve_service(ServiceOptions(config=str(config)), source, recorded=recorded)
    assert service.threads == 3 and next(o for o in origins if o.name == "threads").origin == Origin.CONFIG
    service, origins = resolve_service(ServiceOptions(threads=8), source, recorded=recorded)
    flag = next(o for o in origins if o.name == "threads")
    assert service.threads == 8 and flag.origin == Origin.FLAG
    assert flag.detail.startswith("--threads: judged as 8; the service runs 10 (record: /tmp/r.json: predictor 0")


def _facts_with(read: ServiceRecord, flags: dict | None = None, **machine):
    service, origins = resolve_service(ServiceOptions(**(flags or {})), recorded=recorded_settings(read))
    return replace(make_facts(**machine), service=service, service_origins=origins, service_record=read)


def test_cpu_budget_counts_the_recorded_predictors_running_at_once_and_names_them():
    found = by_rule(cpu_budget.check(_facts_with(_recorded_ocr(), cpuset=[0, 1])))
    over = found["PD-CPU-010"]
    assert over.status.value == "fail" and over.evidence["total_threads"] == 10 and over.evidence["predictors"] == [0, 1, 2]
    assert "predictor 0 (det) 10 threads, set at ocrkit 2.7.3 ocrkit/utility.py:263" in over.observed
    assert "predictor 2 (rec)" in over.observed and "at most 1 run at once" in over.observed


def test_cpu_budget_adds_the_threads_of_predictors_seen_running_together():
    together = ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0,
                             [predictor(0, 3, "a", 50), predictor(1, 3, "b", 50)], 2, 6)
    found = by_rule(cpu_budget.check(_facts_with(together, quota=4)))
    assert found["PD-CPU-010"].status.value == "fail" and found["PD-CPU-010"].evidence["total_threads"] == 6
    apart = ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0,
                          [predictor(0, 3, "a", 50), predictor(1, 3, "b", 50)], 1, 3)
    assert by_rule(cpu_budget.check(_facts_with(apart, quota=4)))["PD-CPU-010"].status.value == "pass"


def test_runs_at_once_noted_in_python_say_that_a_wait_for_the_gil_may_count_as_a_run():
    runs = [predictor(0, 3, "a", 50), predictor(1, 3, "b", 50)]
    for recorder, said in ((Recorder.PYTHON, True), (Recorder.NATIVE, False), (None, False)):
        together = ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0, runs, 2, 6, recorder)
        over = by_rule(cpu_budget.check(_facts_with(together, quota=4)))["PD-CPU-010"]
        assert over.status.value == "fail" and "at most 2 runs at once seen across 2 predictors" in over.observed
        assert ("noted in Python: a thread waiting for the GIL after its run may count as running" in over.observed) is said
    alone = ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0, runs, 1, 3, Recorder.PYTHON)
    assert "GIL" not in by_rule(cpu_budget.check(_facts_with(alone, quota=2)))["PD-CPU-010"].observed


def test_a_thread_flag_is_judged_over_the_record():
    found = by_rule(cpu_budget.check(_facts_with(_recorded_ocr(), {"threads": 2}, cpuset=[0, 1])))
    assert found["PD-CPU-010"].status.value == "pass" and found["PD-CPU-010"].evidence["total_threads"] == 2


OCR_SERVICE = '''
import sys
import numpy as np
from paddle import inference

def build(folder, cpu_threads=10, enable_mkldnn=True):
    config = inference.Config(folder + "/inference.json", folder + "/inference.pdiparams")
    config.disable_gpu()
    config.set_cpu_math_library_num_threads(cpu_threads)
    if enable_mkldnn:
        config.enable_mkldnn()
    return inference.create_predictor(config)

stages = [build(sys.argv[1] + "/" + stage) for stage in ("det", "cls", "rec")]
for predictor in stages:
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    handle.copy_from_cpu(np.ones((1, 3, 224, 224), "float32"))
    predictor.run()
print("ready", flush=True)
sys.stdin.readline()
'''


@contextlib.contextmanager
def recorded_service(argv: list[str], records: Path, predictors: int, switch: bool = False, two_cpus: bool = False):
    """A service that prints ``ready`` and then waits on stdin, recording in ``records`` (with
    PADDLE_DOCTOR_RECORD=1 where ``switch``); yielded once its record counts a run of each of its
    ``predictors``, killed afterwards. ``two_cpus``: pinned to two CPUs, its budget."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("PADDLE_DOCTOR_RECORD")}
    env.update(GLOG_minloglevel="3", PADDLE_DOCTOR_RECORD_DIR=str(records), **({"PADDLE_DOCTOR_RECORD": "1"} if switch else {}))
    pin = (lambda: os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])) if two_cpus else None
    service = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env, preexec_fn=pin)
    try:
        assert service.stdout.readline() == "ready\n"
        deadline = time.monotonic() + 60
        while not _every_predictor_ran(records, predictors):
            assert time.monotonic() < deadline, "the service wrote no record of its runs"
            time.sleep(0.05)
        yield service
    finally:
        service.kill()
        service.wait()


def _every_predictor_ran(records: Path, count: int) -> bool:
    for path in records.glob("*.json"):
        predictors = json.loads(path.read_text())["predictors"]  # written atomically: never half a file
        return len(predictors) == count and all(p["runs"]["runs"] for p in predictors)
    return False


@pytest.mark.slow
def test_a_recorded_service_is_diagnosed_from_its_record_with_no_flags(tmp_path):
    import shutil

    from paddle_doctor.verify.modelzoo import build_model

    cnn = build_model("cnn", "pir", tmp_path / "cnn")
    for stage in ("det", "cls", "rec"):
        shutil.copytree(cnn, tmp_path / "models" / stage)
    script = tmp_path / "app.py"
    script.write_text(OCR_SERVICE)
    records = tmp_path / "records"
    argv = [sys.executable, "-m", "paddle_doctor", "record", "--", sys.executable, str(script), str(tmp_path / "models")]
    with recorded_service(argv, records, 3, two_cpus=True) as service:
        result = run_doctor("--pid", str(service.pid), "--json", "--no-paddle", env={"PADDLE_DOCTOR_PID": ""}, timeout=300)
    report = report_json(result)
    assert f"read the record of process {service.pid} from {records}" in result.stderr
    predictors = report["service"]["predictors"]
    assert [Path(p["model"]["prog_file"]).parent.name for p in predictors] == ["det", "cls", "rec"]
    for recorded in predictors:
        config = recorded["config"]
        assert (config["cpu"]["threads"], config["cpu"]["onednn"], config["cpu"]["ir_optim"], config["device"]) == (10, True, True, "cpu")
        assert recorded["runs"]["shapes"][0]["inputs"][0]["shape"] == [1, 3, 224, 224]
        assert recorded["origin"]["threads_set_at"]["line"] == 9
    over = next(f for f in report["findings"] if f["rule_id"] == "PD-CPU-010")
    assert over["status"] == "fail" and "predictor 0 (det) 10 threads, set at" in over["observed"]
    assert not [f for f in report["findings"] if f["rule_id"].startswith("PD-GPU") and f["status"] == "fail"]
    threads = next(s for s in report["service"]["settings"] if s["name"] == "threads")
    assert threads["origin"] == "record" and threads["value"] == 10


def test_measure_takes_the_busiest_predictors_model_and_its_shapes_weighted_by_their_counts():
    from paddle_doctor.facts.recorded import InputsSeen, TensorSeen
    from paddle_doctor.service.record import measurements_of

    busy = predictor(1, 4, "rec", 80)
    shapes = [InputsSeen([TensorSeen([1, 3, 48, 320], "float32")], 60), InputsSeen([TensorSeen([1, 3, 48, 640], "float32")], 20)]
    busy = RecordedPredictor(**{**vars(busy), "runs": RunStats(**{**vars(busy.runs), "shapes": shapes}), "input_names": ["x"]})
    read = ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0, [predictor(0, 4, "det", 3), busy], 1, 4)
    first, second = measurements_of(read, 40)
    assert (first.predictor, first.model, first.budget_s) == (1, "/models/rec/inference", 20)
    assert first.shapes == ["x:1x3x48x320"] * 6 + ["x:1x3x48x640"] * 2
    assert (second.predictor, second.model, second.budget_s, second.not_measured) == (0, "/models/det/inference", 20, None)


def test_measure_splits_the_budget_and_says_which_predictors_it_leaves_out():
    from paddle_doctor.service.record import measurements_of

    in_memory = predictor(3, 4, "buffers", 1)
    in_memory = RecordedPredictor(**{**vars(in_memory), "model": ModelFiles(None, None, None, in_memory=True)})
    read = ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0,
                         [predictor(0, 4, "det", 50), predictor(1, 4, "cls", 40), predictor(2, 4, "rec", 30), in_memory], 1, 4)
    planned = measurements_of(read, 9)
    assert [(plan.predictor, plan.budget_s) for plan in planned] == [(0, 4.5), (1, 4.5), (2, 0.0), (3, 0.0)]
    assert planned[2].not_measured == ("not measured: --budget 9 s gives 2 of the 3 predictors 4 s or more each; "
                                       "--budget 12 measures them all")
    assert planned[3].not_measured == "not measured: its model was handed over in memory"
    assert [plan.budget_s for plan in measurements_of(read, 2)][:2] == [2.0, 0.0]  # the busiest is always measured


@pytest.mark.slow
def test_measure_with_no_model_measures_the_recorded_predictor(tmp_path):
    from paddle_doctor.verify.modelzoo import build_model

    cnn = build_model("cnn", "pir", tmp_path / "cnn")
    script = tmp_path / "app.py"
    script.write_text(f"""
import sys
import numpy as np
from paddle import inference
config = inference.Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
config.disable_gpu()
config.set_cpu_math_library_num_threads(2)
predictor = inference.create_predictor(config)
handle = predictor.get_input_handle(predictor.get_input_names()[0])
for batch in (1, 1, 1, 2):
    handle.copy_from_cpu(np.ones((batch, 3, 224, 224), "float32"))
    predictor.run()
print("ready", flush=True)
sys.stdin.readline()
""")
    with recorded_service([sys.executable, str(script)], tmp_path / "records", 1, switch=True) as service:
        result = run_doctor("--pid", str(service.pid), "--measure", "--budget", "4", "--json",
                            env={"PADDLE_DOCTOR_PID": ""}, timeout=600)
    report = report_json(result)
    assert f"measuring predictor 0: {cnn}/inference at" in result.stderr
    model = report["verification"]["model"]
    assert model["program"] == f"{cnn}/inference.json"
    (measured,) = model["inputs"].values()
    assert measured["shapes"] == [[1, 3, 224, 224]] * 6 + [[2, 3, 224, 224]] * 2 and measured["chosen_by"] == "--shape"
    threads = next(s for s in report["service"]["settings"] if s["name"] == "threads")
    assert threads["origin"] == "record" and threads["value"] == 2
    assert 0 <= report["service"]["busy_cpus_while_measured"] < 0.5  # the service idles on its stdin meanwhile
    assert "CPUs while it was measured beside it" in result.stderr


TWO_MODELS_SERVICE = """
import sys
import numpy as np
from paddle import inference

def build(folder, threads, onednn):
    config = inference.Config(folder + "/inference.json", folder + "/inference.pdiparams")
    config.disable_gpu()
    config.set_cpu_math_library_num_threads(threads)
    if not onednn:
        config.disable_mkldnn()
    return inference.create_predictor(config)

for folder, threads, onednn, shape, runs in ((sys.argv[1], 2, True, (1, 3, 224, 224), 4), (sys.argv[2], 1, False, (1, 3, 48, 160), 3)):
    predictor = build(folder, threads, onednn)
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    for _ in range(runs):
        handle.copy_from_cpu(np.ones(shape, "float32"))
        predictor.run()
print("ready", flush=True)
sys.stdin.readline()
"""


@pytest.mark.slow
def test_measure_measures_each_recorded_predictor_at_its_shapes_with_its_configuration(tmp_path):
    from paddle_doctor.verify.modelzoo import build_model

    cnn = build_model("cnn", "pir", tmp_path / "cnn")
    recognizer = build_model("recognizer", "pir", tmp_path / "recognizer")
    script = tmp_path / "app.py"
    script.write_text(TWO_MODELS_SERVICE)
    with recorded_service([sys.executable, str(script), str(cnn), str(recognizer)], tmp_path / "records", 2, switch=True) as service:
        result = run_doctor("--pid", str(service.pid), "--measure", "--budget", "10", "--json",
                            env={"PADDLE_DOCTOR_PID": ""}, timeout=600)
        text = run_doctor("--pid", str(service.pid), "--measure", "--budget", "3", env={"PADDLE_DOCTOR_PID": "", "COLUMNS": "300"},
                          timeout=600)
    report = report_json(result)
    assert "measuring 2 of the record's 2 predictors, 5 s each, the busiest first" in result.stderr
    first, second = report["service"]["measured"]
    assert (first["predictor"], first["model"], first["budget_s"]) == (0, f"{cnn}/inference", 5)
    assert first["shapes"] == ["image:1x3x224x224"] * 8 and first["baseline"]["threads"] == 2 and first["baseline"]["onednn"]
    assert report["verification"]["model"]["program"] == f"{cnn}/inference.json"  # the busiest's is the report's verification
    assert (second["predictor"], second["model"], second["budget_s"]) == (1, f"{recognizer}/inference", 5)
    assert second["shapes"] == ["x:1x3x48x160"] * 8
    assert (second["baseline"]["threads"], second["baseline"]["onednn"]) == (1, False)  # its own recorded configuration
    for measured in (first, second):
        assert measured["not_measured"] is None and measured["baseline_p50_ms"] > 0 and measured["seconds"] > 0
    readable = next(f for f in report["findings"] if f["rule_id"] == "PD-GRAPH-006")  # each model's graph was read
    assert readable["status"] == "pass" and readable["evidence"]["predictors"] == [0, 1]
    assert readable["message"].startswith("cnn, recognizer (") and f"{cnn}/inference.json: pir program" in readable["message"]
    # a budget too small for both measures the busiest and says what it left out
    assert text.returncode in (0, 1), text.stderr
    assert "predictor 1 (" in text.stderr and "not measured: --budget 3 s gives 1 of the 2 predictors" in text.stderr
    assert "measured predictor 1 " in text.stdout and "not measured: --budget 3 s" in text.stdout
    assert f"measured predictor 0 {cnn}/inference: image:1x3x224x224 x8, " in text.stdout
