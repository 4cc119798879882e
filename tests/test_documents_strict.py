"""Every JSON document the doctor reads (facts, baselines, fleet reports, a service's record) is decoded
strictly, and what is wrong with one is said in one short line: a value found is quoted cut to 200
characters, whatever its size."""

from __future__ import annotations

import json

import pytest
from conftest import run_doctor
from factories import make_facts
from paddle_doctor.base.serde import QUOTED_CHARS, DecodeError, from_data, to_data
from paddle_doctor.facts import ServiceProcessFacts, SourceFacts
from paddle_doctor.facts.recorded import RecordedConfig
from paddle_doctor.render.service_lines import LINE_CHARS, record_lines
from paddle_doctor.report.report import ServiceSummary
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

    from paddle_doctor.facts.recorded import ModelFiles

    long = predictor(0, 2, "det", 5)
    long = replace(long, model=ModelFiles("/models/" + HUGE, None, None))
    (line,) = record_lines(ServiceSummary([], ServiceProcessFacts(), SourceFacts(), [long]))
    assert line.startswith("predictor 0 /models/xxx") and line.endswith(" characters more)") and len(line) < LINE_CHARS + 40
    whole = len(line.partition("... (")[0]) + int(line.rpartition("(")[2].split()[0])
    assert whole > len(HUGE) and "x" * 100 not in line[LINE_CHARS:]


# ------------------------------------------------------------------ constraints and floats JSON cannot hold


def strict_json(text: str):
    """``text`` parsed as JSON is: NaN and Infinity are no JSON."""
    return json.loads(text, parse_constant=lambda name: pytest.fail(f"{name} in what should be JSON"))


def facts_with(change) -> dict:
    """The facts of a verification run (tests/test_experiment_results.py) as their file holds them, ``change`` made to them."""
    from test_experiment_results import facts_data

    data = facts_data()
    change(data)
    return data


COMPARISON = ("verification", "experiments", 1, "comparisons", 0)


def comparison(data: dict) -> dict:
    for key in COMPARISON:
        data = data[key]
    return data


@pytest.mark.parametrize("text, said", [
    ("NaN", "ratio: expected a finite number, got nan"),
    ("Infinity", "ratio: expected a finite number, got inf"),
    ("1e400", "ratio: expected a finite number, got inf"),
    ("1" + "0" * 400, "ratio: expected a finite number, got 1000"),  # an integer past the largest float
])
def test_a_float_that_is_not_finite_is_refused_in_every_document(tmp_path, text, said):
    data = facts_with(lambda data: comparison(data).update(ratio="RATIO"))
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(data).replace('"RATIO"', text))
    one_line_error(run_doctor("check", "--facts", str(facts), timeout=QUICK),
                   f"{facts}: Facts.verification.experiments[1].comparisons[0].{said}")


@pytest.mark.parametrize("field, value, said", [
    ("rounds", -5, "rounds: expected at least 0, got -5"),  # Count
    ("confidence", 0.5, "confidence: expected one of 0.95, 0.99, got 0.5"),  # a field's own schema
])
def test_a_value_outside_its_types_constraint_is_refused(tmp_path, field, value, said):
    data = facts_with(lambda data: comparison(data).update({field: value}))
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(data))
    one_line_error(run_doctor("check", "--facts", str(facts), timeout=QUICK),
                   f"{facts}: Facts.verification.experiments[1].comparisons[0].{said}")


@pytest.mark.parametrize("cls, data, said", [
    ("RunStats", {"runs": -1}, "RunStats.runs: expected at least 0"),
    ("RunStats", {"busy_s": -0.5}, "RunStats.busy_s: expected at least 0"),
    ("PodFinding", {"rule_id": "PD-CPU-10"}, "PodFinding.rule_id: expected text matching ^PD-[A-Z]+-[0-9]{3}$"),  # a fleet report's
])
def test_every_constraint_a_type_carries_holds_when_decoding(cls, data, said):
    from paddle_doctor.facts.recorded import RunStats
    from paddle_doctor.fleet.reports import PodFinding

    stats = {"runs": 1, "first_run_ms": 1.0, "p50_ms": None, "p90_ms": None, "p99_ms": None, "busy_s": 0.1, "span_s": 0.1,
             "gap_p50_ms": None, "peak_concurrency": 1, "shapes": [], "shapes_not_kept": 0}
    finding = {"rule_id": "PD-CPU-010", "status": "pass", "severity": "error", "title": "t", "message": "m"}
    kind, base = {"RunStats": (RunStats, stats), "PodFinding": (PodFinding, finding)}[cls]
    with pytest.raises(DecodeError) as raised:
        from_data(kind, {**base, **data})
    assert str(raised.value).startswith(said), str(raised.value)


def test_an_interval_without_an_upper_bound_is_written_as_json_and_read_back(tmp_path):
    import math
    from dataclasses import replace

    from paddle_doctor.base.vocabulary import Effect
    from paddle_doctor.facts.loading import facts_from_data
    from paddle_doctor.facts.verification import ComparisonResult
    from test_experiment_results import verification

    one_round = ComparisonResult("rebuild graph", "optimised model cache", 1.2, 0.0, math.inf, Effect.UNDECIDED, 1)
    measured = verification()
    optim_cache = replace(measured.experiments[1], comparisons=[one_round])
    facts = replace(make_facts(), verification=replace(measured, experiments=[measured.experiments[0], optim_cache, *measured.experiments[2:]]))
    written = tmp_path / "facts.json"
    written.write_text(facts.to_json())
    read = facts_from_data(strict_json(written.read_text()))
    assert read.verification.experiments[1].comparisons[0].ci_high > 1e300  # the largest float JSON holds
    result = run_doctor("check", "--facts", str(written), "--format", "json", timeout=QUICK)
    assert result.returncode in (0, 1), result.stderr
    strict_json(result.stdout)


# ------------------------------------------------------------------ what JSON can write and Python cannot hold


@pytest.mark.parametrize("section, field, text, said", [
    ("cpu", "logical_cpus", "9" * 5000, "holds an integer of more than 4300 digits, more than the doctor reads"),
    ("host", "hostname", r'"a\ud800b"', r"holds text that is no Unicode (a lone surrogate, \ud800)"),
])
def test_json_that_python_cannot_hold_or_print_is_one_line(tmp_path, section, field, text, said):
    data = facts_with(lambda data: data[section].update({field: "CHANGED"}))
    facts = tmp_path / "facts.json"
    facts.write_text(json.dumps(data).replace('"CHANGED"', text))
    one_line_error(run_doctor("check", "--facts", str(facts), "--format", "json", timeout=QUICK),
                   f"{facts}: the facts file {said}; expected the output of 'paddle-doctor facts'")
