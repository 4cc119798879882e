"""A service that forks after its first predictor, recorded for real: every child it forks (with
``os.fork``, a ``multiprocessing`` pool, gunicorn's ``--preload`` workers) writes a record of its own
while it lives, counting its own runs only (the parent's before the fork are the parent's), even
when it forked while the parent's writer held its lock."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from paddle_doctor.base.serde import from_data
from paddle_doctor.facts.recorded import Record
from paddle_doctor.recorder.location import record_name, start_ticks_of
from test_record import cnn, recorder, service, service_env  # noqa: F401 (fixtures)

# every service here builds its predictors so, and runs 3 before it forks
BUILD = '''
from paddle.inference import Config, create_predictor

def config():
    made = Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
    made.disable_gpu()
    made.set_cpu_math_library_num_threads(1)
    return made

predictor = create_predictor(config())
for _ in range(3):
    run_once(predictor)
'''
WAIT_S = 120  # generous: the children build and run predictors beside each other on a busy machine


def record_of(records: Path, pid: int) -> Record | None:
    """The record of the live process ``pid``, once written (atomically: never half a file)."""
    ticks = start_ticks_of(pid)
    path = records / record_name(pid, ticks or 0)
    try:
        return from_data(Record, json.loads(path.read_text()))
    except FileNotFoundError:
        return None


def runs_of(record: Record | None) -> list[int] | None:
    return [predictor.runs.runs for predictor in record.predictors] if record is not None else None


def wait_for_runs(records: Path, expected: dict[int, list[int]]) -> dict[int, list[int] | None]:
    """The runs each process's record counts per predictor, once each counts ``expected`` (or at the deadline)."""
    deadline = time.monotonic() + WAIT_S
    while True:
        seen = {pid: runs_of(record_of(records, pid)) for pid in expected}
        if seen == expected or time.monotonic() > deadline:
            return seen
        time.sleep(0.05)


def said(process: subprocess.Popen, word: str) -> list[str]:
    """The words after ``word`` on the first line of the service's output that starts with it."""
    for line in process.stdout:
        if line.startswith(word + " "):
            return line.split()[1:]
    raise AssertionError(f"the service never said {word}: {process.stderr.read()[-3000:]}")


def started(script: Path, records: Path, recorder, interval: str = "0.1") -> subprocess.Popen:
    env = service_env(records, recorder, PADDLE_DOCTOR_RECORD_INTERVAL=interval)
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env, cwd=script.parent)


def ended(process: subprocess.Popen, stop: Path) -> int:
    stop.touch()
    try:
        return process.wait(timeout=WAIT_S)
    finally:
        process.kill()
        process.wait()


FORKED = '''
import json, os, sys, threading
from paddle_doctor.recorder.callers import build_site
from paddle_doctor.recorder.live import Process
from paddle_doctor.recorder.writer import Writer, snapshot
from paddle_doctor.base.vocabulary import BuiltBy

class Held:
    """A predictor whose run() waits until it is let go."""
    def __init__(self):
        self.inside, self.leave = threading.Event(), threading.Event()
    def run(self):
        self.inside.set()
        self.leave.wait()
    def get_input_names(self):
        return []

process = Process(native=None if sys.argv[1] == "native" else False)
os.register_at_fork(after_in_child=Writer(process).forked)  # as the hook does
run = process.recorded_run(Held.run)
held, free = Held(), Held()
free.leave.set()
for predictor in (held, free):
    process.add(predictor, BuiltBy.CREATE_PREDICTOR, None, None, build_site(None))
for _ in range(3):
    run(free)
snapshot(process)  # 3 runs counted
run(free)  # one more ended, not yet taken
thread = threading.Thread(target=run, args=(held,))
thread.start()
held.inside.wait()  # and one running in another thread as the process forks
child = os.fork()
if child == 0:
    before = snapshot(process)
    run(free)
    after = snapshot(process)
    print(json.dumps([[p.runs.runs for p in record.predictors] + [record.peak_concurrent_runs] for record in (before, after)]))
    sys.stdout.flush()
    os._exit(0)
os.waitpid(child, 0)
held.leave.set()
thread.join()
print(json.dumps([p.runs.runs for p in snapshot(process).predictors]), flush=True)
'''


