"""Dynamic-shape models measured at the shapes the service sees: --shape sets, --inputs folders of
.npz samples, a shape-range file in the model folder; and the report saying which shapes were
measured, which dimensions were dynamic and what chose them."""

from __future__ import annotations

import subprocess
import sys

import jsonschema
import numpy as np
import pytest
from conftest import report_json, run_doctor
from machine import observed, skip_unless
from paddle_doctor.graph.program import read_program
from paddle_doctor.verify.model import (
    DEFAULT_CHOICE,
    ModelError,
    input_specs,
    locate_model,
    plan_inputs,
    worker_samples,
)
from paddle_doctor.verify.npz import read_npz_header
from paddle_doctor.verify.shape_range import FILE_NAME, read_opt_shapes

pytestmark = pytest.mark.timing  # judges live timings: .ci/run runs these again on the machine as it is


def specs_of(path):
    return input_specs(read_program(locate_model(path).program))


def test_dynamic_dimensions_are_read_from_the_program(models):
    (recognizer,) = specs_of(models["recognizer-pir"])
    (detector,) = specs_of(models["detector-pir"])
    assert (recognizer.name, recognizer.shape) == ("x", [-1, 3, 48, -1])
    assert detector.shape == [-1, 3, -1, -1]


def test_defaults_are_said_to_be_defaults(models):
    inputs, samples = plan_inputs(specs_of(models["recognizer-pir"]), [], batch_size=1)
    assert inputs["x"].shapes == [[1, 3, 48, 224]] and inputs["x"].chosen_by == DEFAULT_CHOICE
    assert inputs["x"].dynamic_axes == [0, 3] and samples == []


def test_a_shape_set_is_measured_in_turn(models):
    inputs, _ = plan_inputs(specs_of(models["recognizer-pir"]), ["x:1x3x48x320", "x:1x3x48x160", "x:1x3x48x640"], 1)
    assert inputs["x"].shapes == [[1, 3, 48, 320], [1, 3, 48, 160], [1, 3, 48, 640]] and inputs["x"].chosen_by == "--shape"
    assert [sample["x"].shape for sample in worker_samples(inputs)] == inputs["x"].shapes


@pytest.mark.parametrize("shapes, message", [
    (["x:1x3x32x320"], "expects float32 of shape [-1, 3, 48, -1] (-1 = any), given [1, 3, 32, 320]"),
    (["x:1x3x48"], "given [1, 3, 48]"),
    (["image:1x3x48x320"], "the model has no input 'image'"),
])
def test_shapes_that_do_not_fit_are_named(models, shapes, message):
    with pytest.raises(ModelError) as error:
        plan_inputs(specs_of(models["recognizer-pir"]), shapes, 1)
    assert message in str(error.value)


def test_shape_sets_of_different_sizes_are_refused():
    from paddle_doctor.verify.model import InputSpec

    specs = [InputSpec("a", "float32", [-1, 8]), InputSpec("b", "float32", [-1, 8])]
    with pytest.raises(ModelError, match=r"different numbers of shapes \(a 2, b 3\)"):
        plan_inputs(specs, ["a:1x8", "a:2x8", "b:1x8", "b:2x8", "b:3x8"], 1)
    inputs, _ = plan_inputs(specs, ["a:1x8", "a:2x8", "b:4x8"], 1)  # one shape goes with every sample
    assert [(s["a"].shape, s["b"].shape) for s in worker_samples(inputs)] == [([1, 8], [4, 8]), ([2, 8], [4, 8])]


