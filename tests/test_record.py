"""The recording hook on real predictors: services run as real processes with recording on, and
what they record equals what their Config's getters say, however the service builds its
predictors; the service behaves the same when it crashes, is killed, or cannot write its record."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import jsonschema
import pytest
from conftest import REPO
from nonroot import NOBODY
from paddle_doctor.base.serde import from_data
from paddle_doctor.base.vocabulary import Recorder
from paddle_doctor.facts.recorded import Record
from paddle_doctor.recorder.live import Process, bucket, bucket_middle_ns, percentile_ns
from paddle_doctor.recorder.location import FOLDER, NATIVE, own_start_ticks, record_name, start_ticks
from paddle_doctor.recorder.writer import STALE_PARTIAL_S, Writer
from recorders import needs_c_recorder

SCHEMA = json.loads((REPO / "doctor" / "schemas" / "record.schema.json").read_text())

# Every service prints, beside what it does, what its Config's getters say just before it builds.
PRELUDE = '''
import json, sys, threading, time
import numpy as np

def truth(config, label):
    said = {"threads": config.cpu_math_library_num_threads(), "onednn": config.mkldnn_enabled(),
            "ir_optim": config.ir_optim(), "gpu": config.use_gpu(), "prog_file": config.prog_file(),
            "params_file": config.params_file(), "model_dir": config.model_dir(),
            "feed_fetch": config.use_feed_fetch_ops_enabled()}
    print("TRUTH", label, json.dumps(said), flush=True)

def run_once(predictor, batch=1):
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    handle.copy_from_cpu(np.ones((batch, 3, 224, 224), "float32"))
    predictor.run()

def most_at_once(spans):
    """The most of these (start, end) spans open at once: the service's own count of runs at once,
    from its clock around predictor.run(), which a recorder's clock inside it can only narrow."""
    points = sorted([(start, 1) for start, _ in spans] + [(end, 0) for _, end in spans])
    inside = most = 0
    for _, starts in points:
        inside += 1 if starts else -1
        most = max(most, inside)
    return most
'''


ONE_PREDICTOR = '''
    import paddle
    from paddle.inference import Config, create_predictor
    config = Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
    config.disable_gpu()
    predictor = create_predictor(config)
