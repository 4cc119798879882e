"""The record's writer in the service: where it writes (a folder only its user may write in, its path
made absolute when the writer starts), what it writes (the service's arguments redacted), what it
reads from the environment (every variable checked, one rule for every switch), and what it sweeps
from the folder (what writes cut short, and the records of processes long gone)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from paddle_doctor.base.vocabulary import Recorder
from paddle_doctor.recorder.live import Process
from paddle_doctor.recorder.location import (
    FOLDER,
    INTERVAL,
    NATIVE,
    SWITCH,
    SWITCHES,
    interval_s,
    own_start_ticks,
    record_name,
    settings_problems,
    start_ticks_of,
    switch,
)
from paddle_doctor.recorder.writer import STALE_RECORD_S, Writer


def writer_into(records: Path, monkeypatch) -> Writer:
    """A writer of this process's record into ``records``, as a service's writer is made, having written once."""
    monkeypatch.setenv(FOLDER, str(records))
    writer = Writer(Process())
    writer.write()
    return writer


def own_record(records: Path) -> dict:
    return json.loads((records / record_name(os.getpid(), own_start_ticks())).read_text())


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o702, 0o1777], ids=oct)
def test_a_folder_others_may_write_in_is_refused(tmp_path, monkeypatch, mode):
    records = tmp_path / "records"
    records.mkdir()
    records.chmod(mode)
    writer = writer_into(records, monkeypatch)
    assert not writer.written.is_set() and list(records.iterdir()) == []
    said = f"{records} may be written by others (mode {mode:o}); expected a folder only its owner writes in (0700)"
    assert writer.process.errors == [f"cannot write the record in {records}: {said}"]


def test_a_folder_only_its_owner_writes_in_is_written_in(tmp_path, monkeypatch):
    records = tmp_path / "records"
    records.mkdir()
    records.chmod(0o755)
    writer = writer_into(records, monkeypatch)
    assert writer.written.is_set() and own_record(records)["pid"] == os.getpid()


def test_a_folder_path_that_is_a_file_is_said_to_be_no_folder(tmp_path, monkeypatch):
    records = tmp_path / "records"
    records.write_text("not a folder")
    writer = writer_into(records, monkeypatch)
    assert writer.process.errors == [f"cannot write the record in {records}: {records} is not a folder"]


def test_a_relative_folder_is_the_one_under_the_services_directory_when_the_writer_started(tmp_path, monkeypatch):
    started_in, moved_to = tmp_path / "service", tmp_path / "elsewhere"
    started_in.mkdir()
    moved_to.mkdir()
    monkeypatch.chdir(started_in)
    monkeypatch.setenv(FOLDER, "records")
    writer = Writer(Process())
    monkeypatch.chdir(moved_to)  # the service changes its directory after its first predictor
    writer.write()
    assert writer.folder == started_in / "records" and writer.written.is_set()
    assert own_record(started_in / "records")["pid"] == os.getpid() and not (moved_to / "records").exists()


@pytest.mark.parametrize("given, used, said", [
    ("2.5", 2.5, None), (" 7 ", 7.0, None), ("", 5.0, None), ("0.1", 0.1, None), ("3600", 3600.0, None),
    ("inf", 3600.0, "'inf': expected seconds from 0.1 to 3600; 3600 used"),
    ("1e10", 3600.0, "'1e10': expected seconds from 0.1 to 3600; 3600 used"),
    ("0.01", 0.1, "'0.01': expected seconds from 0.1 to 3600; 0.1 used"),
    ("-5", 0.1, "'-5': expected seconds from 0.1 to 3600; 0.1 used"),
    ("nan", 5.0, "'nan': expected seconds from 0.1 to 3600; 5 used"),
    ("5s", 5.0, "'5s': expected seconds from 0.1 to 3600; 5 used"),
])
def test_the_interval_is_held_between_a_tenth_of_a_second_and_an_hour(given, used, said):
    assert interval_s({INTERVAL: given}) == (used, f"{INTERVAL}={said}" if said else None)


INFINITE = '''
import sys
from paddle_doctor.recorder.live import Process
from paddle_doctor.recorder.writer import Writer

class Nothing:
    def run(self): pass
    def get_input_names(self): return []

process = Process()
writer = Writer(process)
process.on_first_predictor = writer.start
process.live_of(Nothing())
assert writer.written.wait(30)
print(writer.interval, process.errors, flush=True)
'''


@pytest.mark.parametrize("given", ["inf", "1e10", "nan"])
def test_an_interval_too_long_or_no_number_leaves_the_writer_writing_and_says_so_in_one_line(tmp_path, given):
    env = dict(os.environ, PADDLE_DOCTOR_RECORD_DIR=str(tmp_path), PADDLE_DOCTOR_RECORD_INTERVAL=given)
    env.pop("PADDLE_DOCTOR_RECORD", None)
    done = subprocess.run([sys.executable, "-c", INFINITE], capture_output=True, text=True, timeout=120, env=env)
    _, said = interval_s({INTERVAL: given})
    assert done.returncode == 0 and done.stderr == f"paddle-doctor record: {said}\n"  # no traceback of a thread
    assert done.stdout.split(" ", 1)[1] == f"{[said]}\n"
    assert json.loads(next(tmp_path.glob("*.json")).read_text())["errors"] == [said]  # written at exit too


WORDS_OFF, WORDS_ON = ["0", "false", "No", "OFF", " ", " 0 "], ["1", "true", "Yes", "on", "anything"]


def test_one_rule_for_every_switch_the_recorder_reads():
    for name, default in SWITCHES.items():
        assert [switch({name: word}, name) for word in WORDS_OFF] == [word.strip() == "" and default for word in WORDS_OFF]
        assert [switch({name: word}, name) for word in WORDS_ON] == [True] * len(WORDS_ON)
        assert switch({}, name) is default and switch({name: ""}, name) is default


HOOKED = "import sys; print('paddle_doctor.recorder.hook' in sys.modules)"


@pytest.mark.parametrize("word", WORDS_OFF + WORDS_ON)
def test_recording_is_on_as_the_rule_says(word):
    env = {key: value for key, value in os.environ.items() if not key.startswith("PADDLE_DOCTOR_RECORD")}
    done = subprocess.run([sys.executable, "-c", HOOKED], capture_output=True, text=True, timeout=60,
                          env=dict(env, PADDLE_DOCTOR_RECORD=word))
    assert done.stdout == f"{word in WORDS_ON}\n", done.stderr


@pytest.mark.parametrize("word", WORDS_OFF + WORDS_ON)
def test_the_c_recorder_is_on_as_the_rule_says(word, monkeypatch):
    monkeypatch.setenv(NATIVE, word)
    expected = Recorder.PYTHON if word.strip() and word in WORDS_OFF else Recorder.NATIVE
    assert Process().recorder is expected


def test_a_switch_of_no_known_word_is_read_as_on_and_said():
    assert settings_problems({SWITCH: "maybe", NATIVE: "Off", INTERVAL: "3"}) == [
        f"{SWITCH}='maybe': expected 1, true, yes, on or 0, false, no, off; read as on"]


ARGUED = '''
from paddle_doctor.recorder.live import Process
from paddle_doctor.recorder.writer import Writer
writer = Writer(Process())
writer.write()
assert writer.written.is_set(), writer.process.errors
'''


def test_the_services_arguments_are_redacted_in_its_record(tmp_path):
    secrets = ["--api-key=sk4d8Fj2kL9q", "--password=hunter2hunter2", "postgres://app:s3cr3tPass@db:5432/app",
               "x" * 280 + " --token=abcdefgh123456789", "Authorization: Bearer eyJhbGciOi.eyJzdWIiOi", "--db-password", "letmein99"]
    env = dict(os.environ, PADDLE_DOCTOR_RECORD_DIR=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", ARGUED, *secrets, "--threads", "4"], capture_output=True, text=True,
                          timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    (path,) = tmp_path.glob("*.json")
    text = path.read_text()
    assert not any(secret in text for secret in ("sk4d8Fj2kL9q", "hunter2", "s3cr3tPass", "abcdefgh", "eyJhbGciOi", "letmein99"))
    assert json.loads(text)["argv"] == ["-c", "--api-key=<redacted>", "--password=<redacted>", "postgres://<redacted>@db:5432/app",
                                        ("x" * 280 + " --token=<redacted>")[:300], "Authorization: Bearer <redacted>",
                                        "--db-password", "<redacted>", "--threads", "4"]  # a secret's flag given alone: the next argument


def test_records_of_processes_gone_a_day_ago_are_swept_by_the_next_writer(tmp_path, monkeypatch):
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True, check=True)
    gone, parent = int(finished.stdout), os.getppid()
    left = {name: tmp_path / name for name in [
        f"{gone}-5.json",  # its process gone, written two days ago
        f"{parent}-{start_ticks_of(parent) + 1}.json",  # an earlier process that had the parent's PID
        f"{parent}-{start_ticks_of(parent)}.json",  # a process still running (another PID namespace's, say)
        f"{gone}-6.json",  # its process gone, written an hour ago
        f"{gone}-x.json", "notes.json", f"{gone}-5.json.bak", f".{gone}-5.json",  # not records
    ]}
    for name, path in left.items():
        path.write_text("{}")
        old = time.time() - (STALE_RECORD_S - 3600 if name == f"{gone}-6.json" else 2 * STALE_RECORD_S)
        os.utime(path, (old, old))
    writer_into(tmp_path, monkeypatch)
    swept = {f"{gone}-5.json", f"{parent}-{start_ticks_of(parent) + 1}.json"}
    assert {path.name for path in tmp_path.iterdir()} == set(left) - swept | {record_name(os.getpid(), own_start_ticks())}