@pytest.fixture(scope="module")
def recognizer_with_shape_file(models, tmp_path_factory):
    """The recogniser with the shape-range file Paddle itself writes (collect_shape_range_info) after
    serving widths 160, 320 and 320."""
    folder = tmp_path_factory.mktemp("recognizer-shapes")
    for name in ("inference.json", "inference.pdiparams"):
        (folder / name).write_bytes((models["recognizer-pir"] / name).read_bytes())
    script = f"""
import numpy as np, paddle.inference as pi
config = pi.Config({str(folder / 'inference.json')!r}, {str(folder / 'inference.pdiparams')!r})
config.disable_gpu()
config.collect_shape_range_info({str(folder / FILE_NAME)!r})
predictor = pi.create_predictor(config)
for width in (160, 320, 320):
    handle = predictor.get_input_handle("x")
    handle.reshape([1, 3, 48, width])
    handle.copy_from_cpu(np.zeros((1, 3, 48, width), "float32"))
    predictor.run()
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={"GLOG_minloglevel": "2", "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-500:]
    return folder


def test_the_opt_shapes_of_a_shape_range_file_are_used_and_named(recognizer_with_shape_file):
    shape_file = recognizer_with_shape_file / FILE_NAME
    assert read_opt_shapes(shape_file)["x"][:3] == [1, 3, 48]
    inputs, _ = plan_inputs(specs_of(recognizer_with_shape_file), [], 1, shape_file)
    assert inputs["x"].shapes == [read_opt_shapes(shape_file)["x"]]
    assert inputs["x"].chosen_by == f"the opt shape in {shape_file}"
    flagged, _ = plan_inputs(specs_of(recognizer_with_shape_file), ["x:1x3x48x96"], 1, shape_file)  # a flag wins
    assert flagged["x"].shapes == [[1, 3, 48, 96]]


def test_a_folder_of_npz_samples_with_the_batch_the_model_accepts(models, tmp_path):
    for index, (batch, width) in enumerate([(2, 320), (1, 160)]):
        np.savez(tmp_path / f"sample{index}.npz", x=np.zeros((batch, 3, 48, width), "float32"))
    inputs, samples = plan_inputs(specs_of(models["recognizer-pir"]), [], 1, inputs_path=str(tmp_path))
    assert inputs["x"].shapes == [[2, 3, 48, 320], [1, 3, 48, 160]]
    assert inputs["x"].chosen_by == f"--inputs {tmp_path} (2 samples)" and len(samples) == 2
    assert read_npz_header(samples[0])["x"].shape == (2, 3, 48, 320)


@pytest.mark.parametrize("make, message", [
    (lambda p: np.save(p / "x.npy", np.zeros((1, 3, 48, 32), "float32")) or p / "x.npy", "not an .npz archive"),
    (lambda p: (p / "x.txt").write_text("1 2 3") and p / "x.txt", "not an .npz archive"),
    (lambda p: np.savez(p / "x.npz", y=np.zeros(3)) or p / "x.npz", "input 'x' is missing (the file has y"),
    (lambda p: np.savez(p / "x.npz", x=np.zeros((1, 3, 48, 32), "float64")) or p / "x.npz", "input 'x' is float64, the model expects float32"),
    (lambda p: np.savez(p / "x.npz", x=np.zeros((1, 3, 32, 32), "float32")) or p / "x.npz", "has shape [1, 3, 32, 32], the model expects [-1, 3, 48, -1]"),
    (lambda p: p, "the folder holds no .npz file"),
    (lambda p: p / "missing.npz", "no such file or folder"),
])
def test_inputs_that_are_not_usable_are_one_line_naming_the_file(models, tmp_path, make, message):
    path = make(tmp_path)
    result = run_doctor("--pid", "none", "--model", str(models["recognizer-pir"]), "--inputs", str(path), "--budget", "3")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    (line,) = result.stderr.strip().splitlines()
    assert f"--inputs {path}" in line and message in line


@pytest.fixture(scope="module")
def recognizer_report(models):
    """The issue's case: a dynamic-width recogniser run as --threads 8 --shape x:1x3x48x320, over
    two widths here so that the per-shape figures are exercised too; with the machine's conditions
    while it measured."""
    with observed() as machine:
        result = run_doctor("--json", "--pid", "none", "--model", str(models["recognizer-pir"]), "--threads", "8",
                            "--shape", "x:1x3x48x320", "--shape", "x:1x3x48x160", "--budget", "12", timeout=300)
    return result, report_json(result), machine.conditions


def test_the_report_names_the_shapes_measured_and_what_chose_them(recognizer_report, report_schema):
    _, report, conditions = recognizer_report
    jsonschema.validate(report, report_schema)
    (x,) = report["verification"]["model"]["inputs"].values()
    assert x["declared"] == [-1, 3, 48, -1] and x["shapes"] == [[1, 3, 48, 320], [1, 3, 48, 160]] and x["chosen_by"] == "--shape"
    baseline = report["verification"]["recommendation"]["baseline"]
    assert len(baseline["sample_p50"]) == 2 and all(p50 > 0 for p50 in baseline["sample_p50"])
    skip_unless(conditions)
    assert baseline["sample_p50"][0] > baseline["sample_p50"][1] * 1.2  # twice the width is clearly slower


def test_the_recommendation_fits_the_budget_the_doctor_enforces(recognizer_report):
    result, report, _ = recognizer_report
    found = {f["rule_id"]: f for f in report["findings"]}
    budget = report["host"]["cpu_budget"]
    recommendation = report["verification"]["recommendation"]
    if budget < 8:
        assert found["PD-CPU-010"]["status"] == "fail"
        assert recommendation["enforced"] == ["PD-CPU-010"]
        assert "exceed the CPU budget (PD-CPU-010)" in recommendation["steps"][0]
    assert recommendation["config"]["threads"] <= max(1, int(budget))
    assert f"set_cpu_math_library_num_threads({recommendation['config']['threads']})" in recommendation["snippet"]
    compile(recommendation["snippet"], "snippet", "exec")
    if found["PD-CFG-001"]["status"] == "fail":
        assert str(recommendation["config"]["threads"]) in found["PD-CFG-001"]["evidence"]["recommended_calls"]


def test_run_to_run_variation_is_judged_within_each_shape():
    """Two widths 2x apart are the mix, not variation: cv compares each run with its own shape's median."""
    from paddle_doctor.facts.predictor import PredictorConfig
    from paddle_doctor.verify.measure import Measurer, Warmed

    measurer = Measurer(None, 0.03, sample_count=2)
    config = PredictorConfig(threads=1, onednn=True)
    key = config.key()
    measurer.loaded[key] = Warmed(create_ms=10.0, first_ms=20.0, warm_ms=3.0)
    measurer.samples[key] = [4.0, 2.0, 4.1, 2.05, 3.9, 1.95] * 5
    measurer.sample_of_run[key] = [0, 1] * 15
    arm = measurer.arm_result("baseline", config)
    assert arm.sample_p50 == [4.0, 2.0]
    assert arm.cv < 0.03  # over the mix it would be about 0.35
    assert arm.p50 == pytest.approx(3.0, abs=1.0)


