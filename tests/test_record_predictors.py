"""Every check of a service setting judges every predictor the service recorded: one finding per rule,
the worst, naming the predictors it is about and where each was built. The records under
tests/fixtures/records/ are a RapidOCR service's (rapidocr-paddle 1.4.5 building det, cls and rec),
the first as recorded, the others with one setting changed in some predictors."""

from __future__ import annotations

import functools
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from factories import AVX2_FLAGS, by_rule, graph_facts, make_facts
from paddle_doctor.base.serde import from_data
from paddle_doctor.base.vocabulary import Effect, ExperimentStatus, Origin, Recorder, RecordStatus
from paddle_doctor.checks import (
    bf16_unused,
    dropout_left,
    fusion_coverage,
    gpu_memory,
    gpu_precision,
    gpu_visibility,
    graph_switches,
    onednn,
    onednn_cache,
    optim_cache,
    tensorrt_coverage,
    warmup,
)
from paddle_doctor.facts import GpuDevice, GpuFacts, ServiceConfig, SourceFacts, SourceLocation, SourceSetting
from paddle_doctor.facts.graph import GraphFacts, TensorRTShare
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.recorded import Record
from paddle_doctor.facts.service_config import SettingOrigin
from paddle_doctor.facts.service_record import PredictorMeasured, ServiceRecord
from paddle_doctor.facts.verification import (
    BASELINE,
    ArmResult,
    ComparisonResult,
    ExperimentResult,
    ModelFacts,
    VerificationFacts,
    WarmupResult,
)
from paddle_doctor.judge.findings import Status, Verdict
from paddle_doctor.judge.per_predictor import judged_predictors
from paddle_doctor.judge.rules import load_rules
from paddle_doctor.judge.runner import run_checks
from paddle_doctor.service import ServiceOptions
from paddle_doctor.service.record import recorded_settings
from paddle_doctor.service.resolve import merge_origins, resolve_service

HERE = Path(__file__).parent
RECORDS = HERE / "fixtures" / "records"
SCHEMA = json.loads((HERE.parent / "doctor" / "schemas" / "record.schema.json").read_text())
SITE = "rapidocr-paddle 1.4.5 rapidocr_paddle/utils/infer_engine.py:53"
DET, CLS, REC = "ch_PP-OCRv4_det_infer", "ch_ppocr_mobile_v2_cls_infer", "ch_PP-OCRv4_rec_infer"


def recorded(name: str, changes: dict[int, dict[str, Any]] | None = None) -> ServiceRecord:
    """The record fixture ``name``, with ``changes`` made to predictors by id: ``{2: {"config.device": "gpu"}}``."""
    data = json.loads((RECORDS / name).read_text())
    for predictor, changed in (changes or {}).items():
        for path, value in changed.items():
            *parents, leaf = path.split(".")
            functools.reduce(lambda part, key: part[key], parents, data["predictors"][predictor])[leaf] = value
    record = from_data(Record, data)
    return ServiceRecord(RecordStatus.READ, None, f"/tmp/records/{name}", record.paddle_version, record.written_at,
                         record.predictors, record.peak_concurrent_runs, record.peak_concurrent_threads, record.recorder)


def facts_of(name: str, flags: dict | None = None, source: SourceFacts | None = None, cpu_flags=AVX2_FLAGS,
             changes: dict[int, dict[str, Any]] | None = None):
    read = recorded(name, changes)
    service, origins = resolve_service(ServiceOptions(**(flags or {})), source, recorded=recorded_settings(read))
    return replace(make_facts(flags=cpu_flags), service=service, service_origins=origins, service_record=read)


@pytest.mark.parametrize("name", sorted(path.name for path in RECORDS.glob("*.json")))
def test_every_record_fixture_is_a_record_the_schema_validates(name):
    jsonschema.validate(json.loads((RECORDS / name).read_text()), SCHEMA)


