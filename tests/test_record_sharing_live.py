"""Real services run under ``paddle-doctor record --`` on a small model: one predictor shared by 4
threads with no lock, a clone per thread, one predictor behind a lock, and a predictor built per
request one and two calls deep. What the record says of each predictor's threads and of the
predictors built equals what the service did (it says which threads ran what), and the doctor's
PD-SRC-005, PD-LOAD-001 and PD-SRC-004, read from the live process (``--pid``), say so."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import report_json, run_doctor_process
from paddle_doctor.base.serde import from_data
from paddle_doctor.base.vocabulary import Recorder
from paddle_doctor.facts.recorded import Record
from test_record import cnn, recorder, service_env  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

NO_PROBES = ("--no-paddle", "--no-gpu")
PRELUDE = '''
import json, os, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
import numpy as np
import paddle.inference as paddle_infer

def config():
    made = paddle_infer.Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
    made.disable_gpu()
    made.set_cpu_math_library_num_threads(1)
    return made

ran = {{}}  # thread ident: runs, as the service itself counts them

def infer(predictor, batch):
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    handle.copy_from_cpu(np.full((1, 3, 224, 224), batch, "float32"))
    time.sleep(0.002)  # the request's own work between its copy and its run (decoding, logging)
    predictor.run()
    out = predictor.get_output_handle(predictor.get_output_names()[0]).copy_to_cpu()
    ran[threading.get_ident()] = ran.get(threading.get_ident(), 0) + 1
    return out

def served():
    print("READY", json.dumps({{"pid": os.getpid(), "threads": len(ran), "runs": sum(ran.values())}}), flush=True)
    sys.stdin.read()  # serves until the test closes its stdin
'''
FOUR_THREADS = '''
with ThreadPoolExecutor(4) as pool:
    list(pool.map(handle, range(80)))
served()
'''  # 80 requests served by 4 threads, each request's handle()
SHARED = '''
predictor = paddle_infer.create_predictor(config())

def handle(batch):
    return infer(predictor, batch)
''' + FOUR_THREADS
CLONED = '''
predictor = paddle_infer.create_predictor(config())
local = threading.local()

def handle(batch):
    if not hasattr(local, "predictor"):
        local.predictor = predictor.clone()
    return infer(local.predictor, batch)
''' + FOUR_THREADS
LOCKED = '''
predictor = paddle_infer.create_predictor(config())
lock = threading.Lock()

def handle(batch):
    with lock:
        return infer(predictor, batch)
''' + FOUR_THREADS
PER_REQUEST = '''
def predict(batch):
    predictor = paddle_infer.create_predictor(config())  # BUILT
    return infer(predictor, batch)

for batch in [0, 1, 2, 3, 4]:
    predict(batch)
served()
'''
TWO_DEEP = '''
class Classifier:
    def _predictor(self):
        return paddle_infer.create_predictor(config())  # BUILT

    def predict(self, batch):
        return infer(self._predictor(), batch)

classifier = Classifier()

def route(batch):
    return classifier.predict(batch)

for batch in [0, 1, 2, 3, 4]:
    route(batch)
served()
'''


class Served:
    """The service under ``paddle-doctor record --``, done with its requests and serving on; its record and the doctor's report."""

    def __init__(self, folder: Path, cnn: Path, body: str, recorder: Recorder) -> None:
        self.script = folder / "service.py"
        self.script.write_text(PRELUDE.format(cnn=cnn) + textwrap.dedent(body))
        self.records, self.recorder = folder / "records", recorder
        env = service_env(None, recorder, PADDLE_DOCTOR_RECORD_INTERVAL="0.2")
        self.process = subprocess.Popen([sys.executable, "-m", "paddle_doctor", "record", "--dir", str(self.records), "--",
                                         sys.executable, str(self.script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=env, cwd=folder)
        line = self.process.stdout.readline()
        assert line.startswith("READY "), (line, self.process.stderr.read() if self.process.poll() is not None else "")
        self.said = json.loads(line.split(" ", 1)[1])
        time.sleep(1.0)  # a write of the record after the last run (every 0.2 s)

    def record(self) -> Record:
        (path,) = self.records.glob(f"{self.said['pid']}-*.json")
        record = from_data(Record, json.loads(path.read_text()))
        assert record.recorder == self.recorder and not record.errors, record
        return record

    def verdicts(self) -> dict[str, tuple[str, str]]:
        report = report_json(run_doctor_process("--pid", str(self.said["pid"]), "--json", *NO_PROBES, timeout=300))
        return {finding["rule_id"]: (finding["status"], finding["message"]) for finding in report["findings"]
                if finding["rule_id"] in ("PD-SRC-004", "PD-SRC-005", "PD-LOAD-001")}

    def stop(self) -> None:
        self.process.stdin.close()
        self.process.wait(timeout=60)


@pytest.fixture
def served(tmp_path, cnn, recorder):
    """The service, its runs noted by each recorder in turn (C and Python)."""
    started: list[Served] = []

    def start(body: str) -> Served:
        started.append(Served(tmp_path, cnn, body, recorder))
        return started[-1]

    yield start
    for service in started:
        service.stop()


def test_one_predictor_four_threads_share_with_no_lock_is_seen_crossing_and_fails_both_rules(served):
    service = served(SHARED)
    (predictor,) = service.record().predictors
    sharing = predictor.sharing
    assert service.said == {"pid": service.said["pid"], "threads": 4, "runs": 80}
    assert (predictor.runs.runs, sharing.run.count(), sharing.copy_from_cpu.count(), sharing.get_output_handle.count()) == (80, 4, 4, 4)
    assert sharing.crossed > 0, sharing  # a thread's inputs copied in, another's run() began before its own
    found = service.verdicts()
    for rule in ("PD-SRC-005", "PD-LOAD-001"):
        status, message = found[rule]
        assert status == "fail" and "was run by 4 threads" in message and "crossed another thread's" in message, (rule, message)
        print(f"shared, {rule}: {message}")
    assert found["PD-SRC-004"][0] == "pass", found["PD-SRC-004"]


def test_a_clone_per_thread_is_one_thread_each_and_passes_both_rules(served):
    service = served(CLONED)
    predictors = service.record().predictors
    ran = [predictor for predictor in predictors if predictor.runs.runs]
    assert service.said["threads"] == 4 and len(ran) == 4 and sum(p.runs.runs for p in ran) == 80
    assert all(p.built_by == "clone" and p.sharing.run.count() == 1 and p.sharing.crossed == 0 for p in ran), ran
    found = service.verdicts()
    for rule in ("PD-SRC-005", "PD-LOAD-001"):
        status, message = found[rule]
        assert status == "pass" and "was run from one thread" in message and "lock" not in message, (rule, message)
        print(f"clones, {rule}: {message}")


def test_one_predictor_behind_a_lock_is_four_threads_one_call_at_a_time_and_passes_without_the_record_claiming_the_lock(served):
    service = served(LOCKED)
    (predictor,) = service.record().predictors
    assert (predictor.sharing.run.count(), predictor.sharing.crossed, predictor.runs.peak_concurrency) == (4, 0, 1)
    found = service.verdicts()
    for rule in ("PD-SRC-005", "PD-LOAD-001"):
        status, message = found[rule]
        assert status == "pass" and "run by 4 threads: one call at a time" in message and "lock" not in message, (rule, message)
        print(f"lock, {rule}: {message}")


@pytest.mark.parametrize("body", [PER_REQUEST, TWO_DEEP], ids=["one call deep", "two calls deep"])
def test_a_predictor_built_per_request_is_seen_as_five_built_at_one_line_and_fails_per_request(served, body):
    service = served(body)
    predictors = service.record().predictors
    line = next(number for number, text in enumerate(service.script.read_text().splitlines(), 1) if "# BUILT" in text)
    assert len(predictors) == 5 and all(p.runs.runs == 1 and p.origin.builder.line == line for p in predictors), predictors
    status, message = service.verdicts()["PD-SRC-004"]
    assert status == "fail", message
    assert f"5 predictors of cnn were built at {service.script}:{line}, each run at most once (5 runs in all)" in message, message
    print(f"per request: {message}")
