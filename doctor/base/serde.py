"""Dataclasses to JSON-able dicts and back, strictly: an unknown or mistyped field is an error, and so
is a value outside the constraints its type carries (:mod:`paddle_doctor.base.constraints`) or a float
that is not finite. An error quotes the value it found cut to :data:`QUOTED_CHARS` characters, or,
decoding what another user may have written (a service's record), never."""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import math
import re
import reprlib
import sys
import types
import typing
from pathlib import Path
from typing import Any, TypeVar

from .inputs import DOCUMENT_BYTES, YAML_BYTES, Refused, parse_json, read_text, too_deep, within_bounds
from .redact import redact_recorded

T = TypeVar("T")
QUOTED_CHARS = 200  # the most of a value found that an error message quotes
_QUOTING = reprlib.Repr()
_QUOTING.maxstring = _QUOTING.maxlong = _QUOTING.maxother = QUOTED_CHARS


class DecodeError(ValueError):
    """Data does not fit the dataclass; the message names the field path."""


def quoted(value: Any) -> str:
    """A value found, as an error message quotes it: its ``repr``, at most about :data:`QUOTED_CHARS` characters."""
    text = _QUOTING.repr(value)
    return text if len(text) <= QUOTED_CHARS else f"{text[:QUOTED_CHARS]}..."