# (record, check, rule, status, the predictors named: in the message, and by id in the evidence)
CASES = [
    ("rapidocr_det_rec_onednn_off.json", onednn, "PD-CPU-004", "fail", [DET, REC], [0, 2]),
    ("rapidocr.json", onednn, "PD-CPU-004", "pass", [DET, CLS, REC], [0, 1, 2]),
    ("rapidocr_rec_ir_optim_off.json", graph_switches, "PD-GRAPH-001", "fail", [REC], [2]),
    ("rapidocr_rec_ir_optim_off.json", graph_switches, "PD-GRAPH-004", "fail", [REC], [2]),
    ("rapidocr.json", graph_switches, "PD-GRAPH-001", "pass", [DET, CLS, REC], [0, 1, 2]),
    ("rapidocr.json", graph_switches, "PD-GRAPH-004", "pass", [DET, CLS, REC], [0, 1, 2]),
    ("rapidocr_rec_onednn_cache_unbounded.json", onednn_cache, "PD-MEM-001", "fail", [REC], [2]),
    ("rapidocr.json", onednn_cache, "PD-MEM-001", "pass", [DET, CLS, REC], [0, 1, 2]),
]


@pytest.mark.parametrize("name, check, rule, status, names, ids", CASES)
def test_a_setting_check_judges_every_recorded_predictor_and_names_those_it_is_about(name, check, rule, status, names, ids):
    finding = by_rule(check.CHECK.run(facts_of(name)))[rule]
    assert finding.status.value == status
    assert finding.message.startswith(f"{', '.join(names)} ({SITE}): ")
    assert finding.evidence["predictors"] == ids
    assert len([f for f in check.CHECK.run(facts_of(name)) if f.rule_id == rule]) == 1


def test_the_busiest_predictor_alone_would_miss_what_the_others_run():
    facts = facts_of("rapidocr_rec_ir_optim_off.json")
    assert facts.service.ir_optim is True  # the busiest (det) decides the service's settings
    assert graph_switches.check(facts)[0].status.value == "pass"
    assert by_rule(graph_switches.CHECK.run(facts))["PD-GRAPH-001"].status.value == "fail"


def test_bf16_unused_names_every_fp32_predictor_and_skips_when_one_turns_onednn_off():
    bf16 = (*AVX2_FLAGS, "avx512_bf16")
    fp32 = by_rule(bf16_unused.CHECK.run(facts_of("rapidocr.json", cpu_flags=bf16)))["PD-PREC-001"]
    assert fp32.status.value == "fail" and fp32.evidence["predictors"] == [0, 1, 2]
    mixed = by_rule(bf16_unused.CHECK.run(facts_of("rapidocr_det_rec_onednn_off.json", cpu_flags=bf16)))["PD-PREC-001"]
    assert mixed.status.value == "fail" and mixed.message.startswith(f"{CLS} ({SITE}): ")  # det and rec are PD-CPU-004's


def test_a_flag_is_judged_for_every_predictor_over_what_each_records():
    facts = facts_of("rapidocr_det_rec_onednn_off.json", {"onednn": True})
    finding = by_rule(onednn.CHECK.run(facts))["PD-CPU-004"]
    assert finding.status.value == "pass" and finding.evidence["predictors"] == [0, 1, 2]
    assert all(view.service.onednn for _, view in judged_predictors(facts))


def test_each_predictor_runs_its_own_recorded_settings_over_the_source():
    source = SourceFacts(settings=[SourceSetting(name="onednn", value=True, evaluated=True,
                                                 location=SourceLocation("app.py", 3), code="config.enable_mkldnn()")])
    views = judged_predictors(facts_of("rapidocr_det_rec_onednn_off.json", source=source))
    assert [(predictor.id, view.service.onednn) for predictor, view in views] == [(0, False), (1, True), (2, False)]
    origin = next(o for o in views[2][1].service_origins if o.name == "onednn")
    assert origin.origin == Origin.RECORD and "predictor 2 built at " + SITE in origin.detail


def test_without_a_record_a_check_judges_the_service_as_said():
    facts = make_facts(onednn=False)
    finding = by_rule(onednn.CHECK.run(facts))["PD-CPU-004"]
    assert finding.status.value == "fail" and "predictors" not in finding.evidence
    assert finding.message == "the service turns oneDNN off (disable_mkldnn)"


def test_a_recorded_setting_of_the_vocabulary_is_shown_as_its_word_in_every_report():
    from paddle_doctor.base.vocabulary import Device, Precision
    from paddle_doctor.facts.service_config import SettingOrigin
    from paddle_doctor.render.service_lines import service_lines
    from paddle_doctor.report.report import service_summary

    facts = replace(make_facts(flags=AVX2_FLAGS),
                    service_origins=[SettingOrigin("device", Device.CPU, Origin.RECORD, "/tmp/records/r.json"),
                                     SettingOrigin("precision", Precision.BF16, Origin.RECORD, "/tmp/records/r.json")])
    lines = service_lines(service_summary(facts))
    assert "device = 'cpu' (record: /tmp/records/r.json)" in lines
    assert "precision = 'bf16' (record: /tmp/records/r.json)" in lines
    assert not any("Device." in line or "Precision." in line for line in lines)