'''


@pytest.fixture(scope="module")
def cnn(tmp_path_factory) -> Path:
    from paddle_doctor.verify.modelzoo import build_model

    return build_model("cnn", "pir", tmp_path_factory.mktemp("record-model") / "cnn")


def service(folder: Path, body: str) -> Path:
    script = folder / "service.py"
    script.write_text(PRELUDE + textwrap.dedent(body), encoding="utf-8")
    return script


@pytest.fixture(params=[Recorder.NATIVE, Recorder.PYTHON], ids=str)
def recorder(request) -> Recorder:
    """Each recorder in turn: the C one (where it was built with the package: tests/recorders.py) and Python's."""
    if request.param is Recorder.NATIVE:
        needs_c_recorder()
    return request.param


def new_process(recorder: Recorder) -> Process:
    return Process(native=recorder is Recorder.NATIVE)


def service_env(records: Path | None, recorder: Recorder = Recorder.NATIVE, **more: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PADDLE_DOCTOR_RECORD")}
    env.update(GLOG_minloglevel="3", **more)
    if records is not None:
        env.update(PADDLE_DOCTOR_RECORD="1", PADDLE_DOCTOR_RECORD_DIR=str(records))
    if recorder is Recorder.PYTHON:
        env[NATIVE] = "0"
    return env


def run_service(script: Path, records: Path | None, *args: str, recorder: Recorder = Recorder.NATIVE,
                **more: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=180,
                          env=service_env(records, recorder, **more), cwd=script.parent)


def truths(result: subprocess.CompletedProcess) -> list[tuple[str, dict]]:
    said = [line.split(" ", 2) for line in result.stdout.splitlines() if line.startswith("TRUTH ")]
    return [(label, json.loads(text)) for _, label, text in said]


def the_record(records: Path) -> Record:
    (path,) = records.glob("*.json")
    data = json.loads(path.read_text())
    jsonschema.validate(data, SCHEMA)
    assert path.stat().st_mode & 0o777 == 0o600
    assert records.stat().st_mode & 0o777 == 0o700
    return from_data(Record, data)


def assert_equals_getters(predictor, said: dict) -> None:
    config, model = predictor.config, predictor.model
    assert (config.cpu.threads, config.cpu.onednn, config.cpu.ir_optim, config.cpu.feed_fetch) == \
        (said["threads"], said["onednn"], said["ir_optim"], said["feed_fetch"])
    assert (config.device == "gpu") == said["gpu"]
    assert (model.prog_file or "", model.params_file or "", model.model_dir or "") == \
        (said["prog_file"], said["params_file"], said["model_dir"])


def line_of(script: Path, text: str) -> int:
    return next(number for number, line in enumerate(script.read_text().splitlines(), 1) if text in line)


@pytest.mark.slow
def test_a_service_that_builds_its_config_directly(cnn, tmp_path, recorder):
    script = service(tmp_path, f'''
        from paddle.inference import Config, create_predictor
        config = Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
        config.disable_gpu()
        config.set_cpu_math_library_num_threads(3)
        config.enable_mkldnn()
        config.switch_ir_optim(False)
        truth(config, "main")
        predictor = create_predictor(config)
        for batch in (1, 1, 1, 2):
            run_once(predictor, batch)
    ''')
    result = run_service(script, tmp_path / "records", recorder=recorder)
    assert result.returncode == 0, result.stderr[-2000:]
    record = the_record(tmp_path / "records")
    (predictor,) = record.predictors
    assert_equals_getters(predictor, truths(result)[0][1])
    assert predictor.built_by == "create_predictor"
    assert predictor.origin.service.file == str(script) and predictor.origin.service.line == line_of(script, "create_predictor(config)")
    assert predictor.origin.builder == predictor.origin.service and predictor.origin.builder.package is None
    assert predictor.origin.threads_set_at.line == line_of(script, "set_cpu_math_library_num_threads")
    runs = predictor.runs
    assert runs.runs == 4 and runs.first_run_ms > 0 and 0 < runs.p50_ms <= runs.p90_ms <= runs.p99_ms
    assert {(tuple(seen.inputs[0].shape), seen.inputs[0].dtype, seen.runs) for seen in runs.shapes} == \
        {((1, 3, 224, 224), "float32", 3), ((2, 3, 224, 224), "float32", 1)}
    assert runs.shapes[0].runs == 3  # most frequent first
    assert record.paddle_version and record.pid > 0 and record.errors == [] and record.recorder is recorder
    assert (tmp_path / "records" / record_name(record.pid, record.start_ticks)).is_file()


@pytest.mark.slow
def test_one_shape_is_one_entry_whichever_kind_of_dtype_says_it(cnn, tmp_path, recorder):
    script = service(tmp_path, ONE_PREDICTOR.format(cnn=cnn) + '''
    run_once(predictor)  # copied in: numpy's dtype
    predictor.run()  # nothing copied: the input handle's PaddleDType.FLOAT32
    predictor.run([paddle.to_tensor(np.ones((1, 3, 224, 224), "float32"))])  # given: paddle.float32
''')
    result = run_service(script, tmp_path / "records", recorder=recorder)
    assert result.returncode == 0, result.stderr[-2000:]
    (seen,) = the_record(tmp_path / "records").predictors[0].runs.shapes
    assert ([(t.shape, t.dtype) for t in seen.inputs], seen.runs) == ([([1, 3, 224, 224], "float32")], 3)


@pytest.mark.slow
def test_runs_with_nothing_copied_in_record_what_the_input_handles_hold_however_they_changed(cnn, tmp_path, recorder):
    script = service(tmp_path, ONE_PREDICTOR.format(cnn=cnn) + '''
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    def images(batch):
        return np.ones((batch, 3, 224, 224), "float32")
    run_once(predictor)  # 1, copied in
    predictor.run(); predictor.run()  # 1 again, twice
    handle.share_external_data(paddle.to_tensor(images(2)))
    predictor.run(); predictor.run()  # 2, shared
    predictor.run([paddle.to_tensor(images(3))])  # 3, given: the handle holds it then
    predictor.run()  # 3
    handle.reshape([1, 3, 224, 224])
    predictor.run()  # 1, reshaped
    print("HANDLE", [tuple(handle.shape())], flush=True)
''')
    result = run_service(script, tmp_path / "records", recorder=recorder)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "HANDLE [(1, 3, 224, 224)]" in result.stdout
    runs = the_record(tmp_path / "records").predictors[0].runs
    assert {seen.inputs[0].shape[0]: seen.runs for seen in runs.shapes} == {1: 4, 2: 2, 3: 2} and runs.runs == 8


WRAPPER = '''
"""A wrapper package that builds a pipeline of three predictors from its settings file."""
import os
import yaml
from paddle import inference


