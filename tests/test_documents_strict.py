"""Every JSON document the doctor reads (facts, baselines, fleet reports, a service's record) is decoded
strictly, and what is wrong with one is said in one short line: a value found is quoted cut to 200
characters, whatever its size."""

from __future__ import annotations

import json

import pytest
from conftest import run_doctor
from factories import make_facts
from paddle_doctor.facts import ServiceProcessFacts, SourceFacts
from paddle_doctor.record.document import RecordedConfig
from paddle_doctor.render.service_lines import LINE_CHARS, record_lines
from paddle_doctor.report import ServiceSummary
from paddle_doctor.serde import QUOTED_CHARS, DecodeError, from_data, to_data
from test_inputs_hostile import QUICK, one_line_error
from test_record_reading import predictor

HUGE = "x" * (8 << 20)  # 8 MiB: echoed whole, it took 98 s to wrap and 15 MB of stderr
CPU = {"cpu": {"threads": 2, "onednn": True}, "device": "cpu"}
QUICK_LINE = QUOTED_CHARS + 400  # the file's path, the field's and the words around the value


def test_a_huge_value_in_a_facts_file_is_quoted_cut_in_one_line(tmp_path):
    data = to_data(make_facts())
    data["cpu"]["logical_cpus"] = HUGE
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(data))
    line = one_line_error(run_doctor("check", "--facts", str(facts), timeout=QUICK),
                          f"{facts}: Facts.cpu.logical_cpus: expected int, got 'xxxx")
    assert len(line) < 2 * QUICK_LINE


@pytest.mark.parametrize("data, said", [
    ({**CPU, "gpu_device_id": HUGE}, "RecordedConfig.gpu_device_id: expected int, got 'xxx"),
    ({**CPU, "device": HUGE}, "RecordedConfig.device: is 'xxx"),
    ({**CPU, HUGE: 1}, "RecordedConfig: unknown field 'xxx"),
    ({**CPU, "summary": {HUGE: 1}}, "RecordedConfig.summary.xxx"),
    ({**CPU, "tensorrt_precision": [HUGE]}, "RecordedConfig.tensorrt_precision: is ['xxx"),
])
def test_every_value_and_key_an_error_quotes_is_cut(data, said):
    with pytest.raises(DecodeError) as raised:
        from_data(RecordedConfig, data)
    message = str(raised.value)
    assert message.startswith(said) and len(message) < QUICK_LINE, message[:QUICK_LINE]


@pytest.mark.parametrize("data, said", [
    ({**CPU, "gpu_device_id": "S3CRET"}, "RecordedConfig.gpu_device_id: expected int"),
    ({**CPU, "device": "S3CRET"}, "RecordedConfig.device: expected one of 'cpu', 'gpu'"),
    ({**CPU, "S3CRET": 1}, "RecordedConfig: holds a field RecordedConfig has not"),
    ({**CPU, "summary": {"S3CRET": 1}}, "RecordedConfig.summary.*: expected str"),
    ({**CPU, "tensorrt_precision": ["S3CRET"]}, "RecordedConfig.tensorrt_precision: expected one of"),
])
def test_decoding_that_echoes_nothing_names_the_field_and_what_it_expected(data, said):
    with pytest.raises(DecodeError) as raised:
        from_data(RecordedConfig, data, echo=False)
    assert str(raised.value).startswith(said) and "S3CRET" not in str(raised.value), str(raised.value)


def test_a_record_line_of_megabytes_is_cut_for_people():
    from dataclasses import replace

    from paddle_doctor.record.document import ModelFiles

    long = predictor(0, 2, "det", 5)
    long = replace(long, model=ModelFiles("/models/" + HUGE, None, None))
    (line,) = record_lines(ServiceSummary([], ServiceProcessFacts(), SourceFacts(), [long]))
    assert line.startswith("predictor 0 /models/xxx") and line.endswith(" characters more)") and len(line) < LINE_CHARS + 40
    whole = len(line.partition("... (")[0]) + int(line.rpartition("(")[2].split()[0])
    assert whole > len(HUGE) and "x" * 100 not in line[LINE_CHARS:]
