"""``paddle-doctor fix --pid PID --measure --write --verify`` on a real service under ``paddle-doctor record --``
that builds its Config in its own code with too many threads and oneDNN off: the service's own calls are
edited, and the verification measures the record's model with the settings written (the running process
still runs its old configuration), then says to restart it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import run_doctor_process
from test_record import service_env

pytestmark = pytest.mark.slow

THREADS = 4 * (os.cpu_count() or 1)  # above any budget this machine can give
SERVICE = '''
import json, os, sys
import numpy as np
import paddle.inference as paddle_infer

THREADS = {threads}  # math threads of the predictor

config = paddle_infer.Config("{model}/inference.json", "{model}/inference.pdiparams")
config.disable_gpu()
config.set_cpu_math_library_num_threads(THREADS)
config.disable_mkldnn()  # off while the kernels are checked
predictor = paddle_infer.create_predictor(config)
predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(np.zeros((1, 3, 224, 224), "float32"))
predictor.run()
print("READY", json.dumps({{"pid": os.getpid()}}), flush=True)
sys.stdin.read()  # serves until the test closes its stdin
'''


def test_fix_edits_a_recorded_services_own_calls_and_verifies_the_settings_written(tmp_path, models):
    script = tmp_path / "service.py"
    script.write_text(textwrap.dedent(SERVICE.format(threads=THREADS, model=models["cnn-pir"])))
    before = script.read_text()
    env = service_env(None, PADDLE_DOCTOR_RECORD_INTERVAL="0.2")
    process = subprocess.Popen([sys.executable, "-m", "paddle_doctor", "record", "--dir", str(tmp_path / "records"), "--",
                                sys.executable, str(script)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        line = process.stdout.readline()
        assert line.startswith("READY "), (line, process.stderr.read() if process.poll() is not None else "")
        pid = json.loads(line.split(" ", 1)[1])["pid"]
        time.sleep(1.0)  # a write of the record after the run
        shown = run_doctor_process("fix", "--pid", str(pid), "--no-paddle", timeout=120)  # the findings' fixes, about recorded predictors
        fixed = run_doctor_process("fix", "--pid", str(pid), "--measure", "--budget", "12", "--write", "--verify", timeout=300)
    finally:
        process.stdin.close()
        process.wait(timeout=60)
    assert shown.returncode == 1, shown.stderr
    assert re.search(r"^\+THREADS = \d+  # math threads of the predictor$", shown.stdout, re.M), shown.stdout + shown.stderr
    assert fixed.returncode == 0, fixed.stderr
    after = script.read_text()
    assert f"THREADS = {THREADS}  # math threads of the predictor" not in after
    assert re.search(r"^THREADS = (\d+)  # math threads of the predictor$", after, re.M)  # the constant the call passes
    assert "config.enable_mkldnn()  # off while the kernels are checked" in after
    unchanged = [line for line in before.splitlines() if "THREADS =" not in line and "mkldnn" not in line]
    assert [line for line in after.splitlines() if "THREADS =" not in line and "mkldnn" not in line] == unchanged
    measured = re.search(r"the patched files set, as the service reads them when it starts, (.*); against the original it "
                         r"measured [\d.]+x (faster|slower) \(9\d% CI [\d.]+-[\d.]+x\): (\w[\w ]*)", fixed.stderr)
    assert measured, fixed.stderr
    assert "oneDNN on" in measured.group(1)
    assert "restart the service, then run paddle-doctor --measure" in fixed.stderr
