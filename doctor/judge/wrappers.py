"""wrappers.yaml: the libraries that build predictors for a service (PaddleOCR, PaddleX, RapidOCR, ...),
as validated data: where their code lives, the setting their users change instead of the Config
call, their defaults by version, and their known pitfalls.

A predictor's origin names its wrapper: the record's origin frame (the installed distribution
and its version) or a module path the service imports. The fix of a finding about such a
predictor gives the wrapper's setting first (``PaddleOCR(cpu_threads=2)``) and the raw Config
call as the alternative.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path
from typing import Any

from ..base.serde import load_yaml_file
from .gpu_support import version_tuple
from .rules import packaged_file

SCHEMA_VERSION = 1
WRAPPER_ID = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MODULE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
SETTINGS = ("threads", "onednn", "bf16", "device")  # bf16: oneDNN bfloat16 on the CPU
KNOB_KINDS = {"python": "keyword argument", "shell": "command-line flag", "yaml": "YAML key", "env": "environment variable"}
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
WRAPPER_FIELDS = {"id", "name", "distribution", "versions", "modules", "builds_at", "checked", "settings", "pitfalls"}
SETTING_FIELDS = {"default", "knobs", "note"}
PITFALL_FIELDS = {"versions", "about", "text", "source"}


class WrappersError(ValueError):
    """wrappers.yaml is broken; the message names the file, the wrapper and the field."""


@dataclass(frozen=True)
class Versions:
    """A range of a wrapper's versions: ``start`` inclusive, ``below`` exclusive; None is open."""

    start: str | None = None
    below: str | None = None

    def contains(self, version: str | None) -> bool:
        """Whether ``version`` is in the range; an unknown version is in an open range only."""
        if self.start is None and self.below is None:
            return True
        found = version_tuple(version) if version else None
        if found is None:
            return False
        return (self.start is None or _padded(found) >= _padded(version_tuple(self.start))) and \
            (self.below is None or _padded(found) < _padded(version_tuple(self.below)))

    def describe(self) -> str:
        if self.start and self.below:
            return f"{self.start} to below {self.below}"
        if self.start:
            return f"{self.start} and later"
        return f"below {self.below}" if self.below else "every version"


def _padded(version: tuple[int, ...] | None) -> tuple[int, ...]:
    return (tuple(version or ()) + (0, 0, 0, 0))[:4]


@dataclass(frozen=True)
class Knob:
    """One way a wrapper's user sets a value: ``kind`` python (a keyword argument), shell (a flag),
    yaml (a key of its file) or env (a variable); ``code`` with ``{value}`` where the value goes."""

    kind: str
    code: str


@dataclass(frozen=True)
class WrapperSetting:
    """What a wrapper does about one doctor setting: its default in words, its knobs, a note."""

    default: str
    knobs: tuple[Knob, ...]
    note: str | None = None


@dataclass(frozen=True)
class Pitfall:
    """What goes wrong with a wrapper, for its ``versions`` and the settings it is ``about``."""

    versions: Versions
    about: tuple[str, ...]
    text: str
    source: str


@dataclass(frozen=True)
class Wrapper:
    id: str
    name: str
    distribution: str
    versions: Versions
    modules: tuple[str, ...]
    builds_at: str
    checked: str
    settings: dict[str, WrapperSetting]
    pitfalls: tuple[Pitfall, ...]

    def owns_module(self, module: str) -> bool:
        return any(module == prefix or module.startswith(prefix + ".") for prefix in self.modules)

    def pitfalls_of(self, version: str | None, setting: str) -> list[Pitfall]:
        return [pitfall for pitfall in self.pitfalls if setting in pitfall.about and pitfall.versions.contains(version)]


@dataclass(frozen=True)
class WrapperBook:
    """The wrappers by id, and the file they came from."""

    source: str
    wrappers: tuple[Wrapper, ...]

    def for_distribution(self, distribution: str, version: str | None) -> Wrapper | None:
        """The wrapper an installed distribution at ``version`` is; with no version, only where one
        entry describes that distribution (PaddleOCR 2 and 3 differ)."""
        named = [wrapper for wrapper in self.wrappers if wrapper.distribution == normalized(distribution)]
        if not version:
            return named[0] if len(named) == 1 else None
        return next((wrapper for wrapper in named if wrapper.versions.contains(version)), None)

    def for_module(self, module: str, version: str | None = None) -> Wrapper | None:
        """The wrapper whose code ``module`` (``paddleocr.tools.infer.utility``) is, by its import paths."""
        owners = [wrapper for wrapper in self.wrappers if wrapper.owns_module(module) and (not version or wrapper.versions.contains(version))]
        return owners[0] if len(owners) == 1 else None