def test_the_child_of_a_fork_counts_none_of_the_runs_the_parent_ended_or_was_running(recorder):
    done = subprocess.run([sys.executable, "-c", FORKED, str(recorder)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    child, parent = map(json.loads, done.stdout.splitlines())
    assert child == [[0, 0, 0], [0, 1, 1]]  # [runs of each predictor, runs at once] before and after its own run
    assert parent == [1, 4]


FORKED_INSIDE_RUN = '''
import json, os, sys
from paddle_doctor.recorder.callers import build_site
from paddle_doctor.recorder.live import Process
from paddle_doctor.recorder.writer import Writer, snapshot
from paddle_doctor.base.vocabulary import BuiltBy

class Forking:
    """A predictor whose run() forks (a hook of the service's, called inside Paddle's run())."""
    def run(self):
        return os.fork()
    def get_input_names(self):
        return []

process = Process(native=None if sys.argv[1] == "native" else False)
os.register_at_fork(after_in_child=Writer(process).forked)
run = process.recorded_run(Forking.run)
forking = Forking()
process.add(forking, BuiltBy.CREATE_PREDICTOR, None, None, build_site(None))
child = run(forking)
if child == 0:
    ran_in_parent = snapshot(process)
    print(json.dumps([[p.runs.runs for p in record.predictors] for record in (ran_in_parent, snapshot(process))]), flush=True)
    os._exit(0)
os.waitpid(child, 0)
print(json.dumps([p.runs.runs for p in snapshot(process).predictors]), flush=True)
'''


def test_a_run_inside_which_the_process_forked_is_the_parents(recorder):
    done = subprocess.run([sys.executable, "-c", FORKED_INSIDE_RUN, str(recorder)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    child, parent = map(json.loads, done.stdout.splitlines())
    assert child == [[0], [0]] and parent == [1]


WAIT_FOR_STOP = '''
def until_stopped():
    while not os.path.exists("stop"):
        time.sleep(0.02)
'''


@pytest.mark.slow
def test_children_forked_after_the_first_predictor_each_record_their_own_runs(cnn, tmp_path, recorder):
    script = service(tmp_path, "import os\n" + WAIT_FOR_STOP + BUILD.format(cnn=cnn) + '''
children = []
for runs in (1, 2):
    child = os.fork()
    if child == 0:
        for _ in range(runs):
            run_once(predictor)
        until_stopped()
        os._exit(0)
    children.append(child)
print("CHILDREN", *children, flush=True)
until_stopped()
for child in children:
    os.waitpid(child, 0)
''')
    records = tmp_path / "records"
    service_process = started(script, records, recorder)
    try:
        first, second = map(int, said(service_process, "CHILDREN"))
        seen = wait_for_runs(records, {first: [1], second: [2], service_process.pid: [3]})
    finally:
        assert ended(service_process, tmp_path / "stop") == 0
    assert seen == {first: [1], second: [2], service_process.pid: [3]}  # none counts the parent's 3 as its own


@pytest.mark.slow
def test_every_worker_of_a_multiprocessing_pool_forked_records_its_own_runs(cnn, tmp_path, recorder):
    script = service(tmp_path, "import multiprocessing, os\n" + WAIT_FOR_STOP + BUILD.format(cnn=cnn) + '''
def start_worker(ready):
    own = create_predictor(config())  # built after the fork
    for _ in range(2):
        run_once(predictor)
    run_once(own)
    ready.put(os.getpid())

if __name__ == "__main__":
    context = multiprocessing.get_context("fork")
    ready = context.Queue()
    pool = context.Pool(4, initializer=start_worker, initargs=(ready,))
    print("WORKERS", *[ready.get(timeout=300) for _ in range(4)], flush=True)
    until_stopped()
    pool.terminate()
''')
    records = tmp_path / "records"
    service_process = started(script, records, recorder)
    try:
        workers = list(map(int, said(service_process, "WORKERS")))
        expected = {**{worker: [2, 1] for worker in workers}, service_process.pid: [3]}
        seen = wait_for_runs(records, expected)
    finally:
        assert ended(service_process, tmp_path / "stop") == 0
    assert len(set(workers)) == 4 and seen == expected  # the inherited predictor counts the worker's 2 runs, not 3 + 2


APP = '''
import pathlib
here = pathlib.Path(__file__).parent
served = []

def app(environ, start_response):
    """Runs the predictor once; a request waits until the other worker has one too (so both serve)."""
    (here / f"arrived-{os.getpid()}").touch()
    deadline = time.monotonic() + 100
    while len(list(here.glob("arrived-*"))) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    run_once(predictor)
    served.append(1)
    body = f"{os.getpid()} {len(served)}".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
'''


@pytest.mark.slow
def test_gunicorn_workers_of_a_preloaded_app_each_record_their_own_runs(cnn, tmp_path):
    service(tmp_path, "import os\n" + BUILD.format(cnn=cnn) + APP).rename(tmp_path / "app.py")
    records = tmp_path / "records"
    gunicorn = Path(sys.executable).parent / "gunicorn"
    command = [sys.executable, "-m", "paddle_doctor", "record", "--dir", str(records), "--", str(gunicorn), "--preload",
               "--workers", "2", "--worker-class", "sync", "--timeout", "300", "--bind", "127.0.0.1:0", "app:app"]
    env = service_env(None, PADDLE_DOCTOR_RECORD_INTERVAL="0.1", HOME=str(tmp_path))  # gunicorn's control socket goes there
    master = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        port = next(int(line.split("127.0.0.1:")[1].split()[0]) for line in master.stderr if "Listening at:" in line)
        answers: list[str] = []

        def request() -> None:
            answers.append(urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=WAIT_S).read().decode())

        clients = [threading.Thread(target=request) for _ in range(2)]
        for client in clients:
            client.start()
        for client in clients:
            client.join(timeout=WAIT_S)
        workers = {int(answer.split()[0]): int(answer.split()[1]) for answer in answers}
        expected = {**{worker: [served] for worker, served in workers.items()}, master.pid: [3]}
        seen = wait_for_runs(records, expected)
    finally:
        master.send_signal(signal.SIGTERM)
        try:
            master.wait(timeout=WAIT_S)
        finally:
            master.kill()
            master.wait()
    assert len(workers) == 2 and seen == expected, (answers, seen)


@pytest.mark.slow
def test_a_child_forked_while_the_writer_holds_its_lock_writes_its_record_at_exit(cnn, tmp_path, recorder):
    script = service(tmp_path, "import os\n" + '''
from paddle_doctor.recorder import hook
import paddle.inference
writer = hook.PROCESS.on_first_predictor.__self__
writing, forked = threading.Event(), threading.Event()
fold, parent = hook.PROCESS.fold, os.getpid()

def held_fold():  # the parent's writer's first write, held while it holds its lock, until the parent has forked
    if os.getpid() == parent:
        writing.set()
        forked.wait()
    fold()

hook.PROCESS.fold = held_fold
''' + BUILD.format(cnn=cnn) + '''
assert writing.wait(60) and writer.lock.locked()
child = os.fork()
if child == 0:
    for _ in range(2):
        run_once(predictor)
    print("CHILD", os.getpid(), flush=True)
    sys.exit(0)  # its record is written at exit only: the interval is an hour
forked.set()
print("CHILD_ENDED", os.waitpid(child, 0)[1], flush=True)
''')
    records = tmp_path / "records"
    service_process = started(script, records, recorder, interval="3600")
    out, err = service_process.communicate(timeout=WAIT_S)
    assert service_process.returncode == 0, err[-3000:]
    child = int(out.split("CHILD ")[1].split()[0])
    assert "CHILD_ENDED 0" in out
    (written,) = [from_data(Record, json.loads(path.read_text())) for path in records.glob(f"{child}-*.json")]
    assert runs_of(written) == [2] and written.errors == []  # written: the child's lock was free at its exit
    (parents,) = [from_data(Record, json.loads(path.read_text())) for path in records.glob(f"{service_process.pid}-*.json")]
    assert runs_of(parents) == [3]