def test_a_record_whose_runs_python_noted_says_so_in_the_report_and_one_noted_in_c_says_nothing_more():
    from paddle_doctor.base.serde import to_data
    from paddle_doctor.render.service_lines import record_lines
    from paddle_doctor.report.report import service_summary

    python = service_summary(facts_of("rapidocr.json"))
    native = service_summary(replace(facts_of("rapidocr.json"), service_record=replace(recorded("rapidocr.json"), recorder=Recorder.NATIVE)))
    assert (python.recorder, native.recorder) == (Recorder.PYTHON, Recorder.NATIVE)
    assert record_lines(python)[0] == "record: /tmp/records/rapidocr.json (runs noted in Python, the C module not built: several µs more per run())"
    assert record_lines(native)[0] == "record: /tmp/records/rapidocr.json"
    assert to_data(python)["recorder"] == "python" and to_data(native)["recorder"] == "native"


# The checks of a setting each predictor records that judged only the busiest one: the optimised-model
# cache (use_optimized_model, with the --model given) and the GPU device id each predictor runs on.
OPTIMISED = {"config.cpu.use_optimized_model": True, "config.cpu.optim_cache_dir": "/cache/ocr",
             "config.summary.use_optimized_model": "true"}
ON_GPU = {"config.device": "gpu", "config.gpu_device_id": 0, "config.gpu_memory_pool_mb": 500}
ONE_GPU = GpuFacts(status="ok", driver_version="535.104.05", cuda_driver_version="12.2",
                   devices=[GpuDevice(index=0, name="Test GPU", compute_capability="7.5")])
MODEL = {"model": "/models/ocr/inference"}
SETTING_CASES = [
    ({0: OPTIMISED}, MODEL, optim_cache, "PD-START-001", "warn", [CLS, REC], [1, 2]),
    ({0: OPTIMISED, 1: OPTIMISED, 2: OPTIMISED}, MODEL, optim_cache, "PD-START-001", "pass", [DET, CLS, REC], [0, 1, 2]),
    ({0: ON_GPU, 1: ON_GPU, 2: {**ON_GPU, "config.gpu_device_id": 1}}, {}, gpu_visibility, "PD-GPU-003", "fail", [REC], [2]),
    ({0: ON_GPU, 1: ON_GPU, 2: ON_GPU}, {}, gpu_visibility, "PD-GPU-003", "pass", [DET, CLS, REC], [0, 1, 2]),
]


@pytest.mark.parametrize("changes, flags, check, rule, status, names, ids", SETTING_CASES)
def test_a_check_of_a_setting_every_predictor_records_names_the_predictor_it_is_about(changes, flags, check, rule, status,
                                                                                       names, ids):
    facts = replace(facts_of("rapidocr.json", flags, changes=changes), gpu=ONE_GPU)
    findings = [f for f in check.CHECK.run(facts) if f.rule_id == rule]
    assert len(findings) == 1
    assert findings[0].status.value == status and findings[0].evidence["predictors"] == ids
    assert findings[0].message.startswith(f"{', '.join(names)} ({SITE}): ")


def test_the_gpu_device_a_predictor_records_is_the_one_judged():
    facts = replace(facts_of("rapidocr.json", changes={0: ON_GPU, 1: ON_GPU, 2: {**ON_GPU, "config.gpu_device_id": 1}}), gpu=ONE_GPU)
    finding = by_rule(gpu_visibility.CHECK.run(facts))["PD-GPU-003"]
    assert finding.message.endswith("the service uses device_id 1 but CUDA sees 1 GPU") and finding.evidence["device_id"] == 1


@pytest.mark.parametrize("check, rule, service", [
    (optim_cache, "PD-START-001", {**MODEL}),
    (gpu_visibility, "PD-GPU-003", {"device": "gpu", "gpu_device_id": 1}),
    (warmup, "PD-START-002", {"warmup_runs": 0}),
])
def test_without_a_record_the_newly_per_predictor_checks_judge_the_service_as_said(check, rule, service):
    facts = replace(make_facts(), service=ServiceConfig(**service), gpu=ONE_GPU)  # make_facts's model is the CPU's
    assert [f.message for f in check.CHECK.run(facts)] == [f.message for f in check.check(facts)]
    finding = by_rule(check.CHECK.run(facts))[rule]
    assert finding.status.value in ("fail", "warn") and "predictors" not in finding.evidence


