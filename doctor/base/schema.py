"""JSON Schemas generated from the types that make a document, so the schema cannot drift from
what is written: every dataclass field is required (serde writes them all), enums list their
values, ``Optional`` admits null, and constraints ride on the types as ``Annotated`` metadata
(:data:`Count`, :data:`RuleId`, in :mod:`paddle_doctor.base.constraints`) or as ``field(metadata={"schema": {...}})``.

``python -m paddle_doctor.base.schema`` rewrites the committed schemas; a test fails when they are stale.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import re
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

from .constraints import (  # noqa: F401 (the types that carry constraints, named here too)
    Constraint,
    Count,
    ExitCode,
    NonNegative,
    Positive,
    RuleId,
    Url,
    UrlReference,
    version_field,
    version_metadata,
)
from .serde import field_types

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"
SNAKE = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")  # TensorRTShare: tensor_rt_share


def generate(root: type, schema_id: str, title: str, description: str) -> dict[str, Any]:
    """The schema of ``root``: its fields at the top, every nested dataclass under ``$defs``."""
    builder = _Builder()
    body = builder.dataclass_body(root)
    document = {"$schema": DRAFT, "$id": schema_id, "title": title, "description": description, **body}
    document["$defs"] = {name: builder.defs[name] for name in sorted(builder.defs)}
    return document


def dumps(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


class _Builder:
    def __init__(self) -> None:
        self.defs: dict[str, dict[str, Any]] = {}
        self.names: dict[type, str] = {}

    def of(self, tp: Any) -> dict[str, Any]:
        """The schema of a field's type: a generic one (``Annotated``, a union, ``Literal``, a list, tuple
        or mapping) by its origin, a class (enum, dataclass, scalar) by what it is."""
        if tp is Any:
            return {}
        generic = self._GENERIC.get(typing.get_origin(tp))
        if generic is not None:
            return generic(self, tp)
        return self._of_class(tp)

    def _annotated(self, tp: Any) -> dict[str, Any]:
        """The base type's schema with the keywords of the constraints the annotation carries."""
        base, *extras = typing.get_args(tp)
        schema = dict(self.of(base))
        for extra in extras:
            if isinstance(extra, Constraint):
                schema.update(extra.keywords)
        return schema

    def _union(self, tp: Any) -> dict[str, Any]:
        args = typing.get_args(tp)
        options = [self.of(arg) for arg in args if arg is not type(None)]
        if type(None) in args:
            options.append({"type": "null"})
        return options[0] if len(options) == 1 else {"anyOf": options}

    def _literal(self, tp: Any) -> dict[str, Any]:
        values = list(typing.get_args(tp))
        return {"const": values[0]} if len(values) == 1 else {"enum": values}

    def _array(self, tp: Any) -> dict[str, Any]:
        """A list or ``tuple[X, ...]`` as items of one schema; a fixed tuple as its items in order."""
        args = typing.get_args(tp)
        if typing.get_origin(tp) is tuple and not (len(args) == 2 and args[1] is Ellipsis):
            return {"type": "array", "prefixItems": [self.of(arg) for arg in args], "items": False}
        return {"type": "array", "items": self.of(args[0])}

    def _object(self, tp: Any) -> dict[str, Any]:
        return {"type": "object", "additionalProperties": self.of(typing.get_args(tp)[1])}

    _GENERIC: dict[Any, Callable[[_Builder, Any], dict[str, Any]]] = {
        Annotated: _annotated,
        typing.Union: _union,
        types.UnionType: _union,
        typing.Literal: _literal,
        list: _array,
        tuple: _array,
        dict: _object,
    }

    def _of_class(self, tp: Any) -> dict[str, Any]:
        """An enum's values, a dataclass's reference under ``$defs``, or a scalar's JSON type."""
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return {"enum": [member.value for member in tp]}
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            return {"$ref": f"#/$defs/{self.define(tp)}"}
        simple = {str: "string", bool: "boolean", int: "integer", float: "number"}
        if tp in simple:
            return {"type": simple[tp]}
        raise TypeError(f"no JSON Schema for {tp!r}")

    def define(self, cls: type) -> str:
        if cls not in self.names:
            name = SNAKE.sub("_", cls.__name__).lower()
            if name in self.defs:
                raise TypeError(f"two dataclasses named {cls.__name__} in one document")
            self.names[cls] = name
            self.defs[name] = {}
            self.defs[name] = self.dataclass_body(cls)
        return self.names[cls]

    def dataclass_body(self, cls: type) -> dict[str, Any]:
        hints = field_types(cls, extras=True)
        fields = dataclasses.fields(cls)
        properties = {}
        for field in fields:
            schema = dict(self.of(hints[field.name]))
            schema.update(field.metadata.get("schema", {}))
            properties[field.name] = schema
        body: dict[str, Any] = {}
        doc = _description(cls)
        if doc:
            body["description"] = doc
        body.update({"type": "object", "additionalProperties": False,
                     "required": [field.name for field in fields], "properties": properties})
        return body


def _description(cls: type) -> str | None:
    """The first paragraph of the class's own docstring, in one line (not dataclass's signature)."""
    doc = cls.__doc__ or ""
    if not doc or doc.startswith(f"{cls.__name__}("):
        return None
    return " ".join(doc.strip().split("\n\n")[0].split())


@dataclasses.dataclass(frozen=True)
class Document:
    """A committed schema: the file, the type at its root (``module:Name``) and its headings."""

    file: str
    root: str
    title: str
    description: str

    def generate(self) -> dict[str, Any]:
        import importlib

        module, _, name = self.root.partition(":")
        cls = getattr(importlib.import_module(f"paddle_doctor.{module}"), name)
        version = next(f.metadata["schema"]["const"] for f in dataclasses.fields(cls) if f.name == "schema_version")
        schema_id = f"https://paddle-doctor.invalid/schemas/{self.file.removesuffix('.schema.json')}-{version}.schema.json"
        return generate(cls, schema_id, self.title, self.description.format(version=version))


DOCUMENTS = (
    Document("report.schema.json", "report.report:Report", "paddle-doctor report", "Output of `paddle-doctor --json` (schema_version {version})."),
    Document("fleet.schema.json", "fleet.grouping:FleetReport", "paddle-doctor fleet report",
             "Output of `paddle-doctor fleet --json` (schema_version {version}): pods grouped by findings and facts, "
             "the first group the usual one."),
    Document("facts.schema.json", "facts.loading:Facts", "paddle-doctor facts",
             "Output of `paddle-doctor facts` and input of `check --facts` (schema_version {version})."),
    Document("record.schema.json", "facts.recorded:Record", "paddle-doctor record",
             "What a service run under `paddle-doctor record` writes about its predictors (schema_version {version})."),
)


def main() -> None:
    for document in DOCUMENTS:
        path = SCHEMAS / document.file
        path.write_text(dumps(document.generate()), encoding="utf-8")
        print(f"wrote {path}")


if __name__ == "__main__":
    from paddle_doctor.base.schema import main as main_of_the_module  # the types carry that module's Constraint, not __main__'s

    main_of_the_module()