def normalized(distribution: str) -> str:
    """A distribution's name as the package index compares them (``rapidocr_paddle`` is ``rapidocr-paddle``)."""
    return re.sub(r"[-_.]+", "-", distribution).lower()


def default_wrappers_path() -> Path:
    return packaged_file("wrappers.yaml")


@lru_cache(maxsize=4)
def load_wrappers(path: str | None = None) -> WrapperBook:
    source = str(path or default_wrappers_path())
    data = load_yaml_file(source, WrappersError, "wrappers", "expected a wrappers.yaml with schema_version and wrappers")
    return parse_wrappers(data, source)


def parse_wrappers(data: Any, source: str) -> WrapperBook:
    if not isinstance(data, dict) or set(data) != {"schema_version", "wrappers"}:
        raise WrappersError(f"{source}: expected a mapping with exactly schema_version and wrappers")
    if data["schema_version"] != SCHEMA_VERSION:
        raise WrappersError(f"{source}: schema_version is {data['schema_version']!r}, expected {SCHEMA_VERSION}")
    entries = data["wrappers"]
    if not isinstance(entries, list) or not entries:
        raise WrappersError(f"{source}: 'wrappers' must be a non-empty list")
    wrappers: list[Wrapper] = []
    for index, entry in enumerate(entries):
        wrapper = _parse_wrapper(entry, source, index)
        if any(other.id == wrapper.id for other in wrappers):
            raise WrappersError(f"{source}: wrapper {wrapper.id}: field 'id': duplicate id")
        wrappers.append(wrapper)
    return WrapperBook(source, tuple(wrappers))


def _parse_wrapper(entry: Any, source: str, index: int) -> Wrapper:
    label = entry.get("id") if isinstance(entry, dict) and isinstance(entry.get("id"), str) else f"#{index + 1}"

    def fail(field: str, message: str) -> WrappersError:
        return WrappersError(f"{source}: wrapper {label}: field '{field}': {message}")

    if not isinstance(entry, dict):
        raise fail("-", "expected a mapping")
    for field in sorted(WRAPPER_FIELDS - set(entry)):
        raise fail(field, "missing")
    for field in sorted(set(entry) - WRAPPER_FIELDS):
        raise fail(field, "unknown field")
    if not isinstance(entry["id"], str) or not WRAPPER_ID.match(entry["id"]):
        raise fail("id", "expected lowercase words joined by '-'")
    for field in ("name", "distribution", "builds_at", "checked"):
        _text(entry[field], partial(fail, field))
    modules = entry["modules"]
    if not isinstance(modules, list) or not modules or not all(isinstance(m, str) and MODULE.match(m) for m in modules):
        raise fail("modules", "expected a non-empty list of import paths (paddleocr, tools.infer)")
    settings = entry["settings"]
    if not isinstance(settings, dict) or not settings:
        raise fail("settings", f"expected a mapping of {', '.join(SETTINGS)} to their knobs")
    parsed = {}
    for name, setting in settings.items():
        if name not in SETTINGS:
            raise fail("settings", f"unknown setting {name!r}; expected one of {', '.join(SETTINGS)}")
        parsed[name] = _parse_setting(setting, partial(fail, f"settings.{name}"))
    pitfalls = entry["pitfalls"]
    if not isinstance(pitfalls, list):
        raise fail("pitfalls", "expected a list (empty when none is known)")
    return Wrapper(entry["id"], entry["name"].strip(), normalized(entry["distribution"]),
                   _parse_versions(entry["versions"], partial(fail, "versions")), tuple(modules),
                   entry["builds_at"].strip(), entry["checked"].strip(), parsed,
                   tuple(_parse_pitfall(pitfall, partial(fail, "pitfalls")) for pitfall in pitfalls))


Failure = Callable[[str], Exception]  # makes the error of one field from what is wrong with it


def _text(value: Any, fail: Failure) -> str:
    if not isinstance(value, str) or not value.strip():
        raise fail("expected non-empty text")
    return " ".join(value.split())


