"""The JSON Schemas are generated from the types: what the generator makes of each kind of type."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest

from paddle_doctor.schema import Count, RuleId, generate
from paddle_doctor.serde import to_data
from paddle_doctor.vocabulary import Layout


@dataclass
class Leaf:
    """A leaf.

    More words that stay out of the description."""

    rule: RuleId
    runs: Count


@dataclass
class Root:
    layout: Layout
    leaf: Leaf
    leaves: list[Leaf]
    by_name: dict[str, float]
    note: str | None = None
    anything: Any = None
    version: int = field(default=3, metadata={"schema": {"const": 3}})


SCHEMA = generate(Root, "https://example.invalid/root.json", "root", "a root")


def test_every_field_is_required_and_nothing_else_is_allowed():
    assert SCHEMA["required"] == ["layout", "leaf", "leaves", "by_name", "note", "anything", "version"]
    assert SCHEMA["additionalProperties"] is False
    assert SCHEMA["$defs"]["leaf"]["required"] == ["rule", "runs"]


def test_types_carry_their_constraints_enums_and_docstrings():
    properties, leaf = SCHEMA["properties"], SCHEMA["$defs"]["leaf"]
    assert properties["layout"] == {"enum": ["processes", "clone", "pool", "lock", "shared"]}
    assert properties["note"] == {"anyOf": [{"type": "string"}, {"type": "null"}]}
    assert properties["version"] == {"type": "integer", "const": 3}
    assert properties["leaves"] == {"type": "array", "items": {"$ref": "#/$defs/leaf"}}
    assert leaf["properties"]["runs"] == {"type": "integer", "minimum": 0}
    assert leaf["properties"]["rule"]["pattern"] == r"^PD-[A-Z]+-[0-9]{3}$"
    assert leaf["description"] == "A leaf."
    assert SCHEMA["description"] == "a root"  # Root has no docstring: never the dataclass's signature


GOOD = Root(Layout.LOCK, Leaf("PD-CPU-010", 2), [], {"a": 1.5})


@pytest.mark.parametrize("change, where", [
    (lambda d: d.update(layout="threads"), "layout"),
    (lambda d: d["leaf"].update(runs=-1), "runs"),
    (lambda d: d["leaf"].update(rule="CPU-10"), "rule"),
    (lambda d: d.update(version=4), "version"),
    (lambda d: d.update(extra=1), "extra"),
    (lambda d: d.pop("note"), "note"),
])
def test_the_generated_schema_refuses_what_the_types_refuse(change, where):
    data = to_data(GOOD)
    jsonschema.validate(data, SCHEMA)
    change(data)
    with pytest.raises(jsonschema.ValidationError) as error:
        jsonschema.validate(data, SCHEMA)
    assert where in str(error.value)