def _predictor(folder, settings, cpu_threads):
    config = inference.Config(os.path.join(folder, "inference.json"), os.path.join(folder, "inference.pdiparams"))
    if settings["use_gpu"]:
        config.enable_use_gpu(500, 0)
    else:
        config.disable_gpu()
        config.set_cpu_math_library_num_threads(cpu_threads)
        if settings["onednn"]:
            config.enable_mkldnn()
    config.switch_use_feed_fetch_ops(False)
    report(config, os.path.basename(folder))
    return inference.create_predictor(config)


report = None


class Pipeline:
    def __init__(self, settings_file, cpu_threads=2):
        with open(settings_file) as handle:
            settings = yaml.safe_load(handle)
        self.stages = {stage: _predictor(settings[stage], settings, cpu_threads) for stage in ("det", "cls", "rec")}
'''


@pytest.mark.slow
def test_three_predictors_built_by_a_wrapper_package_in_a_site_folder(cnn, tmp_path):
    import shutil

    site = tmp_path / "site"
    (site / "textkit").mkdir(parents=True)
    (site / "textkit" / "__init__.py").write_text("from .engine import Pipeline\n")
    (site / "textkit" / "engine.py").write_text(WRAPPER)
    info = site / "textkit-1.4.2.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: textkit\nVersion: 1.4.2\n")
    (info / "top_level.txt").write_text("textkit\n")
    settings = {"use_gpu": False, "onednn": True}
    for stage in ("det", "cls", "rec"):
        shutil.copytree(cnn, tmp_path / stage)
        settings[stage] = str(tmp_path / stage)
    (tmp_path / "settings.yaml").write_text(json.dumps(settings))
    script = service(tmp_path, '''
        import textkit.engine
        textkit.engine.report = truth
        pipeline = textkit.Pipeline("settings.yaml", cpu_threads=5)
        for predictor in pipeline.stages.values():
            run_once(predictor)
    ''')
    result = run_service(script, tmp_path / "records", PYTHONPATH=str(site))
    assert result.returncode == 0, result.stderr[-2000:]
    record = the_record(tmp_path / "records")
    said = dict(truths(result))
    assert [Path(p.model.prog_file).parent.name for p in record.predictors] == ["det", "cls", "rec"]
    engine = site / "textkit" / "engine.py"
    for predictor in record.predictors:
        assert_equals_getters(predictor, said[Path(predictor.model.prog_file).parent.name])
        assert predictor.config.cpu.threads == 5 and predictor.config.cpu.onednn and predictor.config.device == "cpu"
        builder, own = predictor.origin.builder, predictor.origin.service
        assert (builder.package, builder.version, builder.path) == ("textkit", "1.4.2", "textkit/engine.py")
        assert builder.line == line_of(engine, "return inference.create_predictor(config)")
        assert (own.file, own.line, own.package) == (str(script), line_of(script, "textkit.Pipeline("), None)
        assert predictor.origin.threads_set_at.path == "textkit/engine.py"
        assert predictor.runs.runs == 1


def assert_concurrency_seen(record: Record, said: str, recorder: Recorder) -> None:
    """Runs at once, as many as the service saw at most around its own predictor.run() calls, and at
    least one: how many ran inside Paddle at once is Paddle's and the scheduler's (three clones in
    threads on 2 CPUs take turns in some rounds and not in others: Paddle 3.3.1's run() lets the
    GIL go only at times). The C recorder reads a run's end as Paddle returns; Python's reads it in a
    frame of its own, after its thread may have waited for the GIL, so its count can only be larger."""
    (seen,) = [int(line.split()[1]) for line in said.splitlines() if line.startswith("SEEN_AT_ONCE ")]
    assert 1 <= record.peak_concurrent_runs <= seen, (record.peak_concurrent_runs, seen, recorder)


@pytest.mark.slow
def test_a_clone_per_worker_thread_and_a_pool_run_concurrently(cnn, tmp_path, recorder):
    script = service(tmp_path, f'''
        from paddle.inference import Config, PredictorPool, create_predictor
        def config(threads):
            made = Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
            made.disable_gpu()
            made.set_cpu_math_library_num_threads(threads)
            truth(made, str(threads))
            return made
        main = create_predictor(config(2))
        workers = [main.clone() for _ in range(3)]
        pool = PredictorPool(config(1), 2)
        spans, seen, done, every_span = [], [], [], []
        def between_rounds():  # at least 15 rounds, and on until the service has seen two runs at once (by 1 ms)
            seen.extend(1 for a in spans for b in spans if b[0] < a[0] < b[1] - 1_000_000)
            every_span.extend(spans)
            spans.clear()
            done.append(len(done) >= 15 and bool(seen) or len(done) >= 300)
        rounds = threading.Barrier(3, action=between_rounds)
        def work(predictor):
            handle = predictor.get_input_handle(predictor.get_input_names()[0])
            while True:
                rounds.wait()
                if done[-1]:
                    return
                handle.copy_from_cpu(np.ones((1, 3, 224, 224), "float32"))
                start = time.perf_counter_ns()
                predictor.run()
                spans.append((start, time.perf_counter_ns()))
        threads = [threading.Thread(target=work, args=(predictor,)) for predictor in workers]
        for thread in threads: thread.start()
        for thread in threads: thread.join()
        print("ROUNDS", len(done) - 1, bool(seen), flush=True)
        print("SEEN_AT_ONCE", most_at_once(every_span), flush=True)
        run_once(pool.retrieve(1))
    ''')
    result = run_service(script, tmp_path / "records", recorder=recorder)
    assert result.returncode == 0, result.stderr[-2000:]
    (rounds, overlapped), = [line.split()[1:] for line in result.stdout.splitlines() if line.startswith("ROUNDS ")]
    assert overlapped == "True", f"the threads never waited on each other in {rounds} rounds: nothing to record at once"
    record = the_record(tmp_path / "records")
    said = dict(truths(result))
    main, *clones = [p for p in record.predictors if p.built_by in ("create_predictor", "clone")]
    pooled = [p for p in record.predictors if p.built_by == "pool"]
    assert [p.clone_of for p in clones] == [main.id] * 3 and main.runs.runs == 0
    assert all(p.runs.runs == int(rounds) >= 15 for p in clones)
    for predictor in [main, *clones]:
        assert_equals_getters(predictor, said["2"])
    assert [p.pool_size for p in pooled] == [2, 2] and [p.runs.runs for p in pooled] == [0, 1]
    for predictor in pooled:
        assert_equals_getters(predictor, said["1"])
    assert_concurrency_seen(record, result.stdout, recorder)
    assert record.peak_concurrent_threads == 2 * record.peak_concurrent_runs
    assert all(p.origin.service.line == line_of(script, "main.clone()") for p in clones)


@pytest.mark.slow
def test_a_threaded_server_records_concurrent_runs(cnn, tmp_path, recorder):
    script = service(tmp_path, f'''
        import http.server
        from paddle.inference import Config, create_predictor
        config = Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
        config.disable_gpu()
        config.set_cpu_math_library_num_threads(1)
        truth(config, "server")
        shared = create_predictor(config)
        import queue
        workers = queue.Queue()
        for _ in range(4):
            workers.put(shared.clone())
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                predictor = workers.get()
                began = time.perf_counter_ns()
                run_once(predictor, int(self.path.strip("/")))
                spans.append((began, time.perf_counter_ns()))
                workers.put(predictor)
                self.send_response(200); self.end_headers(); self.wfile.write(b"ok")
            def log_message(self, *args): pass
        spans = []
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        print("PORT", server.server_address[1], flush=True)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        sys.stdin.readline()
        server.shutdown()
        print("SEEN_AT_ONCE", most_at_once(spans), flush=True)
    ''')
    import threading
    import urllib.request

    server = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, env=service_env(tmp_path / "records", recorder))
    try:
        lines = []
        while not lines or not lines[-1].startswith("PORT"):
            lines.append(server.stdout.readline())
            assert lines[-1], server.stderr.read()[-2000:]
        port = int(lines[-1].split()[1])
        start = threading.Barrier(4)
        answers = []

        def client(batch):
            for _ in range(6):
                start.wait()
                answers.append(urllib.request.urlopen(f"http://127.0.0.1:{port}/{batch}", timeout=120).read())

        clients = [threading.Thread(target=client, args=(batch,)) for batch in (1, 1, 1, 2)]
        for thread in clients:
            thread.start()
        for thread in clients:
            thread.join(timeout=120)
        said_last, _ = server.communicate("stop\n", timeout=60)
        assert answers == [b"ok"] * 24
    finally:
        server.kill()
        server.wait()
    assert server.returncode == 0
    record = the_record(tmp_path / "records")
    said = dict(truths(subprocess.CompletedProcess([], 0, "".join(lines), "")))
    served = record.predictors[1:]
    assert sum(p.runs.runs for p in served) == 24 and len(record.predictors) == 5
    assert all(p.built_by == "clone" and p.clone_of == record.predictors[0].id for p in served)
    for predictor in record.predictors:
        assert_equals_getters(predictor, said["server"])
    assert_concurrency_seen(record, said_last, recorder)
    shapes = {}
    for predictor in served:
        for seen in predictor.runs.shapes:
            shapes[seen.inputs[0].shape[0]] = shapes.get(seen.inputs[0].shape[0], 0) + seen.runs
    assert shapes == {1: 18, 2: 6} and record.recorder is recorder


def wait_for_runs(records: Path, runs: int, deadline_s: float = 60) -> Record:
    """The record once it counts ``runs`` runs (the service writes it every 0.1 s here)."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        paths = list(records.glob("*.json"))
        if paths:
            record = from_data(Record, json.loads(paths[0].read_text()))  # written atomically: never half a file
            if record.predictors and record.predictors[0].runs.runs >= runs:
                return record
        time.sleep(0.05)
    raise AssertionError(f"no record of {runs} runs in {records} after {deadline_s} s")


def killed_once_recorded(script: Path, records: Path, said_first: str, runs: int, stderr=subprocess.DEVNULL) -> tuple[int, Record]:
    """The service started with its record written every 0.1 s, killed (SIGKILL) once it said
    ``said_first`` and its record counts ``runs`` runs: its PID, and that record."""
    process = subprocess.Popen([sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=stderr, text=True, env=service_env(records, PADDLE_DOCTOR_RECORD_INTERVAL="0.1"))
    try:
        assert process.stdout.readline() == said_first
        record = wait_for_runs(records, runs)
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
    finally:
        process.kill()
        process.wait()
    return process.pid, record


STEADY = ONE_PREDICTOR + '''
    for _ in range(3):
        run_once(predictor)
    print("ran 3", flush=True)
