"""The recorder's runs, noted by ``run()`` and folded into the record by the writer: runs that
straddle snapshots are each counted once and against every run they overlap, the runs waiting
between two folds are bounded (and the record says what it did not count), and a service killed
while it runs and writes leaves its last record whole. Each holds for the runs noted in C and in
Python (the ``recorder`` fixture)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import numpy as np
import pytest
from paddle_doctor.base.serde import from_data
from paddle_doctor.base.vocabulary import BuiltBy, Device, Recorder
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.recorded import BuildSite, Record, RecordedConfig
from paddle_doctor.recorder.live import FOLD_AT, MAX_EVENTS, Process
from paddle_doctor.recorder.writer import snapshot
from test_record import SCHEMA, killed_once_recorded, new_process, recorder, service, service_env  # noqa: F401 (a fixture)


class Gate:
    """A do-nothing predictor whose ``run()`` waits at the barriers it is given, so a test holds runs
    inside ``run()`` while it takes snapshots."""

    def __init__(self, *barriers: threading.Barrier) -> None:
        self.barriers = barriers

    def run(self) -> None:
        for barrier in self.barriers:
            barrier.wait(timeout=30)

    def copy_from_cpu(self, data: np.ndarray) -> None:
        pass

    def get_input_names(self) -> list[str]:
        return ["x"]

    def get_input_handle(self, name: str) -> Gate:
        return self

    def shape(self) -> list[int]:
        return [1, 3]

    def type(self) -> str:
        return "DataType.FLOAT32"


def recording(recorder: Recorder, threads: list[int], *barriers: threading.Barrier) -> tuple[Process, list[Gate], object, object]:
    """A recorder with one predictor of each number of math threads, built through it."""
    process = new_process(recorder)
    gates = [Gate(*barriers) for _ in threads]
    for gate, count in zip(gates, threads):
        config = RecordedConfig(PredictorConfig(threads=count, onednn=False), Device.CPU)
        process.add(gate, BuiltBy.CREATE_PREDICTOR, config, None, BuildSite(None, None))
    return process, gates, process.recorded_run(Gate.run), process.recorded_copy(Gate.copy_from_cpu)


def in_threads(work, *args_each: tuple) -> list[threading.Thread]:
    threads = [threading.Thread(target=work, args=args) for args in args_each]
    for thread in threads:
        thread.start()
    return threads


def test_runs_held_inside_run_across_snapshots_count_once_and_all_at_once(recorder):
    inside, leave = threading.Barrier(4), threading.Barrier(4)  # three runs and the test
    process, gates, run, copy = recording(recorder, [2, 3, 4], inside, leave)
    rounds = 5

    def work(gate):
        for _ in range(rounds):
            copy(gate, np.ones((1, 3), "float32"))
            run(gate)

    threads = in_threads(work, *[(gate,) for gate in gates])
    for _ in range(rounds):
        inside.wait(timeout=30)  # every run is inside run(): the snapshot folds while they run
        during = snapshot(process)
        leave.wait(timeout=30)
    for thread in threads:
        thread.join(timeout=30)
    after = snapshot(process)
    assert during.peak_concurrent_runs == 3 and during.peak_concurrent_threads == 9
    assert [p.runs.runs for p in during.predictors] == [rounds - 1] * 3  # the held runs are not counted yet
    assert [p.runs.runs for p in after.predictors] == [rounds] * 3
    assert (after.peak_concurrent_runs, after.peak_concurrent_threads) == (3, 9)
    assert [p.runs.peak_concurrency for p in after.predictors] == [1, 1, 1]
    assert [(s.inputs[0].shape, s.inputs[0].dtype, s.runs) for p in after.predictors for s in p.runs.shapes] == \
        [([1, 3], "float32", rounds)] * 3


def test_a_long_run_straddling_snapshots_overlaps_short_runs_that_ended_before_it(recorder):
    long_started, long_released = threading.Barrier(2), threading.Barrier(2)
    short_started, short_released = threading.Barrier(2), threading.Barrier(2)
    process = new_process(recorder)
    long_gate, short_gate = Gate(long_started, long_released), Gate(short_started, short_released)
    for gate, threads in ((long_gate, 5), (short_gate, 1)):
        process.add(gate, BuiltBy.CREATE_PREDICTOR, RecordedConfig(PredictorConfig(threads=threads, onednn=False), Device.CPU),
                    None, BuildSite(None, None))
    run = process.recorded_run(Gate.run)
    (long_thread,) = in_threads(run, (long_gate,))
    long_started.wait(timeout=30)
    first = snapshot(process)  # the long run is inside run(), alone
    (short_thread,) = in_threads(run, (short_gate,))
    short_started.wait(timeout=30)
    short_released.wait(timeout=30)
    short_thread.join(timeout=30)
    second = snapshot(process)  # the short run began after the first snapshot and has ended
    long_released.wait(timeout=30)
    long_thread.join(timeout=30)
    third = snapshot(process)
    assert (first.peak_concurrent_runs, first.peak_concurrent_threads) == (1, 5)
    assert [p.runs.runs for p in first.predictors] == [0, 0]
    assert (second.peak_concurrent_runs, second.peak_concurrent_threads) == (2, 6)
    assert [p.runs.runs for p in second.predictors] == [0, 1]
    assert [p.runs.runs for p in third.predictors] == [1, 1]
    assert (third.peak_concurrent_runs, third.peak_concurrent_threads) == (2, 6)
    assert third.predictors[0].runs.first_run_ms > third.predictors[1].runs.first_run_ms


def test_two_runs_of_one_predictor_at_once_are_its_concurrency(recorder):
    inside, leave = threading.Barrier(3), threading.Barrier(3)
    process, (gate,), run, _ = recording(recorder, [2], inside, leave)
    threads = in_threads(run, (gate,), (gate,))
    inside.wait(timeout=30)
    snapshot(process)
    leave.wait(timeout=30)
    for thread in threads:
        thread.join(timeout=30)
    record = snapshot(process)
    assert record.predictors[0].runs.runs == 2 and record.predictors[0].runs.peak_concurrency == 2
    assert (record.peak_concurrent_runs, record.peak_concurrent_threads) == (2, 4)


def test_runs_waiting_between_two_folds_are_bounded_and_those_not_counted_are_said(recorder):
    process, (gate,), run, _ = recording(recorder, [1])
    for _ in range(FOLD_AT):
        run(gate)
    assert not process.wake.is_set()
    run(gate)
    assert process.wake.is_set()  # the writer is woken to fold them
    for _ in range(MAX_EVENTS + 100 - FOLD_AT - 1):
        run(gate)
    assert process.runs.waiting == MAX_EVENTS
    record = snapshot(process)
    assert record.predictors[0].runs.runs == MAX_EVENTS and process.runs.waiting == 0
    assert record.errors == [f"100 runs not counted: more than {MAX_EVENTS} ran between two folds"]
    run(gate)
    assert snapshot(process).predictors[0].runs.runs == MAX_EVENTS + 1


class Given:
    """A do-nothing predictor that takes its inputs as ``run(inputs)``, as Paddle's does, and returns them."""

    def run(self, inputs: list[np.ndarray]) -> list[np.ndarray]:
        return inputs

    def get_input_names(self) -> list[str]:
        return []


