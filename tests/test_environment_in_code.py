"""The thread variables a service sets in its own code: the source reader finds each form
(``os.environ[NAME] =``, ``setdefault``, ``update``, ``os.putenv``) with its line; the record's
variables, noted as the service imported Paddle, are read back under the record's trust rules; and
PD-CPU-013 judges the service's environment (the record's over the source's over /proc/PID/environ),
never the doctor's own with ``--source`` alone."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import FIXTURES, report_json, run_doctor
from factories import make_facts
from paddle_doctor.base.vocabulary import ProcessStatus, RecordStatus
from paddle_doctor.checks import thread_pools
from paddle_doctor.facts import ServiceProcessFacts
from paddle_doctor.facts.environment import MAX_VALUE, MAX_VARIABLES, EnvironmentChange, noted
from paddle_doctor.facts.service_record import ServiceRecord
from paddle_doctor.recorder.writer import noted_environment
from paddle_doctor.service.record import read_record
from paddle_doctor.source import read_source
from test_record_reading import OCR, PID, TICKS, patient, record_text

SERVICES = FIXTURES / "services" / "env_in_code"


def changes(name: str) -> list[tuple[str, str | None, EnvironmentChange, int, str | None]]:
    source = read_source([str(SERVICES / name)], environ={})
    return [(change.name, change.value, change.change, change.line, change.function) for change in source.environment]


@pytest.mark.parametrize("name, found", [
    ("assigned.py", [("OMP_NUM_THREADS", "8", EnvironmentChange.ASSIGNED, 4, None),
                     ("FLAGS_use_mkldnn", "1", EnvironmentChange.ASSIGNED, 5, None)]),  # HOME_DIR is not noted
    ("defaulted.py", [("MKL_NUM_THREADS", "4", EnvironmentChange.DEFAULTED, 8, "configure")]),  # unused() never runs
    ("putenv.py", [("OMP_NUM_THREADS", "6", EnvironmentChange.PUTENV, 8, "build")]),  # the function that builds the Config
    ("updated.py", [("OMP_NUM_THREADS", "2", EnvironmentChange.UPDATED, 5, None),
                    ("OPENBLAS_NUM_THREADS", None, EnvironmentChange.UPDATED, 5, None),  # a live value not known
                    ("MKL_NUM_THREADS", "2", EnvironmentChange.UPDATED, 5, None)]),
])
def test_each_form_of_setting_a_thread_variable_in_code_is_a_setting_with_its_line(name, found):
    assert changes(name) == found


def pools(facts) -> tuple[str, str]:
    (finding,) = thread_pools.check(facts)
    return finding.status.value, finding.message


def source_only(name: str, **machine):
    """The facts of ``--source`` alone on ``name``: the doctor's own environment holds OMP_NUM_THREADS=1."""
    return replace(make_facts(env={"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}, **machine),
                   service_source=read_source([str(SERVICES / name)], environ={}))


def test_source_alone_judges_what_the_source_sets_and_not_the_doctors_environment():
    status, message = pools(source_only("assigned.py", quota=2))
    assert status == "fail" and "OMP_NUM_THREADS=8 (set at " in message and "assigned.py:4)" in message, message


def test_source_alone_says_a_variable_it_does_not_set_is_not_known():
    status, message = pools(source_only("defaulted.py", quota=2))
    assert status == "skip", message
    assert "OMP_NUM_THREADS (not set in its source)" in message and "defaulted.py:8 where it is unset" in message, message
    assert "the doctor's own environment is not the service's" in message


def test_a_setdefault_leaves_the_process_s_own_value_and_the_source_beats_proc_environ():
    probed = ServiceProcessFacts(status=ProcessStatus.PROBED, pid=PID)
    facts = replace(source_only("defaulted.py", quota=2), service_process=probed, env={"OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "16"})
    status, message = pools(facts)
    assert status == "fail" and f"MKL_NUM_THREADS=16 (/proc/{PID}/environ)" in message, message  # setdefault kept 16
    facts = replace(source_only("assigned.py", quota=2), service_process=probed, env={"OMP_NUM_THREADS": "2"})
    status, message = pools(facts)
    assert status == "fail" and "OMP_NUM_THREADS=8 (set at " in message, message


def test_putenv_says_os_environ_and_paddle_do_not_see_it():
    status, message = pools(source_only("putenv.py", quota=2))
    assert status == "fail" and "with os.putenv, which os.environ does not see" in message, message


def recorded(environment: dict[str, str] | None) -> ServiceRecord:
    return ServiceRecord(RecordStatus.READ, None, "/tmp/r.json", "3.3.1", environment=environment)


def test_the_record_s_variables_beat_the_source_and_proc_environ():
    probed = ServiceProcessFacts(status=ProcessStatus.PROBED, pid=PID)
    facts = replace(source_only("updated.py", quota=2), service_process=probed, env={"OMP_NUM_THREADS": "2"},
                    service_record=recorded({"OMP_NUM_THREADS": "8", "FLAGS_use_mkldnn": "1"}))
    status, message = pools(facts)
    assert status == "fail" and "OMP_NUM_THREADS=8 (/tmp/r.json, as it imported Paddle)" in message, message


def test_a_service_that_leaves_omp_unset_is_told_paddle_sets_it_to_one():
    status, message = pools(replace(make_facts(quota=2), service_record=recorded({})))  # OpenMP sees 8 CPUs
    assert status == "fail" and "OMP_NUM_THREADS is unset" in message and "sets OMP_NUM_THREADS=1" in message and "KI-012" in message
    status, message = pools(replace(make_facts(cpuset=[0, 1]), service_record=recorded({})))
    assert status == "pass" and "import paddle sets it to 1 (KI-012)" in message, message


def test_the_recorder_notes_the_thread_variables_and_flags_bounded_and_redacted():
    flags = {f"FLAGS_f{number:03d}": "x" * (MAX_VALUE + 50) for number in range(MAX_VARIABLES + 10)}
    kept = noted_environment({"OMP_NUM_THREADS": "8", "PATH": "/bin", "FLAGS_api_token": "s3cr3t", **flags})
    assert list(kept)[0] == "OMP_NUM_THREADS" and "PATH" not in kept and len(kept) == MAX_VARIABLES
    assert kept["FLAGS_api_token"] == "<redacted>" and all(len(value) <= MAX_VALUE for value in kept.values())
    assert noted({"MKL_NUM_THREADS": "2", "OMP_NUM_THREADS": "1"}) == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "2"}


NOTED = {"OMP_NUM_THREADS": "8", "MKL_NUM_THREADS": "2", "FLAGS_use_mkldnn": "1"}


def test_a_record_with_its_noted_variables_is_read_back(tmp_path):
    read = read_record(*patient(tmp_path, record_text({}, replace(OCR, environment=NOTED))))
    assert read.status == RecordStatus.READ and read.environment == NOTED
    read = read_record(*patient(tmp_path / "old", record_text({})))
    assert read.status == RecordStatus.READ and read.environment is None  # a record that noted none


@pytest.mark.parametrize("environment, said", [
    ({"PATH": "/bin"}, "holds a name a recorder does not note"),
    ({"OMP_NUM_THREADS": "1," * MAX_VALUE}, f"longer than the {MAX_VALUE} characters"),
    ({f"FLAGS_f{number}": "1" for number in range(MAX_VARIABLES + 1)}, f"more than the {MAX_VARIABLES} variables"),
])
def test_a_record_holding_variables_no_recorder_notes_is_refused_in_one_line(tmp_path, environment, said):
    read = read_record(*patient(tmp_path, record_text({}, replace(OCR, environment=environment))))
    assert read.status == RecordStatus.UNREADABLE and "\n" not in read.reason
    assert read.reason.startswith(f"/tmp/paddle-doctor-record-1000/{PID}-{TICKS}.json: not a record (Record.environment ") and said in read.reason
    assert "/bin" not in read.reason  # never what the file holds


def test_a_secret_in_a_recorded_flag_is_redacted_as_it_is_read(tmp_path):
    read = read_record(*patient(tmp_path, record_text({}, replace(OCR, environment={"FLAGS_secret_key": "hunter2hunter2"}))))
    assert read.environment == {"FLAGS_secret_key": "<redacted>"}


def test_source_alone_on_the_command_line_does_not_judge_the_doctors_environment():
    result = run_doctor("--source", str(SERVICES / "defaulted.py"), "--json", "--no-paddle", "--no-gpu",
                        env={"OMP_NUM_THREADS": "64", "MKL_NUM_THREADS": "64"})
    found = {f["rule_id"]: f for f in report_json(result)["findings"]}["PD-CPU-013"]
    assert found["status"] == "skip" and "not known" in found["message"], found
    assert "64" not in json.dumps(found), found