def _parse_versions(value: Any, fail: Failure) -> Versions:
    if value is None:
        return Versions()
    if not isinstance(value, dict) or set(value) != {"from", "below"}:
        raise fail("expected null or a mapping with 'from' and 'below' (a version in quotes, or null)")
    for key in ("from", "below"):
        if value[key] is not None and (not isinstance(value[key], str) or version_tuple(value[key]) is None):
            raise fail(f"'{key}' must be a version in quotes (\"3.0\") or null, not {value[key]!r}")
    return Versions(value["from"], value["below"])


def _parse_setting(value: Any, fail: Failure) -> WrapperSetting:
    if not isinstance(value, dict) or not {"default", "knobs"} <= set(value) or set(value) - SETTING_FIELDS:
        raise fail("expected a mapping with 'default', 'knobs' and optionally 'note'")
    knobs = value["knobs"]
    if not isinstance(knobs, list) or not knobs:
        raise fail("'knobs' must be a non-empty list")
    parsed = []
    for knob in knobs:
        if not isinstance(knob, dict) or set(knob) != {"kind", "code"}:
            raise fail("each knob needs exactly 'kind' and 'code'")
        if knob["kind"] not in KNOB_KINDS:
            raise fail(f"knob kind {knob['kind']!r}; expected one of {', '.join(KNOB_KINDS)}")
        code = _text(knob["code"], fail)
        unknown = sorted(set(PLACEHOLDER.findall(code)) - {"value"})
        if unknown:
            raise fail(f"knob {code!r} names {{{unknown[0]}}}; a knob's only placeholder is {{value}}")
        parsed.append(Knob(knob["kind"], code))
    note = _text(value["note"], fail) if value.get("note") is not None else None
    return WrapperSetting(_text(value["default"], fail), tuple(parsed), note)


def _parse_pitfall(value: Any, fail: Failure) -> Pitfall:
    if not isinstance(value, dict) or set(value) != PITFALL_FIELDS:
        raise fail(f"each pitfall needs exactly {', '.join(sorted(PITFALL_FIELDS))}")
    about = value["about"]
    if not isinstance(about, list) or not about or not set(about) <= set(SETTINGS):
        raise fail(f"'about' must list the settings a pitfall concerns, of {', '.join(SETTINGS)}")
    return Pitfall(_parse_versions(value["versions"], fail), tuple(about), _text(value["text"], fail), _text(value["source"], fail))


WRAPPERS_DOC = "docs/wrappers.md"


def wrappers_doc_markdown(book: WrapperBook) -> str:
    """docs/wrappers.md: one section per wrapper, its settings with their default and knobs, its pitfalls."""
    parts = [
        "# Wrappers paddle-doctor knows",
        "",
        "<!-- generated from wrappers.yaml by scripts/update-readme-rules; edit wrappers.yaml, not this file -->",
        "",
        ("Where a predictor was built by one of these libraries (the record's origin frame, or the "
        "`.dist-info` beside the source that builds it, names its distribution and version), a finding's "
        "fix and the recommended configuration give the library's own setting first and the raw "
        "`paddle.inference.Config` call after it as the alternative; `{value}` is filled in with the "
        "value the finding proposes, quoted for the knob's language. `checked` says where each entry "
        "was read; \"not verified\" marks what comes from documentation or issues only."),
        "",
        *(f"- [{wrapper.name} ({wrapper.versions.describe()})](#{wrapper.id})" for wrapper in book.wrappers),
    ]
    for wrapper in book.wrappers:
        parts += ["", f'<a id="{wrapper.id}"></a>', f"## {wrapper.name} ({wrapper.versions.describe()})", "",
                  (f"Distribution `{wrapper.distribution}` · modules {', '.join(f'`{m}`' for m in wrapper.modules)} · "
                  f"builds its predictors in {wrapper.builds_at}"), "", f"Checked: {wrapper.checked}"]
        for name, setting in wrapper.settings.items():
            parts += ["", f"### {name}", "", f"Default: {setting.default}", ""]
            parts += [f"- {KNOB_KINDS[knob.kind]}: `{knob.code}`" for knob in setting.knobs]
            if setting.note:
                parts += ["", setting.note]
        if wrapper.pitfalls:
            parts += ["", "### Known pitfalls", ""]
            parts += [f"- {pitfall.versions.describe()} ({', '.join(pitfall.about)}): {pitfall.text} Source: {pitfall.source}"
                      for pitfall in wrapper.pitfalls]
    return "\n".join(parts) + "\n"
