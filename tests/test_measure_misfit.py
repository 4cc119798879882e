"""--measure when a recorded predictor's shapes do not fit the model its record names (the model was
replaced on disk after the service loaded it): that predictor is "not measured" with the reason,
the others are measured, and the report comes out with the exit code of its findings, whether the
misfit is the busiest predictor (measured first: the report's own verification) or another one.

The service is real and recorded: three predictors of a detector (input x of [-1, 3, -1, -1]) and a
classifier, run at their shapes; then a detector's files are replaced by a line recognizer's (input
x of [-1, 3, 48, -1]), which the recorded 1x3x64x64 does not fit."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest
from conftest import report_json, run_doctor
from paddle_doctor.base.vocabulary import RecordStatus
from paddle_doctor.facts.service_record import ServiceRecord
from paddle_doctor.pipeline import _recorded_runs, _share_budget
from test_record_reading import OCR, recorded_service

SERVICE = """
import sys
import numpy as np
from paddle import inference

def build(folder):
    config = inference.Config(folder + "/inference.json", folder + "/inference.pdiparams")
    config.disable_gpu()
    config.set_cpu_math_library_num_threads(1)
    config.disable_mkldnn()  # the detector's PIR program has an attribute oneDNN's instructions refuse
    return inference.create_predictor(config)

for folder, shape, runs in ((sys.argv[1], (1, 3, 64, 64), 4), (sys.argv[2], (1, 3, 224, 224), 3), (sys.argv[3], (1, 3, 64, 64), 2)):
    predictor = build(folder)
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    for _ in range(runs):
        handle.copy_from_cpu(np.ones(shape, "float32"))
        predictor.run()
print("ready", flush=True)
sys.stdin.readline()
"""
MISFIT = "not measured: input 'x': expects float32 of shape [-1, 3, 48, -1] (-1 = any), given [1, 3, 64, 64]"


def _replace(model: Path, by: Path) -> None:
    for name in ("inference.json", "inference.pdiparams"):
        shutil.copyfile(by / name, model / name)


@pytest.mark.slow
def test_a_predictor_whose_recorded_shapes_do_not_fit_its_model_is_not_measured_and_the_others_are(tmp_path):
    from paddle_doctor.verify.modelzoo import build_model

    built = {kind: build_model(kind, "pir", tmp_path / "built" / kind) for kind in ("detector", "cnn", "recognizer")}
    busiest, classifier, other = (tmp_path / name for name in ("busiest", "classifier", "other"))
    for folder, kind in ((busiest, "detector"), (classifier, "cnn"), (other, "detector")):
        shutil.copytree(built[kind], folder)
    script = tmp_path / "app.py"
    script.write_text(SERVICE)
    argv = [sys.executable, str(script), str(busiest), str(classifier), str(other)]
    with recorded_service(argv, tmp_path / "records", 3, switch=True) as service:
        measured = {}
        for misfit in (busiest, other):
            _replace(misfit, built["recognizer"])
            measured[misfit] = run_doctor("--pid", str(service.pid), "--measure", "--budget", "12", "--json",
                                          env={"PADDLE_DOCTOR_PID": ""}, timeout=600)
            _replace(misfit, built["detector"])
    # the busiest misfits: the next one is measured first, and is the report's verification
    result = measured[busiest]
    assert result.returncode in (0, 1), result.stderr
    report = report_json(result)
    assert f"paddle-doctor: predictor 0 ({busiest}/inference) {MISFIT}" in result.stderr
    assert "measuring 2 of the record's 3 predictors" in result.stderr
    plans = report["service"]["measured"]
    assert [plan["predictor"] for plan in plans] == [0, 1, 2]
    assert plans[0]["not_measured"] == MISFIT
    assert all(plan["not_measured"] is None and plan["baseline_p50_ms"] > 0 for plan in plans[1:])
    assert report["verification"]["model"]["program"] == f"{classifier}/inference.json"
    # another one misfits: the busiest is measured first, the misfit is said, the last is measured
    result = measured[other]
    assert result.returncode in (0, 1), result.stderr
    report = report_json(result)
    assert f"paddle-doctor: predictor 2 ({other}/inference) {MISFIT}" in result.stderr
    plans = report["service"]["measured"]
    assert plans[2]["not_measured"] == MISFIT
    assert all(plan["not_measured"] is None and plan["baseline_p50_ms"] > 0 for plan in plans[:2])
    assert report["verification"]["model"]["program"] == f"{busiest}/inference.json"


def test_a_record_none_of_whose_models_can_be_measured_says_why_of_each_and_measures_nothing():
    """Its models are gone from the paths it names: nothing ends the doctor; the report says it of each."""
    record = ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", 1.0, OCR.predictors, 1, 10)
    said: list[str] = []
    recorded = _recorded_runs(record, None)
    assert recorded.first is None and recorded.runs == {}
    recorded = _share_budget(recorded, 12, said.append)
    assert said[0] == "paddle-doctor: measuring 0 of the record's 3 predictors"
    for plan, line, stage in zip(recorded.planned, said[1:], ("det", "cls", "rec")):
        why = (f"not measured: /models/{stage}/inference: no such file or directory, "
               "and no inference.json or inference.pdmodel beside it")
        assert (plan.not_measured, line) == (why, f"paddle-doctor: predictor {plan.predictor} (/models/{stage}/inference) {why}")