'''


@pytest.mark.slow
def test_a_killed_service_leaves_its_last_record(cnn, tmp_path, monkeypatch):
    script = service(tmp_path, STEADY.format(cnn=cnn) + "    sys.stdin.readline()\n")
    records = tmp_path / "records"
    pid, record = killed_once_recorded(script, records, "ran 3\n", 3)
    assert record.pid == pid and record.predictors[0].runs.runs == 3
    assert {partial.name.partition("-")[0] for partial in records.glob(".*.tmp")} <= {f".{pid}"}  # a write cut short
    aged(records.glob(".*.tmp"))
    written_once(records, monkeypatch)
    assert not list(records.glob(".*.tmp"))  # the next service to write swept it


def aged(paths) -> None:
    old = time.time() - STALE_PARTIAL_S - 5
    for path in paths:
        os.utime(path, (old, old))


def written_once(records: Path, monkeypatch) -> None:
    """This process's record written into ``records``, as a service's writer writes it."""
    monkeypatch.setenv(FOLDER, str(records))
    writer = Writer(Process())
    writer.write()
    assert writer.written.is_set(), writer.process.errors


def test_a_write_cut_short_is_swept_once_it_is_old_and_its_process_is_gone(tmp_path, monkeypatch):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    gone, me, ticks = int(finished.stdout), os.getpid(), own_start_ticks()
    partials = {name: tmp_path / name for name in [
        f".{gone}-5.json.a1.tmp",  # its process gone
        f".{me}-{ticks + 1}.json.b2.tmp",  # an earlier process that had this PID
        f".{me}-{ticks}.json.c3.tmp",  # a process still running
        f".{gone}-5.json.d4.tmp",  # its process gone, but written a moment ago
        ".notes.json.e5.tmp", ".x.tmp", f"{gone}-5.json",  # not a record's partial file; a record
    ]}
    for path in partials.values():
        path.write_text("{")
    aged(path for name, path in partials.items() if ".d4." not in name)
    written_once(tmp_path, monkeypatch)
    left = {path.name for path in tmp_path.iterdir()}
    assert left == set(partials) - {f".{gone}-5.json.a1.tmp", f".{me}-{ticks + 1}.json.b2.tmp"} | {record_name(me, ticks)}


@pytest.mark.slow
def test_a_service_that_crashes_in_native_code_crashes_the_same(cnn, tmp_path):
    crash = STEADY.format(cnn=cnn) + '''
    import glob, os, signal, time
    folder = os.environ.get("PADDLE_DOCTOR_RECORD_DIR")
    while folder and '"runs":3' not in "".join(open(path).read() for path in glob.glob(folder + "/*.json")):
        time.sleep(0.05)
    os.kill(os.getpid(), signal.SIGSEGV)
