"""The record's writer in the service: where it writes (a folder only its user may write in, its path
made absolute when the writer starts), what it writes (the service's arguments redacted), what it
reads from the environment (every variable checked, one rule for every switch), and what it sweeps
from the folder (what writes cut short, and the records of processes long gone)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from paddle_doctor.record.live import Process
from paddle_doctor.record.location import FOLDER, own_start_ticks, record_name
from paddle_doctor.record.writer import Writer


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