def test_run_given_its_inputs_by_position_or_by_name_records_their_shapes_and_returns_what_run_returns(recorder):
    process, given = new_process(recorder), Given()
    run = process.recorded_run(Given.run)
    process.live_of(given)
    one, two = [np.ones((2, 5), "float32")], [np.ones((4, 5), "int64"), np.ones((1,), "float32")]
    assert run(given, one) is one and run(given, inputs=two) is two and run(given, one) is one
    with pytest.raises(TypeError):
        run(given, data=one)  # a keyword Paddle's run() does not take either
    runs = snapshot(process).predictors[0].runs
    assert runs.runs == 3
    assert [([t.shape for t in s.inputs], [t.dtype for t in s.inputs], s.runs) for s in runs.shapes] == \
        [([[2, 5]], ["float32"], 2), ([[4, 5], [1]], ["int64", "float32"], 1)]


WOKEN = '''
import json, time
from paddle_doctor.recorder.live import FOLD_AT, Process
from paddle_doctor.recorder.writer import Writer

class Nothing:
    def run(self): pass
    def get_input_names(self): return []

process, nothing = Process(), Nothing()
run = process.recorded_run(Nothing.run)
process.on_first_predictor = Writer(process).start
process.live_of(nothing)
writer = process.on_first_predictor.__self__
writer.written.wait(30)
path = next(writer.folder.glob("*.json"))
first = path.read_text()
for _ in range(FOLD_AT + 10):
    run(nothing)
deadline = time.monotonic() + 30
while process.runs.waiting and time.monotonic() < deadline:  # the writer, woken, folds them
    time.sleep(0.01)
print(json.dumps({"waiting": process.runs.waiting, "rewritten": path.read_text() != first, "recorder": process.recorder}), flush=True)
'''


def test_the_writer_folds_runs_piling_up_before_its_interval_and_writes_them_at_exit(recorder, tmp_path):
    records = tmp_path / "records"
    env = service_env(records, recorder, PADDLE_DOCTOR_RECORD_INTERVAL="3600")
    env.pop("PADDLE_DOCTOR_RECORD")
    done = subprocess.run([sys.executable, "-c", WOKEN], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"waiting": 0, "rewritten": False, "recorder": recorder}  # folded, not written, in the interval
    (path,) = records.glob("*.json")
    record = from_data(Record, json.loads(path.read_text()))  # the record written at exit
    assert record.predictors[0].runs.runs == FOLD_AT + 10 and record.errors == []


@pytest.fixture(scope="module")
def cnn(tmp_path_factory) -> Path:
    from paddle_doctor.verify.modelzoo import build_model

    return build_model("cnn", "pir", tmp_path_factory.mktemp("record-model") / "cnn")


@pytest.mark.slow
def test_a_service_killed_while_it_runs_and_writes_leaves_a_whole_last_record(cnn, tmp_path):
    import jsonschema

    script = service(tmp_path, textwrap.dedent(f'''
        from paddle.inference import Config, create_predictor
        config = Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
        config.disable_gpu()
        config.set_cpu_math_library_num_threads(1)
        first = create_predictor(config)
        predictors = [first, first.clone()]
        def work(predictor):
            while True:
                run_once(predictor)
        for predictor in predictors:
            threading.Thread(target=work, args=(predictor,), daemon=True).start()
        print("running", flush=True)
        sys.stdin.readline()
    '''))
    records = tmp_path / "records"
    pid, seen = killed_once_recorded(script, records, "running\n", 20)
    (path,) = records.glob("*.json")
    data = json.loads(path.read_text())
    jsonschema.validate(data, SCHEMA)
    last = from_data(Record, data)
    assert last.pid == pid and last.errors == [] and not list(records.glob(".*.tmp"))
    assert last.predictors[0].runs.runs >= seen.predictors[0].runs.runs >= 20
    assert 1 <= last.peak_concurrent_runs <= 2 and all(p.runs.peak_concurrency == 1 for p in last.predictors)