# --measure measures each recorded predictor's model (doctor/pipeline.py): the first's measurement and graph
# are the report's, the others' are in their plans; each predictor is judged by its own.
def warmed(ratio: float) -> VerificationFacts:
    return VerificationFacts(ModelFacts("m", "pir", "m/inference.json", None, {}), 40.0, 0.03, 0.01, experiments=[
        ExperimentResult("warmup", ExperimentStatus.MEASURED, warmup=WarmupResult(5.0 * ratio, 5.0, ratio))])


def model_of(predictor: int) -> str:
    return f"/models/{[DET, CLS, REC][predictor]}/inference"


def measured(verification: dict[int, VerificationFacts] | None = None, graph: dict[int, GraphFacts] | None = None,
             not_measured: tuple[int, ...] = (), changes: dict[int, dict[str, Any]] | None = None):
    """The RapidOCR record's facts as ``--measure`` leaves them, predictor 0 measured first."""
    verification, graph = verification or {}, graph or {}
    facts = facts_of("rapidocr.json", changes=changes)
    plans = [PredictorMeasured(n, model_of(n), not_measured="not measured: --budget" if n in not_measured else None,
                               verification=verification.get(n) if n else None, graph=graph.get(n) if n else None)
             for n in range(3)]
    origin = SettingOrigin("model", model_of(0), Origin.RECORD, "/tmp/records/rapidocr.json: predictor 0, measured first")
    return replace(facts, service=replace(facts.service, model=model_of(0)), service_origins=merge_origins(facts.service_origins, [origin]),
                   service_record=replace(facts.service_record, measured=plans), verification=verification.get(0), graph=graph.get(0))


FUSED = ("conv_bn_act", "fused")
GOOD, LOW = graph_facts(FUSED, FUSED, FUSED), graph_facts(FUSED, ("conv_bn_act", "unfused"), ("conv_bn_act", "unfused"))
DROPOUT_LEFT = graph_facts(FUSED, FUSED, FUSED, dropout=2, dropout_left=2)
TRT = {**ON_GPU, "config.tensorrt": True, "config.tensorrt_precision": "fp16"}


def in_tensorrt(share: float) -> GraphFacts:
    return graph_facts(FUSED, tensorrt=TensorRTShare(2, round(100 * share), 100 - round(100 * share), share, {"custom_op": 3}))


MEASURED_CASES = [
    (measured({0: warmed(2), 1: warmed(12), 2: warmed(3)}), warmup, "PD-START-002", "fail", [CLS], [1]),
    (measured({0: warmed(2), 1: warmed(3), 2: warmed(3)}), warmup, "PD-START-002", "pass", [DET, CLS, REC], [0, 1, 2]),
    # a predictor a rule does not apply to (not measured, no TensorRT) is left out of its pass
    (measured({0: warmed(2), 1: warmed(3)}, not_measured=(2,)), warmup, "PD-START-002", "pass", [DET, CLS], [0, 1]),
    (measured(graph={0: GOOD, 1: GOOD, 2: LOW}), fusion_coverage, "PD-GRAPH-003", "fail", [REC], [2]),
    (measured(graph={0: GOOD, 1: GOOD, 2: LOW}), fusion_coverage, "PD-GRAPH-006", "pass", [DET, CLS, REC], [0, 1, 2]),
    (measured(graph={0: GOOD, 1: GOOD, 2: GOOD}), fusion_coverage, "PD-GRAPH-003", "pass", [DET, CLS, REC], [0, 1, 2]),
    (measured(graph={0: GOOD, 1: DROPOUT_LEFT, 2: GOOD}), dropout_left, "PD-GRAPH-005", "fail", [CLS], [1]),
    (measured(graph={0: GOOD, 1: GOOD, 2: GOOD}), dropout_left, "PD-GRAPH-005", "pass", [DET, CLS, REC], [0, 1, 2]),
    (measured(graph={0: GOOD, 1: GOOD}, not_measured=(2,)), fusion_coverage, "PD-GRAPH-003", "pass", [DET, CLS], [0, 1]),
    (measured(graph={0: in_tensorrt(0.9), 1: GOOD, 2: in_tensorrt(0.5)}, changes={0: TRT, 1: ON_GPU, 2: TRT}),
     tensorrt_coverage, "PD-GRAPH-007", "fail", [REC], [2]),
    (measured(graph={0: in_tensorrt(0.9), 1: GOOD, 2: in_tensorrt(0.95)}, changes={0: TRT, 1: ON_GPU, 2: TRT}),
     tensorrt_coverage, "PD-GRAPH-007", "pass", [DET, REC], [0, 2]),
]


