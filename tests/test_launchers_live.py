"""A real ``gunicorn -c gunicorn.conf.py app:app`` service (2 sync workers, each building its predictor in
``post_fork``), under load: from the master's PID the doctor follows gunicorn's console script to its entry
point, finds ``app.py`` on the service's sys.path (its working directory), reads gunicorn.conf.py as gunicorn
does (its workers, its worker class) and as source (its post_fork hook leads to the Config built in
``app.build``), and the configuration's workers are the 2 the live deployment runs. And ``uvicorn app:app
--workers 2``, whose spawned workers' command lines name no code: the master's does."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import report_json, run_doctor_process
from test_deployment_live import NO_PROBES, gunicorn  # noqa: F401 (fixtures)
from test_record import cnn, service_env  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow


def test_gunicorn_app_app_leads_to_the_apps_file_its_settings_and_the_config_its_post_fork_hook_builds(gunicorn, tmp_path):
    service = gunicorn(2, None)
    report = report_json(run_doctor_process("--pid", str(service.master.pid), "--json", *NO_PROBES, timeout=300))
    source = report["service"]["source"]
    launcher = source["launcher"]
    folder = tmp_path.resolve()
    assert (launcher["launcher"], launcher["target"], launcher["entry"], launcher["reason"]) == ("gunicorn", "app:app", str(folder / "app.py"), None)
    assert "its entry point in" in launcher["entry_source"] and "gunicorn" in launcher["entry_source"]  # the venv's gunicorn dist-info
    assert launcher["config_files"] == [str(folder / "gunicorn.conf.py")]
    settings = {setting["name"]: (setting["value"], setting["detail"]) for setting in launcher["settings"]}
    assert settings["workers"] == (2, f"{folder / 'gunicorn.conf.py'}:2 workers = 2")
    assert settings["worker_class"] == ("sync", f"{folder / 'gunicorn.conf.py'}:3 worker_class = \"sync\"")
    assert launcher["live"] == f"the live deployment runs 2 workers, as {folder / 'gunicorn.conf.py'}:2 workers = 2 says"
    assert sorted(service.workers) == sorted(row["pid"] for row in report["service"]["processes"] if row["role"] == "worker")
    assert source["files"][:2] == [str(folder / "app.py"), str(folder / "gunicorn.conf.py")]
    assert [(config["file"], config["line"]) for config in source["configs"]] == [(str(folder / "app.py"), 12)]
    predictor = source["predictors"][0]
    assert (predictor["function"], predictor["caller"]) == ("build", "post_fork")
    instances = {setting["name"]: setting for setting in report["service"]["settings"]}["instances"]
    assert (instances["value"], instances["origin"]) == (2, "launcher")


UVICORN_APP = '''
import json
import os

import numpy as np
import paddle.inference as paddle_infer

config = paddle_infer.Config("{cnn}/inference.json", "{cnn}/inference.pdiparams")
config.disable_gpu()
config.set_cpu_math_library_num_threads(2)
predictor = paddle_infer.create_predictor(config)


async def app(scope, receive, send):
    if scope["type"] != "http":
        return
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    handle.copy_from_cpu(np.ones((1, 3, 224, 224), "float32"))
    predictor.run()
    body = json.dumps([os.getpid(), os.getppid()]).encode()
    await send({{"type": "http.response.start", "status": 200, "headers": [(b"content-length", str(len(body)).encode())]}})
    await send({{"type": "http.response.body", "body": body}})
'''


def test_uvicorn_workers_spawned_by_their_master_run_the_app_its_command_line_names(tmp_path, cnn):
    (tmp_path / "app.py").write_text(UVICORN_APP.format(cnn=cnn))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(Path(sys.executable).parent / "uvicorn"), "app:app", "--workers", "2", "--host", "127.0.0.1", "--port", str(port)]
    master = subprocess.Popen(command, cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=service_env(None))
    try:
        workers: dict[int, int] = {}
        deadline = time.monotonic() + 180
        while len(workers) < 2 and time.monotonic() < deadline:
            try:
                pid, parent = json.loads(urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60).read())
                workers[pid] = parent
            except OSError:
                time.sleep(0.5)
        assert len(workers) == 2 and set(workers.values()) == {master.pid}, workers
        threading.Thread(target=lambda: [urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=60) for _ in range(20)], daemon=True).start()
        report = report_json(run_doctor_process("--pid", str(master.pid), "--json", *NO_PROBES, timeout=300))
    finally:
        master.terminate()
        master.wait(timeout=60)
    launcher = report["service"]["source"]["launcher"]
    folder = tmp_path.resolve()
    assert (launcher["launcher"], launcher["target"], launcher["entry"]) == ("uvicorn", "app:app", str(folder / "app.py"))
    assert launcher["entry_source"].startswith(f"/proc/{master.pid}/cmdline")  # the spawned worker's own names no code
    assert launcher["live"] == f"the live deployment runs 2 workers, as --workers 2, the command line (/proc/{master.pid}/cmdline) says"
    assert sorted(row["pid"] for row in report["service"]["processes"] if row["role"] == "worker") == sorted(workers)
    said = {setting["name"]: setting for setting in report["service"]["settings"]}
    assert (said["threads"]["value"], said["instances"]["value"], said["instances"]["origin"]) == (2, 2, "launcher")