def to_data(obj: Any) -> Any:
    """``obj`` as JSON holds it; a float JSON cannot hold is the largest finite one (an unbounded
    interval's infinity), or null (NaN), so that what the doctor writes is always JSON."""
    if isinstance(obj, float) and not math.isfinite(obj):
        return None if math.isnan(obj) else math.copysign(sys.float_info.max, obj)
    if isinstance(obj, enum.Enum):
        return obj.value
    if dataclasses.is_dataclass(obj):
        return {f.name: to_data(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_data(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_data(v) for v in obj]
    return obj


def from_data(cls: type[T], data: Any, where: str = "", echo: bool = True) -> T:
    """``data`` decoded as ``cls``, strictly; DecodeError naming the field and what it expected, and,
    unless ``echo`` is false, what it found (cut) and the name of a field it does not know."""
    return _decode(cls, data, where or cls.__name__, echo)


def decode_as(tp: Any, data: Any, where: str) -> Any:
    """``data`` decoded as the type ``tp`` (a field's annotation, such as ``int | None``), strictly."""
    return _decode(tp, data, where, True)


def _decode(tp: Any, data: Any, where: str, echo: bool) -> Any:
    """``data`` decoded as ``tp``: handed to the decoder of the type's kind (generic, dataclass, enum, scalar)."""
    if tp is Any:
        return data
    generic = _GENERIC_DECODERS.get(typing.get_origin(tp))
    if generic is not None:
        return generic(tp, data, where, echo)
    if dataclasses.is_dataclass(tp):
        return _decode_dataclass(tp, data, where, echo)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return _decode_enum(tp, data, where, echo)
    return _decode_scalar(tp, data, where, echo)


def _decode_union(tp: Any, data: Any, where: str, echo: bool) -> Any:
    """The first of the union's types ``data`` fits (null where it admits null), else the one error or all failing."""
    args = typing.get_args(tp)
    if data is None and type(None) in args:
        return None
    errors = []
    for arg in args:
        if arg is type(None):
            continue
        try:
            return _decode(arg, data, where, echo)
        except DecodeError as exc:
            errors.append(str(exc))
    raise DecodeError(errors[0] if len(errors) == 1 else f"{where}: {_found(data, echo, '{} ')}fits none of {tp}")


def _decode_literal(tp: Any, data: Any, where: str, echo: bool) -> Any:
    """``data`` where it is one of the literal's values, of the same type."""
    values = typing.get_args(tp)
    if data in values and type(data) in {type(value) for value in values}:
        return data
    raise DecodeError(f"{where}: {_found(data, echo, 'is {}; ')}expected {' or '.join(map(repr, values))}")


def _decode_annotated(tp: Any, data: Any, where: str, echo: bool) -> Any:
    """``data`` decoded as the base type, then held to the constraints the annotation carries."""
    base, *extras = typing.get_args(tp)
    value = _decode(base, data, where, echo)
    for extra in extras:
        within_constraint(getattr(extra, "keywords", {}), value, where, echo)
    return value


def _expect_list(data: Any, where: str) -> None:
    if not isinstance(data, list):
        raise DecodeError(f"{where}: expected a list, got {type(data).__name__}")


def _decode_list(tp: Any, data: Any, where: str, echo: bool) -> Any:
    (item,) = typing.get_args(tp)
    _expect_list(data, where)
    return [_decode(item, v, f"{where}[{i}]", echo) for i, v in enumerate(data)]


def _decode_tuple(tp: Any, data: Any, where: str, echo: bool) -> Any:
    """A JSON list as a tuple: of any length for ``tuple[X, ...]``, else of exactly the tuple's items."""
    args = typing.get_args(tp)
    _expect_list(data, where)
    if len(args) == 2 and args[1] is Ellipsis:
        args = (args[0],) * len(data)
    elif len(args) != len(data):
        raise DecodeError(f"{where}: expected {len(args)} items, got {len(data)}")
    return tuple(_decode(item, v, f"{where}[{i}]", echo) for i, (item, v) in enumerate(zip(args, data)))


def _decode_dict(tp: Any, data: Any, where: str, echo: bool) -> Any:
    _, value = typing.get_args(tp)
    if not isinstance(data, dict):
        raise DecodeError(f"{where}: expected an object, got {type(data).__name__}")
    return {str(k): _decode(value, v, f"{where}.{_key(k, echo)}", echo) for k, v in data.items()}


_GENERIC_DECODERS = {
    typing.Union: _decode_union,
    types.UnionType: _decode_union,
    typing.Literal: _decode_literal,
    typing.Annotated: _decode_annotated,
    list: _decode_list,
    tuple: _decode_tuple,
    dict: _decode_dict,
}


def _decode_enum(tp: type[enum.Enum], data: Any, where: str, echo: bool) -> Any:
    try:
        return tp(data)
    except ValueError:
        expected = ", ".join(repr(member.value) for member in tp)
        raise DecodeError(f"{where}: {_found(data, echo, 'is {}; ')}expected one of {expected}") from None


def _decode_scalar(tp: Any, data: Any, where: str, echo: bool) -> Any:
    """A finite float (an int read as one), or a str, int or bool of exactly that type."""
    if tp is float and isinstance(data, (int, float)) and not isinstance(data, bool):
        try:
            number = float(data)
        except OverflowError:  # an integer past the largest float
            number = math.inf
        if math.isfinite(number):
            return number
        raise DecodeError(f"{where}: expected a finite number{_found(data, echo)}")
    if tp in (str, int, bool) and type(data) is tp:
        return data
    raise DecodeError(f"{where}: expected {getattr(tp, '__name__', tp)}{_found(data, echo)}")


def _found(data: Any, echo: bool, words: str = ", got {}") -> str:
    """``words`` saying the value found (quoted, cut), or nothing where values are not echoed."""
    return words.format(quoted(data)) if echo else ""


def _key(key: Any, echo: bool) -> str:
    """A key of a mapping as a field path names it: cut, or ``*`` where values are not echoed."""
    text = str(key)
    return (text if len(text) <= QUOTED_CHARS else f"{text[:QUOTED_CHARS]}...") if echo else "*"


def within_constraint(keywords: dict[str, Any], value: Any, where: str, echo: bool) -> None:
    """DecodeError unless ``value`` meets the JSON Schema ``keywords`` its type or field carries
    (``minimum``, ``maximum``, ``pattern``, ``enum``, ``const``, ``minItems``; formats are not checked)."""
    if value is None:
        return
    if "minimum" in keywords and value < keywords["minimum"]:
        expected = f"at least {keywords['minimum']}"
    elif "maximum" in keywords and value > keywords["maximum"]:
        expected = f"at most {keywords['maximum']}"
    elif "pattern" in keywords and not re.search(keywords["pattern"], value):
        expected = f"text matching {keywords['pattern']}"
    elif "enum" in keywords and value not in keywords["enum"]:
        expected = f"one of {', '.join(map(repr, keywords['enum']))}"
    elif "const" in keywords and value != keywords["const"]:
        expected = repr(keywords["const"])
    elif "minItems" in keywords and len(value) < keywords["minItems"]:
        expected = f"at least {keywords['minItems']} items"
    else:
        return
    raise DecodeError(f"{where}: expected {expected}{_found(value, echo)}")


class _ModuleNames(dict):
    """A module's names as seen from outside, for evaluating its annotations: unlike its
    ``__dict__``, this reaches the names its ``__getattr__`` loads on first use (PEP 562)."""

    def __init__(self, module: Any) -> None:
        super().__init__()
        self.module = module

    def __missing__(self, name: str) -> Any:
        try:
            return getattr(self.module, name)
        except AttributeError:
            raise KeyError(name) from None


def field_types(cls: type, extras: bool = False) -> dict[str, Any]:
    """Resolved field types, once per class (resolving them dominates decoding a baseline);
    ``extras`` keeps ``Annotated`` metadata (the schema's constraints)."""
    return _field_types(cls, extras)


@functools.cache
def _field_types(cls: type, extras: bool) -> dict[str, Any]:
    return typing.get_type_hints(cls, localns=_ModuleNames(sys.modules[cls.__module__]), include_extras=extras)


def _decode_dataclass(cls: Any, data: Any, where: str, echo: bool) -> Any:
    if not isinstance(data, dict):
        raise DecodeError(f"{where}: expected an object, got {type(data).__name__}")
    hints = field_types(cls, extras=True)  # with the constraints its types carry
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise DecodeError(f"{where}: unknown field {quoted(unknown[0])}" if echo else f"{where}: holds a field {cls.__name__} has not")
    values = {}
    for name, field in fields.items():
        if name in data:
            values[name] = _decode(hints[name], data[name], f"{where}.{name}", echo)
            within_constraint(field.metadata.get("schema", {}), values[name], f"{where}.{name}", echo)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise DecodeError(f"{where}: missing field {name!r}")
    try:
        return cls(**values)
    except ValueError as exc:  # a dataclass whose __post_init__ refuses a combination of fields
        raise DecodeError(f"{where}: {str(exc)[:QUOTED_CHARS]}") from None


def read_text_file(path: str | Path, error: type[ValueError], kind: str, hint: str, limit: int) -> str:
    """A regular file's text, at most ``limit`` bytes, or ``error`` naming the file and why it cannot be read."""
    try:
        return read_text(path, limit)
    except FileNotFoundError:
        raise error(f"{path}: {kind} file not found; {hint}") from None
    except Refused as exc:
        raise error(refusal(path, kind, exc, hint)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise error(f"{path}: cannot read {kind} file ({exc})") from None


def load_yaml_file(path: str | Path, error: type[ValueError], kind: str, hint: str) -> Any:
    """The YAML in a file (safe loader), or ``error`` naming the file, the line and ``hint``."""
    import yaml  # here, not at the top: the healthcheck decodes JSON only

    text = read_text_file(path, error, kind, hint, YAML_BYTES)
    try:
        return within_bounds(yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)), path, len(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise error(f"{path}: not valid YAML{where}; {hint}") from None
    except RecursionError:
        raise error(refusal(path, kind, too_deep(path), hint)) from None
    except Refused as exc:
        raise error(refusal(path, kind, exc, hint)) from None


def load_json_file(path: str | Path, error: type[ValueError], kind: str, hint: str) -> Any:
    """The JSON in a file, its text redacted (it may come from elsewhere), or ``error`` naming the file, what is wrong with it and ``hint``."""
    text = read_text_file(path, error, kind, hint, DOCUMENT_BYTES)
    try:
        return redact_recorded(parse_json(text, path))
    except json.JSONDecodeError as exc:
        raise error(f"{path}: not JSON ({json_error_text(exc)}); {hint}") from None
    except Refused as exc:
        raise error(refusal(path, kind, exc, hint)) from None


def refusal(path: str | Path, kind: str, exc: Refused, hint: str) -> str:
    """One line: the file, why the doctor does not read it, and what it expected."""
    return f"{path}: the {kind} file {exc}; {hint}"


def json_error_text(exc: json.JSONDecodeError) -> str:
    """Where and why JSON could not be parsed (its own message may end in "starting at")."""
    return f"{exc.msg}: line {exc.lineno} column {exc.colno}"


def decode_document(cls: type[T], data: Any, source: str, what: str, schema_version: int,
                    error: type[ValueError], redo: str) -> T:
    """A versioned JSON document (facts, baseline) as ``cls``, or ``error`` naming the file and how to redo it."""
    if not isinstance(data, dict):
        raise error(f"{source}: expected a JSON object of {what}; {redo}")
    version = data.get("schema_version")
    if version != schema_version:
        raise error(f"{source}: {what} schema_version is {quoted(version)}, this paddle-doctor reads {schema_version}; {redo}")
    try:
        return from_data(cls, data)
    except DecodeError as exc:
        raise error(f"{source}: {exc}; {redo}") from None