@pytest.mark.parametrize("facts, check, rule, status, names, ids", MEASURED_CASES)
def test_with_measure_each_predictor_is_judged_by_its_own_measurement_and_graph(facts, check, rule, status, names, ids):
    findings = [f for f in check.CHECK.run(facts) if f.rule_id == rule]
    assert len(findings) == 1
    assert findings[0].status.value == status and findings[0].evidence["predictors"] == ids
    assert findings[0].message.startswith(f"{', '.join(names)} ({SITE}): ")


def test_a_predictors_graph_finding_names_its_own_model_and_the_busiest_alone_would_pass():
    facts = measured(graph={0: GOOD, 1: GOOD, 2: LOW})
    assert fusion_coverage.check(facts)[1].status.value == "pass"  # det's graph, the report's own
    low = by_rule(fusion_coverage.CHECK.run(facts))["PD-GRAPH-003"]
    assert low.evidence["model"] == model_of(2) and "1 of 3 fusible instances fused" in low.message
    views = {predictor.id: view for predictor, view in judged_predictors(facts)}
    assert views[2].service.model == model_of(2) and views[2].said_by("model").endswith("predictor 2")
    assert views[0].graph is GOOD and views[2].graph is LOW


def test_a_predictor_measure_did_not_measure_is_never_judged_by_anothers_measurement():
    facts = measured({0: warmed(2), 1: warmed(30)}, not_measured=(2,))
    views = {predictor.id: view for predictor, view in judged_predictors(facts)}
    assert views[2].verification is None and views[2].graph is None and views[1].verification.experiment("warmup").warmup.first_over_steady == 30
    finding = by_rule(warmup.CHECK.run(facts))["PD-START-002"]
    assert finding.status.value == "fail" and finding.evidence["predictors"] == [1] and finding.evidence["ratio"] == 30


def test_graph_checks_without_measure_judge_the_graph_of_the_model_given_once():
    facts = replace(facts_of("rapidocr.json", MODEL), graph=LOW)
    finding = by_rule(fusion_coverage.CHECK.run(facts))["PD-GRAPH-003"]
    assert finding.status.value == "fail" and "predictors" not in finding.evidence
    assert [f.message for f in fusion_coverage.CHECK.run(facts)] == [f.message for f in fusion_coverage.check(facts)]


def test_each_measured_predictors_graph_survives_the_facts_file_its_schema_validates():
    from paddle_doctor.facts.loading import facts_from_data

    data = json.loads(measured(graph={0: GOOD, 1: GOOD, 2: LOW}).to_json())
    jsonschema.validate(data, json.loads((HERE.parent / "doctor" / "schemas" / "facts.schema.json").read_text()))
    back = facts_from_data(data)
    assert back.service_record.measured[2].graph == LOW and back.service_record.measured[0].graph is None  # the first's is facts.graph
    assert by_rule(fusion_coverage.CHECK.run(back))["PD-GRAPH-003"].evidence["predictors"] == [2]


def onednn_measured(ratio: float) -> VerificationFacts:
    """A measurement whose oneDNN experiment turned oneDNN on against a baseline with it off, ``ratio`` faster."""
    base = PredictorConfig(threads=1, onednn=False)
    verdict = Effect.IMPROVED if ratio > 1 else Effect.REGRESSED
    comparison = ComparisonResult(BASELINE, "oneDNN on", ratio, ratio * 0.95, ratio * 1.05, verdict, 12)
    return VerificationFacts(ModelFacts("m", "pir", "m/inference.json", None, {}), 40.0, 0.03, 0.01, experiments=[
        ExperimentResult("onednn", ExperimentStatus.MEASURED, arms=[ArmResult(BASELINE, base), ArmResult("oneDNN on", base.vary(onednn=True))],
                         comparisons=[comparison])])


