"""The JSON Schemas are generated from the types: what the generator makes of each kind of type."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest
from conftest import FIXTURES, ROOTS, run_doctor
from factories import enum_fields_holding_strings
from paddle_doctor.base.schema import DOCUMENTS, SCHEMAS, Count, RuleId, dumps, generate
from paddle_doctor.base.serde import to_data
from paddle_doctor.base.vocabulary import Layout


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


# ------------------------------------------------------------------ the committed schemas


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda d: d.file)
def test_each_committed_schema_is_the_one_its_types_generate(document):
    """Run ``python -m paddle_doctor.base.schema`` after changing a type (and bump its schema_version
    when what it writes changes)."""
    committed = (SCHEMAS / document.file).read_text(encoding="utf-8")
    assert committed == dumps(document.generate()), f"{document.file} is stale: run python -m paddle_doctor.base.schema"


FACTS_SCHEMA = json.loads((SCHEMAS / "facts.schema.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("root", sorted(p.name for p in ROOTS.iterdir() if p.is_dir()))
def test_recorded_facts_fit_the_facts_schema(root):
    result = run_doctor("facts", "--root", str(ROOTS / root), "--no-paddle", "--no-gpu")
    assert result.returncode == 0, result.stderr
    jsonschema.validate(json.loads(result.stdout), FACTS_SCHEMA)


# ------------------------------------------------------------------ live facts speak the vocabulary


@pytest.mark.parametrize("root", sorted(p.name for p in ROOTS.iterdir() if p.is_dir()))
def test_probed_facts_hold_enum_members_not_strings(root):
    from paddle_doctor.facts import ServiceConfig
    from paddle_doctor.probes import collect_facts
    from paddle_doctor.probes.context import ProbeContext

    facts = collect_facts(ProbeContext(ROOTS / root), ServiceConfig(), None, 0)
    assert enum_fields_holding_strings(facts) == []


def test_the_service_resolved_from_flags_config_and_source_holds_enum_members(tmp_path):
    from paddle_doctor.base.vocabulary import Layout
    from paddle_doctor.service import ServiceOptions
    from paddle_doctor.service.resolve import resolve_service
    from paddle_doctor.source import read_source

    config = tmp_path / "service.yaml"
    config.write_text("layout: pool\ninstances: 2\nprecision: bf16\ntensorrt:\n  precision: fp16\n")
    service, origins = resolve_service(ServiceOptions(config=str(config), threads=2, layout=Layout.POOL),
                                       read_source([str(FIXTURES / "services" / "env_helper.py")]))
    assert enum_fields_holding_strings(service, "service") == [] and enum_fields_holding_strings(origins, "origins") == []


@pytest.mark.parametrize("tree, pid", [("one-service", 4242), ("two-services", None), ("venv-service", 4242), ("gunicorn-service", 7)])
def test_a_service_process_read_from_proc_holds_enum_members(tree, pid):
    from paddle_doctor.probes.context import ProbeContext
    from paddle_doctor.probes.process import open_service_process

    process, _ = open_service_process(ProbeContext(FIXTURES / "processes" / tree), pid)
    assert enum_fields_holding_strings(process, "process") == []