def test_the_shape_cache_experiment_grows_the_services_shapes(models, tmp_path):
    config = tmp_path / "service.yaml"
    config.write_text("onednn_cache_capacity: 0\nthreads: 1\n")
    report = report_json(run_doctor("--json", "--pid", "none", "--model", str(models["recognizer-pir"]), "--config", str(config),
                                    "--shape", "x:1x3x48x320", "--shape", "x:1x3x48x160", "--budget", "4", timeout=300))
    memory = next(f for f in report["findings"] if f["rule_id"] == "PD-MEM-001")["verification"]
    assert memory["status"] == "measured" and memory["onednn_cache"]["shapes"] == 12


def test_grown_shapes_keep_every_input_s_batch_the_same():
    """A detector with an image of dynamic size beside batch-only inputs (im_shape, scale_factor):
    the image grows, the batch of all three stays; a model with only a dynamic batch grows it everywhere."""
    from paddle_doctor.facts.verification import ModelInput
    from paddle_doctor.verify.experiments import VARYING_SHAPES, varying_shapes

    detector = {"image": ModelInput("image", "float32", [-1, 3, -1, -1], [[1, 3, 640, 640]], "--shape"),
                "im_shape": ModelInput("im_shape", "float32", [-1, 2], [[1, 2]], "defaults"),
                "scale_factor": ModelInput("scale_factor", "float32", [-1, 2], [[1, 2]], "defaults")}
    shapes = varying_shapes(detector)
    assert len(shapes) == VARYING_SHAPES and len({tuple(s["image"]) for s in shapes}) == VARYING_SHAPES
    assert all(s["im_shape"] == [1, 2] and s["scale_factor"] == [1, 2] and s["image"][0] == 1 for s in shapes)
    encoder = {"ids": ModelInput("ids", "int64", [-1, 128], [[1, 128]], "defaults"),
               "mask": ModelInput("mask", "int64", [-1, 128], [[1, 128]], "defaults")}
    assert all(s["ids"][0] == s["mask"][0] for s in varying_shapes(encoder))


def test_a_truncated_npy_header_is_named(tmp_path):
    import zipfile

    from paddle_doctor.verify.npz import NpzError

    path = tmp_path / "cut.npz"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("x.npy", b"\x93NUMPY\x02\x00\x10\x00\x00")  # a version 2 header cut short
    with pytest.raises(NpzError, match="cut.npz: x.npy"):
        read_npz_header(path)