@pytest.mark.parametrize("measurements, not_measured, verdict, words", [
    ({0: onednn_measured(6.0), 1: onednn_measured(3.0)}, (), Verdict.CONFIRMED, "3.00x faster"),  # cls by its own, not det's
    ({0: onednn_measured(6.0), 1: onednn_measured(0.8)}, (), Verdict.REFUTED, "1.25x slower"),
    ({0: onednn_measured(6.0)}, (1, 2), None, None),  # cls not measured: det's 6x is no evidence for it
])
def test_a_finding_about_one_predictor_is_judged_by_that_predictors_measurement(measurements, not_measured, verdict, words):
    facts = measured(measurements, not_measured=not_measured, changes={1: {"config.cpu.onednn": False}})
    results = run_checks([onednn.CHECK], facts, load_rules())
    (finding,) = [f for result in results for f in result.findings if f.rule_id == "PD-CPU-004"]
    assert finding.evidence["predictors"] == [1] and f"{CLS} ({SITE})" in finding.message
    assert finding.verdict is verdict
    assert (words in finding.message) if words else "measured" not in finding.message
    assert finding.status is (Status.PASS if verdict is Verdict.REFUTED else Status.FAIL)


def test_bf16_for_a_paddleocr_2_predictor_is_its_precision_setting_then_the_config_calls():
    from paddle_doctor.judge.policy import Policy
    from paddle_doctor.report.report import build_report

    bf16 = [*AVX2_FLAGS, "avx512f", "avx512_bf16"]
    facts = facts_of("paddleocr-2.7.3.json", cpu_flags=bf16)
    (unused,) = [f for f in bf16_unused.CHECK.run(facts) if f.rule_id == "PD-PREC-001"]
    assert unused.status is Status.FAIL
    report = build_report(facts, run_checks([bf16_unused.CHECK], facts, load_rules()), load_rules(), Policy())
    fix = next(f.fix for f in report.findings if f.rule_id == "PD-PREC-001")
    assert [change.code for change in fix.changes][:3] == [
        "PaddleOCR(enable_mkldnn=True, precision='fp16')", "paddleocr --enable_mkldnn true --precision fp16",
        "config.enable_mkldnn()\nconfig.enable_mkldnn_bfloat16()"]
    assert "precision='fp16' is what turns on oneDNN bfloat16" in fix.text and fix.wrapper.wrapper == "paddleocr-2"


def test_one_predictor_on_the_gpu_makes_a_gpu_service_and_only_it_is_judged_by_the_gpu_checks():
    """The busiest predictor runs on the CPU, rec on GPU 1 of a host with one: the GPU checks run, on rec alone."""
    facts = replace(facts_of("rapidocr.json", changes={2: {**ON_GPU, "config.gpu_device_id": 1}}), gpu=ONE_GPU)
    assert facts.service.device.value == "cpu"
    findings = {f.rule_id: f for result in run_checks([gpu_visibility.CHECK, gpu_memory.CHECK, gpu_precision.CHECK], facts, load_rules())
                for f in result.findings}
    assert findings["PD-GPU-003"].status is Status.FAIL and findings["PD-GPU-003"].evidence["predictors"] == [2]
    assert all(f.evidence["predictors"] == [2] and f.message.startswith(f"{REC} ({SITE})") for f in findings.values())
    assert findings["PD-PREC-002"].status is Status.SKIP  # no precision judged for a GPU the service cannot see


def test_a_record_of_cpu_predictors_is_no_gpu_service_on_a_gpu_host():
    from paddle_doctor.judge.gpu_support import gpu_wheel, host_gpu, uses_gpu

    facts = replace(facts_of("rapidocr.json"), gpu=ONE_GPU)
    on_gpu_wheel = replace(facts, paddle=replace(facts.paddle, with_cuda=True, cuda_version="12.3"))
    assert gpu_wheel(on_gpu_wheel) is True and host_gpu(on_gpu_wheel) == "present"
    assert not uses_gpu(on_gpu_wheel)  # the record says every predictor runs on the CPU
    assert uses_gpu(replace(on_gpu_wheel, service_record=None))  # without one, the GPU wheel on a GPU host is a GPU service
    assert uses_gpu(replace(facts_of("rapidocr.json", changes={1: ON_GPU}), gpu=ONE_GPU))