'''
    script = service(tmp_path, crash)
    without = run_service(script, None)
    recorded = run_service(script, tmp_path / "records", PADDLE_DOCTOR_RECORD_INTERVAL="0.1")
    assert recorded.returncode == without.returncode != 0

    def said(result):  # Paddle's crash report, without its times, addresses and process ids
        return re.sub(r"0x[0-9a-f]+|[0-9]+", "N", result.stdout)

    assert said(recorded) == said(without) and recorded.stdout.startswith("ran 3\n")
    assert the_record(tmp_path / "records").predictors[0].runs.runs >= 1


@pytest.mark.slow
@pytest.mark.parametrize("folder, why", [
    # sysfs takes no new folder, even from root (the tests run as root; Paddle cannot be imported as nobody here)
    (lambda tmp: Path("/sys/paddle-doctor-record-test"), "Operation not permitted"),
    (lambda tmp: tmp / "someone-else", "belongs to uid 65534"),
], ids=["unwritable", "not-the-users"])
def test_a_service_that_cannot_write_its_record_runs_the_same(cnn, tmp_path, folder, why):
    script = service(tmp_path, STEADY.format(cnn=cnn))
    records = folder(tmp_path)
    if records.parent == tmp_path:
        records.mkdir(mode=0o700)
        os.chown(records, NOBODY, NOBODY)
    without, recorded = run_service(script, None), run_service(script, records)
    assert recorded.returncode == without.returncode == 0, recorded.stderr[-2000:]
    assert recorded.stdout == without.stdout == "ran 3\n"
    said = [line for line in recorded.stderr.splitlines() if line.startswith("paddle-doctor record:")]
    assert len(said) == 1 and f"cannot write the record in {records}" in said[0] and why in said[0], said
    assert not records.exists() or not list(records.iterdir())


def test_recording_switched_on_imports_no_paddle():
    probe = "import sys; print('paddle' in sys.modules, 'paddle_doctor.recorder.hook' in sys.modules)"
    on = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                        env=service_env(Path("/nonexistent")))
    off = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=service_env(None))
    assert on.stdout.split() == ["False", "True"], on.stderr
    assert off.stdout.split() == ["False", "False"], off.stderr


def test_record_runs_the_command_in_its_own_place_with_recording_on(tmp_path):
    probe = "import os, sys; print(os.getpid(), os.environ['PADDLE_DOCTOR_RECORD'], os.environ['PADDLE_DOCTOR_RECORD_DIR'])"
    process = subprocess.Popen([sys.executable, "-m", "paddle_doctor", "record", "--dir", str(tmp_path), "--",
                                sys.executable, "-c", probe], stdout=subprocess.PIPE, text=True, env=service_env(None))
    out, _ = process.communicate(timeout=60)
    assert out.split() == [str(process.pid), "1", str(tmp_path)]
    assert process.returncode == 0


@pytest.mark.parametrize("args, said", [
    ([], "expected the command to run after --"),
    (["--", "/nonexistent/service"], "cannot run '/nonexistent/service'"),
])
def test_record_refuses_a_missing_command_in_one_line(args, said):
    result = subprocess.run([sys.executable, "-m", "paddle_doctor", "record", *args], capture_output=True, text=True,
                            timeout=60, env=service_env(None))
    assert result.returncode == 2
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_the_histogram_keeps_every_duration_within_its_bucket():
    for ns in (1, 15, 16, 17, 999, 1_000_000, 123_456_789, 10**11):
        middle = bucket_middle_ns(bucket(ns))
        assert abs(middle - ns) <= max(1, ns * 0.0625), ns
    counts = [0] * 512
    for ns in [1000] * 50 + [2000] * 40 + [8000] * 10:
        counts[bucket(ns)] += 1
    assert percentile_ns(counts, 0.5) == pytest.approx(1000, rel=0.07)
    assert percentile_ns(counts, 0.9) == pytest.approx(2000, rel=0.07)
    assert percentile_ns(counts, 0.99) == pytest.approx(8000, rel=0.07)
    assert percentile_ns([0] * 512, 0.5) is None


def test_start_ticks_is_counted_after_the_command_name():
    stat = "4242 (a) b (c)) S " + " ".join(str(field) for field in range(4, 22)) + " 98765 rest"  # field 22
    assert start_ticks(stat) == 98765
    assert start_ticks("garbage") is None
