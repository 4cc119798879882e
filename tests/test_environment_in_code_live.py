"""A real service under ``paddle-doctor record --`` that sets OMP_NUM_THREADS in its code before it
imports Paddle, on a small model, with each recorder in turn: its record notes the value the process
saw as it imported Paddle (not the one it was started with, which /proc/PID/environ still says), and
PD-CPU-013, read from the live process, judges that value; a service that leaves it unset is told
that import paddle sets it to 1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import pytest
from conftest import report_json, run_doctor_process
from paddle_doctor.base.serde import from_data
from paddle_doctor.facts.recorded import Record
from test_record import recorder, service_env  # noqa: F401 (fixtures)

pytestmark = pytest.mark.slow

THREADS = str(4 * (os.cpu_count() or 1))  # above any budget this machine can give
SERVICE = '''
import json, os, sys
{setting}
import numpy as np
import paddle.inference as paddle_infer

config = paddle_infer.Config("{model}/inference.json", "{model}/inference.pdiparams")
config.disable_gpu()
config.set_cpu_math_library_num_threads(1)
predictor = paddle_infer.create_predictor(config)
predictor.get_input_handle(predictor.get_input_names()[0]).copy_from_cpu(np.zeros((1, 3, 224, 224), "float32"))
predictor.run()
print("READY", json.dumps({{"pid": os.getpid(), "omp": os.environ.get("OMP_NUM_THREADS")}}), flush=True)
sys.stdin.read()  # serves until the test closes its stdin
'''


def served(tmp_path, model, recorder, setting: str) -> tuple[dict, Record, dict]:
    """The service's own word (its PID, OMP_NUM_THREADS after import paddle), its record, and the doctor's PD-CPU-013."""
    script = tmp_path / "service.py"
    script.write_text(textwrap.dedent(SERVICE.format(setting=setting, model=model)))
    records = tmp_path / "records"
    env = service_env(None, recorder, PADDLE_DOCTOR_RECORD_INTERVAL="0.2", OMP_NUM_THREADS="1")
    if not setting:
        env.pop("OMP_NUM_THREADS")
    process = subprocess.Popen([sys.executable, "-m", "paddle_doctor", "record", "--dir", str(records), "--", sys.executable, str(script)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path)
    try:
        line = process.stdout.readline()
        assert line.startswith("READY "), (line, process.stderr.read() if process.poll() is not None else "")
        said = json.loads(line.split(" ", 1)[1])
        time.sleep(1.0)  # a write of the record after the run (every 0.2 s)
        (path,) = records.glob(f"{said['pid']}-*.json")
        record = from_data(Record, json.loads(path.read_text()))
        report = report_json(run_doctor_process("--pid", str(said["pid"]), "--json", "--no-paddle", "--no-gpu", timeout=300))
        (found,) = [finding for finding in report["findings"] if finding["rule_id"] == "PD-CPU-013"]
        return said, record, found
    finally:
        process.stdin.close()
        process.wait(timeout=60)


def test_omp_num_threads_set_in_code_before_import_paddle_is_recorded_and_judged(tmp_path, models, recorder):
    said, record, found = served(tmp_path, models["cnn-pir"], recorder, f'os.environ["OMP_NUM_THREADS"] = "{THREADS}"')
    assert said["omp"] == THREADS  # what the service itself reads after import paddle
    assert record.recorder == recorder and not record.errors, record
    assert record.environment is not None and record.environment.get("OMP_NUM_THREADS") == THREADS, record.environment
    print(f"set in code, PD-CPU-013: {found['status']}: {found['message']}")
    assert found["status"] == "fail", found
    assert f"OMP_NUM_THREADS={THREADS} (" in found["message"] and "as it imported Paddle" in found["message"], found


def test_a_service_that_leaves_omp_num_threads_unset_is_told_paddle_sets_it_to_one(tmp_path, models, recorder):
    said, record, found = served(tmp_path, models["cnn-pir"], recorder, "")
    assert said["omp"] == "1"  # import paddle set it (KI-012)
    assert record.environment is not None and "OMP_NUM_THREADS" not in record.environment, record.environment
    print(f"left unset, PD-CPU-013: {found['status']}: {found['message']}")
    assert found["status"] in ("pass", "fail") and "KI-012" in found["message"], found
