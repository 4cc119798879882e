"""A facts file read back (``paddle-doctor check --facts snap.json``): decoded into Facts, every
section with it, the measured ones too, whose modules Facts names its types through."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..base.serde import decode_document, load_json_file
from . import SCHEMA_VERSION, Facts, FactsError, graph, service_record, verification  # noqa: F401 (Facts' annotations name these sections' types through them)


def facts_from_data(data: Any, source: str = "facts") -> Facts:
    return decode_document(Facts, data, source, "facts", SCHEMA_VERSION, FactsError,
                           "record the facts again with this version ('paddle-doctor facts')")


def load_facts(path: str | Path) -> Facts:
    data = load_json_file(path, FactsError, "facts", "expected the output of 'paddle-doctor facts'")
    return facts_from_data(data, str(path))
