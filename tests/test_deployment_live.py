"""A real gunicorn service of 2 sync workers, each building its predictor in ``post_fork`` with
``set_cpu_math_library_num_threads(N)``, on 2 CPUs (the service's CPU affinity), under load from a client:
the doctor (a new interpreter, as a user starts it: a doctor forked from the test process
stalls the test's load while it runs) reads the master and the workers the processes really are, each worker's own record, and
PD-CPU-010 counts the threads of every worker against the budget, from the master's PID, a worker's, with
no flags (in a PID namespace of its own, as in a container) and, without a record, from each worker's busy threads."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import report_json, run_doctor_process
from test_record import cnn, service_env  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

GUNICORN = Path(sys.executable).parent / "gunicorn"
NO_PROBES = ("--no-paddle", "--no-gpu")
WAIT_S = 180  # two workers build their predictors beside each other on a busy machine
APP = '''
import os
import numpy as np
import paddle.inference as paddle_infer

predictor = None
threads = None

def build():
    """Called in each worker after the fork (gunicorn.conf.py's post_fork): a predictor of its own."""
    global predictor, threads
    config = paddle_infer.Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
    config.disable_gpu()
    config.set_cpu_math_library_num_threads(int(os.environ["WORKER_THREADS"]))
    threads = config.cpu_math_library_num_threads()
    predictor = paddle_infer.create_predictor(config)

def app(environ, start_response):
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    handle.copy_from_cpu(np.ones((1, 3, 224, 224), "float32"))
    predictor.run()
    body = f"{{os.getpid()}} {{os.getppid()}} {{threads}}".encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
    return [body]
'''
CONF = '''
workers = 2
worker_class = "sync"
timeout = 300

def post_fork(server, worker):
    import app
    app.build()
'''


def two_cpus() -> list[int]:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        pytest.skip("the service is given 2 CPUs of this process's; it may use fewer")
    return cpus[:2]


def written(folder: Path, cnn: Path) -> Path:
    (folder / "app.py").write_text(APP.format(cnn=cnn))
    (folder / "gunicorn.conf.py").write_text(CONF)
    return folder


class Service:
    """gunicorn started (under ``paddle-doctor record`` with ``records``), answering; its workers as they say."""

    def __init__(self, folder: Path, threads: int, records: Path | None):
        cpus = two_cpus()
        command = [str(GUNICORN), "-c", "gunicorn.conf.py", "--bind", "127.0.0.1:0", "app:app"]
        if records is not None:
            command = [sys.executable, "-m", "paddle_doctor", "record", "--dir", str(records), "--", *command]
        env = service_env(None, PADDLE_DOCTOR_RECORD_INTERVAL="0.2", HOME=str(folder), WORKER_THREADS=str(threads))
        self.master = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                                       cwd=folder, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
        self.port = next(int(line.split("127.0.0.1:")[1].split()[0]) for line in self.master.stderr if "Listening at:" in line)
        threading.Thread(target=self.master.stderr.read, daemon=True).start()  # gunicorn's log, never blocking it
        self.workers: dict[int, tuple[int, int]] = {}  # pid: (its parent, the threads its Config says)
        self.stopping = threading.Event()
        deadline = time.monotonic() + WAIT_S
        while len(self.workers) < 2 and time.monotonic() < deadline:
            self._ask_both()
        assert len(self.workers) == 2, self.workers
        self.load = [threading.Thread(target=self._loaded, daemon=True) for _ in range(3)]
        for client in self.load:
            client.start()

    def _ask(self) -> None:
        pid, parent, threads = map(int, urllib.request.urlopen(f"http://127.0.0.1:{self.port}/", timeout=WAIT_S).read().split())
        self.workers[pid] = (parent, threads)

    def _ask_both(self) -> None:
        clients = [threading.Thread(target=self._ask) for _ in range(2)]  # two at once: each sync worker serves one
        for client in clients:
            client.start()
        for client in clients:
            client.join(timeout=WAIT_S)

    def _loaded(self) -> None:
        while not self.stopping.is_set():
            try:
                self._ask()
            except OSError:
                return

    def stop(self) -> None:
        self.stopping.set()
        self.master.send_signal(signal.SIGTERM)
        try:
            self.master.wait(timeout=60)
        finally:
            self.master.kill()
            self.master.wait()


@pytest.fixture
def gunicorn(tmp_path, cnn):
    started: list[Service] = []

    def start(threads: int, records: Path | None) -> Service:
        started.append(Service(written(tmp_path, cnn), threads, records))
        return started[-1]

    yield start
    for service in started:
        service.stop()


def over_budget(report: dict) -> dict:
    return next(finding for finding in report["findings"] if finding["rule_id"] == "PD-CPU-010")


def assert_the_processes_are_the_services(report: dict, service: Service, threads: int, recorded: bool) -> None:
    rows = {row["pid"]: row for row in report["service"]["processes"]}
    workers = sorted(service.workers)
    assert {pid: row["role"] for pid, row in rows.items()} == {service.master.pid: "master", **dict.fromkeys(workers, "worker")}
    assert all(service.workers[pid] == (service.master.pid, threads) for pid in workers)  # what each worker says it runs
    assert rows[service.master.pid]["maps_paddle"] is False and all(rows[pid]["maps_paddle"] for pid in workers)
    assert all(rows[pid]["rss_bytes"] > 0 and rows[pid]["threads"] > 1 for pid in workers)
    if recorded:
        assert [(rows[pid]["predictors"], rows[pid]["math_threads"]) for pid in workers] == [(1, threads), (1, threads)]
        assert all(Path(rows[pid]["record"]).name.startswith(f"{pid}-") for pid in workers)  # each worker's own record
        assert rows[service.master.pid]["record"] is None  # the master built no predictor


@pytest.mark.parametrize("threads", [4, 2])
def test_recorded_workers_fail_the_budget_from_the_masters_pid_and_each_workers(gunicorn, tmp_path, threads):
    service = gunicorn(threads, tmp_path / "records")
    total = 2 * threads
    for pid in (service.master.pid, *sorted(service.workers)):
        result = run_doctor_process("--pid", str(pid), "--json", *NO_PROBES, timeout=300)
        report = report_json(result)
        assert_the_processes_are_the_services(report, service, threads, recorded=True)
        over = over_budget(report)
        assert over["status"] == "fail", (pid, over, result.stderr[-2000:])
        assert over["message"].startswith(f"{total} threads (2 workers × {threads}) on a budget of 2 CPUs"), over["message"]
        print(f"--pid {pid}: {over['message']}")  # shown with -s: the message itself


DRIVER = '''
import json, os, subprocess, sys, threading, time, urllib.request

cwd, command, doctor = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
master = subprocess.Popen(command, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
port = next(int(line.split("127.0.0.1:")[1].split()[0]) for line in master.stderr if "Listening at:" in line)
threading.Thread(target=master.stderr.read, daemon=True).start()
workers, stop = {}, threading.Event()

def ask():
    pid, parent, threads = map(int, urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=180).read().split())
    workers[pid] = [parent, threads]

def load():
    while not stop.is_set():
        ask()

deadline = time.monotonic() + 180
while len(workers) < 2 and time.monotonic() < deadline:
    pair = [threading.Thread(target=ask) for _ in range(2)]
    [client.start() for client in pair]
    [client.join() for client in pair]
for _ in range(3):
    threading.Thread(target=load, daemon=True).start()
env = {name: value for name, value in os.environ.items() if name != "PADDLE_DOCTOR_PID"}  # no flags: the doctor looks
report = subprocess.run([sys.executable, "-m", "paddle_doctor", *doctor], capture_output=True, text=True, env=env)
stop.set()
master.terminate()
master.wait(timeout=60)
print(json.dumps({"master": master.pid, "workers": workers, "report": report.stdout, "stderr": report.stderr}))
'''


def in_a_pid_namespace(folder: Path, threads: int, records: Path | None, *doctor: str) -> dict:
    """gunicorn, its load and the doctor in a PID namespace of their own, as in a container (the doctor's --pid
    auto sees only them): what the workers said and the doctor's report."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("a PID namespace of its own needs unshare and root")
    cpus = two_cpus()
    command = [str(GUNICORN), "-c", "gunicorn.conf.py", "--bind", "127.0.0.1:0", "app:app"]
    if records is not None:
        command = [sys.executable, "-m", "paddle_doctor", "record", "--dir", str(records), "--", *command]
    env = service_env(None, PADDLE_DOCTOR_RECORD_INTERVAL="0.2", HOME=str(folder), WORKER_THREADS=str(threads))
    done = subprocess.run([unshare, "--pid", "--fork", "--mount-proc", sys.executable, "-c", DRIVER, str(folder),
                           json.dumps(command), json.dumps(list(doctor))], capture_output=True, text=True, env=env,
                          timeout=600, preexec_fn=lambda: os.sched_setaffinity(0, cpus))
    if done.returncode != 0 and "unshare" in done.stderr and not done.stdout:
        pytest.skip(f"no PID namespace here: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_with_no_flags_the_one_gunicorn_service_in_the_container_is_found_and_fails_the_budget(tmp_path, cnn):
    said = in_a_pid_namespace(written(tmp_path, cnn), 4, tmp_path / "records", "--json", *NO_PROBES)
    report = json.loads(said["report"])
    workers = {int(pid): tuple(seen) for pid, seen in said["workers"].items()}
    assert len(workers) == 2 and all(seen == (said["master"], 4) for seen in workers.values()), said
    rows = {row["pid"]: row["role"] for row in report["service"]["processes"]}
    assert rows == {said["master"]: "master", **dict.fromkeys(workers, "worker")}, said["stderr"][-2000:]
    assert report["service"]["process"]["chosen_because"].startswith("a worker of the only service with Paddle mapped (gunicorn: master")
    over = over_budget(report)
    assert over["status"] == "fail" and over["message"].startswith("8 threads (2 workers × 4) on a budget of 2 CPUs"), over
    print(f"no flags: {over['message']}")


def test_without_a_record_each_worker_runs_the_threads_its_source_sets(gunicorn, tmp_path):
    """No record: the launcher leads to app.py, whose post_fork hook sets 4 threads, and that count (not a
    sample of busy threads, which under load may read fewer) is each worker's; every worker is seen serving."""
    service = gunicorn(4, None)
    report = report_json(run_doctor_process("--pid", str(service.master.pid), "--json", *NO_PROBES, timeout=300))
    assert_the_processes_are_the_services(report, service, 4, recorded=False)
    rows = [row for row in report["service"]["processes"] if row["role"] == "worker"]
    assert all(row["record"] is None and row["busy_threads"] >= 1 for row in rows), rows  # each worker serves under load
    said = {setting["name"]: setting for setting in report["service"]["settings"]}
    assert (said["threads"]["value"], said["threads"]["origin"]) == (4, "source"), said["threads"]
    over = over_budget(report)
    assert over["status"] == "fail" and over["message"].startswith("8 threads (2 workers × 4)"), over
    print(f"no record: {over['message']}")
