"""known_issues.yaml: the problems Paddle users hit, by version, as validated data, and whether one
holds for a setup.

Each entry names the packages it affects with their version ranges (Paddle, oneDNN, CUDA, cuDNN,
TensorRT, or the wrapper that builds the predictor: PaddleOCR, PaddleX, ...), the condition in which
it shows (the configuration, the device, the model's format and the ops or attributes of its
program, the GPU), what the user sees, the version that fixed it, the workaround in the user's terms
and the public threads. A team's own file (``--known-issues FILE``) adds entries of the same form.

Matching is a pure function of the facts as one predictor sees them (:class:`Setup`): each part of
an entry holds, does not, or cannot be told from what the doctor knows, and then says what is
missing (:class:`Decision`). The entry's kind decides the rule its finding is reported under
(``ProblemKind.rule``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.serde import DecodeError, from_data, load_yaml_file
from ..base.vocabulary import Device, ModelFormat, PaddleStatus, ProblemKind
from ..facts.knobs import setting_of, switches
from .rules import CHANGE_KINDS, Change, packaged_file
from .versions import Version, VersionRange, VersionRangeError, parse_range, parse_version

if TYPE_CHECKING:
    from ..facts import Facts
    from ..facts.graph import GraphFacts
    from ..facts.predictor import PredictorConfig
    from ..facts.recorded import RecordedPredictor
    from ..graph.program import Program

SCHEMA_VERSION = 1
ENTRY_ID = re.compile(r"^(?!PD-)[A-Z][A-Z0-9]*-\d{3}$")  # KI-001, or a team's own prefix (ACME-001); PD- ids are rules'
PACKAGE = re.compile(r"^[a-z0-9]+([-_.][a-z0-9]+)*$")
ATTRIBUTE_TYPE = re.compile(r"^(array<)?[a-z0-9]+>?$")
PADDLE_WHEELS = ("paddlepaddle", "paddlepaddle-gpu")
# the packages whose versions the probes give; any other name is a wrapper that builds the predictor (paddleocr, paddlex)
PROBED_PACKAGES = ("paddle", *PADDLE_WHEELS, "onednn", "cuda", "cudnn", "tensorrt")
BROKEN = (ProblemKind.CRASH, ProblemKind.WRONG_RESULT)  # what the predictor worker can confirm
# the least CUDA that builds kernels for a compute capability (NVIDIA's CUDA 12.8 release notes add sm_100 and sm_120)
CUDA_FOR_CAPABILITY = {(12, 0): (12, 8), (10, 0): (12, 8), (9, 0): (11, 8), (8, 9): (11, 8)}
HINT = "expected a known_issues.yaml with schema_version and known_issues (see docs/known_issues.md)"


class KnownIssuesError(ValueError):
    """A known-issues file is broken; the message names the file, the entry and the field."""


def _text(value: str, name: str) -> str:
    if not value.strip():
        raise ValueError(f"field '{name}': expected non-empty text")
    return " ".join(value.split())


def _switches(settings: dict[str, bool], name: str) -> None:
    """Each of ``settings`` a switch of the predictor's configuration."""
    unknown = sorted(set(settings) - set(switches()))
    if unknown:
        raise ValueError(f"field '{name}': {unknown[0]!r} is no switch of the predictor's configuration; "
                         f"expected one of {', '.join(switches())}")


def _range(value: str, name: str) -> VersionRange:
    try:
        return parse_range(value)
    except VersionRangeError as exc:
        raise ValueError(f"field '{name}': {exc}") from None


@dataclass(frozen=True)
class ModelCondition:
    """Which models an entry concerns: one of ``formats`` (any where empty), and, where either is given,
    a program with one of ``ops`` (carrying an ``attribute`` of that type, such as ``array<f64>``;
    on any op where ``ops`` is empty) or a predictor built by one of ``built_by`` (a wrapper's
    distribution and its version range: PaddleOCR's models carry the op)."""

    formats: tuple[ModelFormat, ...] = ()
    ops: tuple[str, ...] = ()
    attribute: str | None = None
    built_by: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.attribute is not None and not ATTRIBUTE_TYPE.match(self.attribute):
            raise ValueError(f"field 'attribute': {self.attribute!r} is no attribute type; expected one such as f64 or array<f64>")
        for package, versions in self.built_by.items():
            _package(package, "built_by")
            _range(versions, f"built_by.{package}")

    @property
    def program(self) -> bool:
        """Whether the entry names something of the program (ops or an attribute type)."""
        return bool(self.ops) or self.attribute is not None


@dataclass(frozen=True)
class Condition:
    """When an entry shows; every part given must hold. ``settings``: switches of the predictor's configuration
    (facts/knobs.py's, Paddle's default where the service leaves one), on or off; ``tensorrt``: the TensorRT
    engine is on; ``passes``: these passes run (the service deletes not every one); ``calls``: the service's
    source calls one of these Config methods (each with the one that replaces it, or null); ``env_unset``:
    the service starts without these variables; ``compute_capability``: a range of the GPU's;
    ``wheel_has_gpu_arch``: whether the wheel has kernels for the GPU; ``model``: the model."""

    device: Device | None = None
    settings: dict[str, bool] = field(default_factory=dict)
    tensorrt: bool | None = None
    passes: tuple[str, ...] = ()
    calls: dict[str, str | None] = field(default_factory=dict)
    env_unset: tuple[str, ...] = ()
    compute_capability: str | None = None
    wheel_has_gpu_arch: bool | None = None
    model: ModelCondition | None = None

    def __post_init__(self) -> None:
        _switches(self.settings, "settings")
        if self.compute_capability is not None:
            _range(self.compute_capability, "compute_capability")


@dataclass(frozen=True)
class Workaround:
    """What the user does until the fix: ``text`` in words, ``changes`` to make (a pin, a Config call, a
    wrapper's keyword), and ``measure``: the settings the predictor worker changes to measure it."""

    text: str
    changes: tuple[Change, ...] = ()
    measure: dict[str, bool] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "text", _text(self.text, "workaround.text"))
        for change in self.changes:
            if change.kind not in CHANGE_KINDS:
                raise ValueError(f"field 'workaround.changes': change kind {change.kind!r}; expected one of {', '.join(CHANGE_KINDS)}")
            if not change.code.strip():
                raise ValueError("field 'workaround.changes': change code must be non-empty text")
        _switches(self.measure, "measure")

    def lines(self) -> list[str]:
        """The workaround as lines: its text, then each change's code."""
        return [self.text, *(change.code for change in self.changes)]


@dataclass(frozen=True)
class KnownIssue:
    """One known problem. ``error``: text of Paddle's message by which the worker recognises it;
    ``fixed_in``: the first release with the fix (null: none yet), ``fixed_by`` what fixed it;
    ``checked``: where the entry was verified (reproduced here, or read in the threads only)."""

    id: str
    title: str
    kind: ProblemKind
    affects: dict[str, str]
    symptom: str
    workaround: Workaround
    links: tuple[str, ...]
    checked: str
    when: Condition = field(default_factory=Condition)
    error: str | None = None
    fixed_in: str | None = None
    fixed_by: str | None = None

    def __post_init__(self) -> None:
        if not ENTRY_ID.match(self.id):
            raise ValueError("field 'id': expected a prefix and three digits (KI-001, or a team's own such as ACME-001); PD- ids are rules'")
        for name in ("title", "symptom", "checked"):
            object.__setattr__(self, name, _text(getattr(self, name), name))
        if not self.affects:
            raise ValueError(f"field 'affects': expected the packages it affects with their version ranges ({', '.join(PROBED_PACKAGES)}, "
                             "or a wrapper's distribution)")
        for package, versions in self.affects.items():
            _package(package, "affects")
            _range(versions, f"affects.{package}")
        if self.fixed_in is not None and parse_version(self.fixed_in) is None:
            raise ValueError(f"field 'fixed_in': {self.fixed_in!r} is no version; expected one such as 2.5.1, or null")
        if not self.links or not all(link.startswith("https://") for link in self.links):
            raise ValueError("field 'links': expected a non-empty list of https:// URLs")

    @property
    def rule(self) -> str:
        return self.kind.rule

    @property
    def explain_command(self) -> str:
        return f"paddle-doctor explain {self.id}"

    def fixed(self) -> str:
        """``fixed in 2.5.1 (Paddle PR #55504)``; ``not affected from paddle 2.7.0 on (...)`` where the range ends
        below a release; else ``no release has the fix yet (...)``; for a deprecation or a notice, what replaces
        the behaviour."""
        by = f" ({self.fixed_by})" if self.fixed_by else ""
        if self.fixed_in:
            return f"fixed in {self.fixed_in}{by}"
        if self.kind in (ProblemKind.DEPRECATED, ProblemKind.NOTICE):
            return self.fixed_by or "a change of behaviour, not a bug"
        unaffected = [f"{package} {clause.strip()[1:]}" for package, versions in self.affects.items()
                      for clause in versions.split(",") if clause.strip().startswith("<") and not clause.strip().startswith("<=")]
        if unaffected:  # the range ends below a release: that release has it fixed, though the entry names none
            return f"not affected from {' and '.join(unaffected)} on{by}"
        return f"no release has the fix yet{by}"

    def threads(self) -> str:
        """The links by their short names: ``Paddle#77340, PaddleOCR#17869``."""
        return ", ".join(short_link(link) for link in self.links)


def _package(name: str, where: str) -> None:
    if not PACKAGE.match(name):
        raise ValueError(f"field '{where}': {name!r} is no package name; expected {', '.join(PROBED_PACKAGES)} or a distribution's name")


GITHUB_THREAD = re.compile(r"^https://github\.com/[^/]+/(?P<repo>[^/]+)/(?:issues|pull)/(?P<number>\d+)")


def short_link(url: str) -> str:
    """``Paddle#77340`` for a GitHub issue or pull request, else the URL."""
    match = GITHUB_THREAD.match(url)
    return f"{match.group('repo')}#{match.group('number')}" if match else url


@dataclass(frozen=True)
class KnownIssueBook:
    """The entries by id, in the order written; ``sources`` the files they came from."""

    sources: tuple[str, ...]
    entries: tuple[KnownIssue, ...]

    def get(self, entry_id: str) -> KnownIssue | None:
        return next((entry for entry in self.entries if entry.id == entry_id.upper()), None)

    def of_rule(self, rule_id: str) -> list[KnownIssue]:
        return [entry for entry in self.entries if entry.rule == rule_id]

    def named_sources(self) -> list[str]:
        """The files, for people: the built-in one by its name, a user's as given."""
        return [Path(self.sources[0]).name, *self.sources[1:]]


def default_known_issues_path() -> Path:
    return packaged_file("known_issues.yaml")


def parse_known_issues(data: Any, source: str) -> tuple[KnownIssue, ...]:
    """The entries of one file, each validated; KnownIssuesError naming the file, the entry and the field."""
    if not isinstance(data, dict) or set(data) != {"schema_version", "known_issues"}:
        raise KnownIssuesError(f"{source}: {HINT}")
    if data["schema_version"] != SCHEMA_VERSION:
        raise KnownIssuesError(f"{source}: schema_version is {data['schema_version']!r}, expected {SCHEMA_VERSION}")
    listed = data["known_issues"]
    if not isinstance(listed, list):
        raise KnownIssuesError(f"{source}: 'known_issues' must be a list of entries")
    entries: list[KnownIssue] = []
    for index, raw in enumerate(listed):
        label = raw["id"] if isinstance(raw, dict) and isinstance(raw.get("id"), str) else f"#{index + 1}"
        try:
            entry = from_data(KnownIssue, raw, f"entry {label}")
        except DecodeError as exc:
            raise KnownIssuesError(f"{source}: {_field_named(str(exc))}") from None
        if any(other.id == entry.id for other in entries):
            raise KnownIssuesError(f"{source}: entry {entry.id}: field 'id': duplicate id")
        entries.append(entry)
    return tuple(entries)


DECODED = re.compile(r"entry (?P<entry>[^.:\s]+)(?:\.(?P<path>[^:\s]+))?: (?:field '(?P<field>[^']+)': )?(?P<rest>.*)")
NAMED_FIELD = re.compile(r"(?P<what>missing|unknown) field '(?P<name>[^']+)'")


def _field_named(message: str) -> str:
    """What the decoder says (``entry KI-004.when.onednn: expected bool``, ``entry KI-004.when: unknown
    field 'x'``) as the entry and the field's path: ``entry KI-004: field 'when.onednn': expected bool``."""
    match = DECODED.fullmatch(message)
    if match is None:
        return message
    path = [part for part in (match.group("path"), match.group("field")) if part]
    rest = match.group("rest")
    named = NAMED_FIELD.match(rest)
    if named is not None:
        path.append(named.group("name"))
        rest = "missing" if named.group("what") == "missing" else "unknown field"
    return f"entry {match.group('entry')}: " + (f"field '{'.'.join(path)}': " if path else "") + rest


def read_known_issues(path: str | Path) -> tuple[KnownIssue, ...]:
    source = str(path)
    return parse_known_issues(load_yaml_file(source, KnownIssuesError, "known issues", HINT), source)


@lru_cache(maxsize=4)
def load_known_issues(extra: str | None = None) -> KnownIssueBook:
    """The built-in entries, and those of ``extra`` (a user's or a team's file) after them; an id of
    ``extra`` that is built in already is an error."""
    built_in_path = str(default_known_issues_path())
    entries = read_known_issues(built_in_path)
    if extra is None:
        return KnownIssueBook((built_in_path,), entries)
    added = read_known_issues(extra)
    taken = next((entry.id for entry in added if any(own.id == entry.id for own in entries)), None)
    if taken is not None:
        raise KnownIssuesError(f"{extra}: entry {taken}: field 'id': {taken} is a built-in entry; give yours an id of its own")
    return KnownIssueBook((built_in_path, extra), entries + added)


_SELECTED: list[str | None] = [None]  # the --known-issues file of the command running in this process


@contextmanager
def known_issues_from(extra: str | None) -> Iterator[KnownIssueBook]:
    """For the command's run: the built-in entries and ``extra``'s, validated now (KnownIssuesError
    names what is wrong), the book every check and experiment of the run reads (``active_book``)."""
    book = load_known_issues(extra)
    _SELECTED.append(extra)
    try:
        yield book
    finally:
        _SELECTED.pop()


def active_book() -> KnownIssueBook:
    """The entries of the running command: the built-in ones, and its --known-issues file's."""
    return load_known_issues(_SELECTED[-1])


# ---------------------------------------------------------------------------- matching


@dataclass(frozen=True)
class Decision:
    """Whether a part of an entry holds: True (``said``: what was seen), False, or None where the facts
    cannot tell (``missing``: what is not known, and how to give it)."""

    holds: bool | None
    said: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()


def seen(words: str) -> Decision:
    return Decision(True, (words,))


NOT = Decision(False)


def unknown(why: str) -> Decision:
    return Decision(None, missing=(why,))


def all_of(decisions: list[Decision]) -> Decision:
    """Every part holds (what each saw), one does not, or none fails and some cannot be told (what each lacks)."""
    if any(decision.holds is False for decision in decisions):
        return NOT
    missing = tuple(dict.fromkeys(why for decision in decisions for why in decision.missing))
    if missing:
        return Decision(None, missing=missing)
    return Decision(True, tuple(dict.fromkeys(words for decision in decisions for words in decision.said)))


def any_of(decisions: list[Decision]) -> Decision:
    """One part holds (what it saw), else some cannot be told (what they lack), else none holds."""
    held = next((decision for decision in decisions if decision.holds), None)
    if held is not None:
        return held
    missing = tuple(dict.fromkeys(why for decision in decisions for why in decision.missing))
    return Decision(None, missing=missing) if missing else NOT


@dataclass(frozen=True)
class ModelView:
    """What an entry may ask of the model: its format, and per op type the types of its attributes
    (None where the program was not read)."""

    format: ModelFormat | None
    attribute_types: dict[str, list[str]] | None = None
    read_from: str = "the model's program"


def model_of_graph(graph: GraphFacts) -> ModelView | None:
    """The model as --model's graph reading saw it; None where its program could not be read."""
    if graph.error is not None:
        return None
    return ModelView(graph.format, dict(graph.attribute_types), graph.program)


def model_of_program(program: Program) -> ModelView:
    return ModelView(program.format, program.attribute_types(), program.path)


def model_of_files(predictor: RecordedPredictor) -> ModelView | None:
    """The model's format as the files a recorded predictor loaded say it (its program is not read)."""
    files = predictor.model
    program = files.prog_file if files is not None else None
    if program is None:
        return None
    suffix = program.rsplit(".", 1)[-1] if "." in program else ""
    fmt = {"json": ModelFormat.PIR, "pdmodel": ModelFormat.PDMODEL}.get(suffix)
    return ModelView(fmt, None, program) if fmt is not None else None


@dataclass(frozen=True)
class Builder:
    """A distribution that built a predictor (``paddleocr`` 3.0.1), as its record frame or the source says it."""

    package: str
    version: str | None


@dataclass(frozen=True)
class Setup:
    """What an entry is matched against: the facts as one predictor sees them, the CPU configuration it
    runs (Paddle's defaults filled in), its model (None: not known), the wrappers that built it (an empty
    list: the service's own code; None: not known), and why a switch of ``config`` is not known where
    Paddle's default stands in for a value the service's source computes (``unknown_switches``)."""

    facts: Facts
    config: PredictorConfig
    model: ModelView | None
    builders: list[Builder] | None
    unknown_switches: dict[str, str] = field(default_factory=dict)


def matches(entry: KnownIssue, setup: Setup) -> Decision:
    """Whether ``entry`` holds for ``setup``: each package in its range, and every part of its condition."""
    return all_of([*(package_in(name, versions, setup) for name, versions in entry.affects.items()),
                   *condition_holds(entry.when, setup)])


def package_in(name: str, versions: str, setup: Setup) -> Decision:
    found, what = installed_version(name, setup)
    if isinstance(found, Decision):
        return found
    label = f"{what} {found}"
    parsed = parse_version(found)
    if parsed is None:
        return unknown(f"{label} is no version the doctor can compare with {versions}")
    return seen(label) if parse_range(versions).contains(parsed) else NOT


def installed_version(name: str, setup: Setup) -> tuple[str | Decision, str]:
    """The version of ``name`` the setup runs and its name for people, or the Decision where it runs none
    (False) or the facts cannot tell (None)."""
    facts = setup.facts
    paddle = facts.paddle
    if name in ("paddle", *PADDLE_WHEELS):
        if paddle.status != PaddleStatus.OK or not paddle.version:
            return unknown(f"Paddle's version is not known ({paddle.reason or paddle.status})"), name
        if name != "paddle":
            if not paddle.distribution:
                return unknown("which Paddle wheel is installed is not known (paddlepaddle or paddlepaddle-gpu)"), name
            if paddle.distribution.lower() != name:
                return NOT, name
        return paddle.version, paddle.distribution or "Paddle"
    if name == "onednn":
        mapped = [library.version for library in facts.service_process.libraries if library.kind == "onednn" and library.version]
        return (mapped[0], "oneDNN") if mapped else (unknown("oneDNN's version is read from the service's process (--pid)"), name)
    if name in ("cuda", "cudnn"):
        if paddle.status != PaddleStatus.OK:
            return unknown(f"Paddle's build is not known ({paddle.reason or paddle.status})"), name
        version = paddle.cuda_version if name == "cuda" else paddle.cudnn_version
        if not paddle.with_cuda or not version or version == "False":
            return NOT, name
        return version, "the wheel's CUDA" if name == "cuda" else "the wheel's cuDNN"
    if name == "tensorrt":
        runtime = paddle.trt_runtime_version
        if runtime is not None and any(runtime):
            return ".".join(str(part) for part in runtime), "TensorRT"
        if paddle.tensorrt_version:
            return paddle.tensorrt_version, "TensorRT"
        return (NOT if paddle.status == PaddleStatus.OK and runtime is not None else
                unknown("TensorRT's version is not known (the Paddle probe reads it)")), name
    return _wrapper_version(name, setup)


def _wrapper_version(name: str, setup: Setup) -> tuple[str | Decision, str]:
    if setup.builders is None:
        return unknown(f"whether {name} builds the predictors is read from the service's record (paddle-doctor record) "
                       "or its source (--source, --pid)"), name
    from .wrappers import normalized

    versions = [builder.version for builder in setup.builders if normalized(builder.package) == normalized(name)]
    if not versions:
        return NOT, name
    return (versions[0], name) if versions[0] else (unknown(f"the version of {name} that builds the predictors is not known"), name)


def condition_holds(when: Condition, setup: Setup) -> list[Decision]:
    """Each part of the condition that is given, decided."""
    facts, config = setup.facts, setup.config
    service = facts.service
    parts: list[Decision] = []
    if when.device is not None:
        parts.append(seen(f"on the {when.device.upper()}") if service.device == when.device else NOT)
    parts += [switch_holds(name, wanted, setup) for name, wanted in when.settings.items()]
    if when.tensorrt is not None:
        on = service.device == Device.GPU and service.tensorrt.enabled
        parts.append(seen(f"TensorRT {'on' if on else 'off'}") if on == when.tensorrt else NOT)
    if when.passes:
        kept = [name for name in when.passes if name not in config.delete_passes]
        parts.append(seen(f"{', '.join(kept)} not deleted") if kept else NOT)
    if when.calls:
        parts.append(calls_made(when.calls, facts))
    if when.env_unset:
        parts.append(environment_lacks(when.env_unset, facts))
    if when.compute_capability is not None or when.wheel_has_gpu_arch is not None:
        parts.append(gpu_fits(when, facts))
    if when.model is not None:
        parts.append(model_fits(when.model, setup))
    return parts


CALLED = re.compile(r"\.(?P<method>[A-Za-z_][A-Za-z0-9_]*)\s*\(")


def calls_made(calls: dict[str, str | None], facts: Facts) -> Decision:
    """Whether the service's source calls one of ``calls``, and where."""
    from ..base.vocabulary import SourceStatus

    source = facts.service_source
    if source.status != SourceStatus.READ:
        return unknown("the service's source is not read (--source FILE, or --pid for the script it runs)")
    found = [f"{setting.location} calls {method}()" + (f" (now {calls[method]}())" if calls[method] else "")
             for setting in source.settings for method in CALLED.findall(setting.code) if method in calls]
    return Decision(True, tuple(dict.fromkeys(found))) if found else NOT


def called_at(calls: dict[str, str | None], facts: Facts) -> list[Any]:
    """The source lines that call one of ``calls`` (what a finding about them points at)."""
    return [setting.location for setting in facts.service_source.settings
            if any(method in calls for method in CALLED.findall(setting.code))]


def environment_lacks(names: tuple[str, ...], facts: Facts) -> Decision:
    process = facts.service_process
    if not process.environ_source:
        return unknown("the service's environment is read from its process (--pid)")
    unset = [name for name in names if name not in process.environ]
    return seen(f"{', '.join(unset)} unset in the service's environment") if unset else NOT


def gpu_fits(when: Condition, facts: Facts) -> Decision:
    """The GPU's compute capability in the entry's range, and the wheel with or without kernels for it."""
    from .gpu_support import compute_capability, describe, judged_gpu

    device = judged_gpu(facts)
    if isinstance(device, str):
        return unknown(device)
    capability = compute_capability(device)
    if capability is None:
        return unknown(f"NVML did not give the compute capability of {describe(device)}")
    parts = []
    if when.compute_capability is not None:
        within = parse_range(when.compute_capability).contains(parse_version(f"{capability[0]}.{capability[1]}") or Version((0,)))
        parts.append(seen(f"{describe(device)} (compute capability {device.compute_capability})") if within else NOT)
    if when.wheel_has_gpu_arch is not None:
        has = wheel_has_arch(capability, facts)
        if has is None:
            parts.append(unknown("the wheel's CUDA architectures are not known (paddle.version.cuda_archs)"))
        else:
            built = "has" if has else "has no"
            parts.append(seen(f"the wheel {built} kernels for sm_{capability[0]}{capability[1]}") if has == when.wheel_has_gpu_arch else NOT)
    return all_of(parts)


def wheel_has_arch(capability: tuple[int, int], facts: Facts) -> bool | None:
    """Whether the wheel has kernels for this compute capability: its architectures where it names them
    (a kernel for sm_XY runs on the same major with a minor of at least Y), else False where its CUDA
    is older than the least that builds them; None where neither tells."""
    major, minor = capability
    archs = facts.paddle.cuda_archs
    if archs:
        return any(arch // 10 == major and arch % 10 <= minor for arch in archs)
    least = CUDA_FOR_CAPABILITY.get(capability)
    built = parse_version(facts.paddle.cuda_version) if facts.paddle.with_cuda else None
    if least is not None and built is not None and built < Version(least):
        return False
    return None


def model_fits(wanted: ModelCondition, setup: Setup) -> Decision:
    model = setup.model
    parts = []
    if wanted.formats:
        if model is None or model.format is None:
            parts.append(unknown("the model's format is not known (--model, or a record of the files each predictor loads)"))
        else:
            parts.append(seen(f"a {model.format} model") if model.format in wanted.formats else NOT)
    alternatives = []
    if wanted.program:
        alternatives.append(program_fits(wanted, model))
    if wanted.built_by:
        alternatives.append(any_of([package_in(name, versions, setup) for name, versions in wanted.built_by.items()]))
    if alternatives:
        parts.append(any_of(alternatives))
    return all_of(parts)


def program_fits(wanted: ModelCondition, model: ModelView | None) -> Decision:
    if model is None or model.attribute_types is None:
        return unknown("the model's program is not read (--model PATH, or --measure for each recorded predictor)")
    ops = [op for op in (wanted.ops or tuple(model.attribute_types)) if op in model.attribute_types]
    if wanted.attribute is not None:
        ops = [op for op in ops if wanted.attribute in model.attribute_types[op]]
    if not ops:
        return NOT
    carrying = f" carrying an {wanted.attribute} attribute" if wanted.attribute else ""
    return seen(f"{', '.join(ops)}{carrying} in {model.read_from}")


def setups(facts: Facts) -> list[tuple[RecordedPredictor | None, Setup]]:
    """The setups the entries are matched against: each recorded predictor, as it sees the facts (its own
    configuration, and with --measure its own model); without a record, the service as the facts say it."""
    from .per_predictor import judged_predictors

    views = judged_predictors(facts)
    if not views:
        return [(None, setup_of(facts, None))]
    return [(predictor, setup_of(view, predictor)) for predictor, view in views]


def setup_of(facts: Facts, predictor: RecordedPredictor | None, config: PredictorConfig | None = None) -> Setup:
    """The setup of the facts as ``predictor`` sees them (None: the service), running ``config`` (by default
    the service's configuration, with Paddle's defaults and its optimised-model cache)."""
    from dataclasses import replace

    from ..facts.predictor import PredictorConfig

    not_known: dict[str, str] = {}
    if config is None:
        config = replace(PredictorConfig.of_service(facts), use_optimized_model=bool(facts.service.use_optimized_model))
        not_known = {name: why for name in switches() if (why := facts.unknown_setting(setting_of(name)))}
    model = model_of_graph(facts.graph) if facts.graph is not None else (model_of_files(predictor) if predictor else None)
    return Setup(facts, config, model, builders(facts, predictor), not_known)


def builders(facts: Facts, predictor: RecordedPredictor | None) -> list[Builder] | None:
    """The distributions that built the predictor (its record's builder frame), or, for the service, those
    that build the Configs its source makes; an empty list for the service's own code, None where neither
    the record nor the source tells."""
    from ..base.vocabulary import SourceStatus

    if predictor is not None:
        frame = predictor.origin.builder
        if frame is None:
            return None
        return [Builder(frame.package, frame.version)] if frame.package else []
    if facts.service_source.status != SourceStatus.READ:
        return None
    return [Builder(built.package, built.version) for built in facts.service_source.predictors if built.package]


def switch_holds(name: str, wanted: bool, setup: Setup) -> Decision:
    """Whether the switch ``name`` is as ``wanted``; not known where the service's value is not (no default is judged)."""
    if name in setup.unknown_switches:
        return unknown(f"whether {switches()[name]} is on is not known: {setup.unknown_switches[name]}")
    return seen(switched(name, wanted)) if getattr(setup.config, name) == wanted else NOT


def switched(name: str, on: bool) -> str:
    """``oneDNN on``: a switch of the predictor's configuration, for people."""
    return f"{switches()[name]} {'on' if on else 'off'}"


def affected(entry: KnownIssue) -> list[str]:
    """``paddle >=3.3.0,<=3.3.1``: each package and its range, for people."""
    return [f"{package} {versions}" if versions != "*" else f"{package} (any version)" for package, versions in entry.affects.items()]


def condition_words(when: Condition) -> list[str]:
    """The condition's parts, for people: ``oneDNN on``, ``a pir model``, ``an op nearest_interp ... carrying array<f64>``."""
    words = [f"on the {when.device.upper()}"] if when.device is not None else []
    words += [switched(name, on) for name, on in when.settings.items()]
    if when.tensorrt is not None:
        words.append(f"TensorRT {'on' if when.tensorrt else 'off'}")
    if when.passes:
        words.append(f"{' and '.join(when.passes)} not deleted")
    if when.calls:
        words.append("the service's source calls " + ", ".join(f"{method}()" for method in when.calls))
    if when.env_unset:
        words.append(f"{', '.join(when.env_unset)} unset in the service's environment")
    if when.compute_capability is not None:
        words.append(f"a GPU of compute capability {when.compute_capability}")
    if when.wheel_has_gpu_arch is not None:
        words.append(f"a wheel {'with' if when.wheel_has_gpu_arch else 'without'} kernels for that GPU")
    model = when.model
    if model is not None:
        if model.formats:
            words.append(f"a {' or '.join(model.formats)} model")
        either = []
        if model.program:
            ops = " or ".join(model.ops) if model.ops else "any op"
            either.append(f"its program has {ops}" + (f" carrying an {model.attribute} attribute" if model.attribute else ""))
        if model.built_by:
            either.append("it is built by " + " or ".join(f"{package} {versions}" for package, versions in model.built_by.items()))
        if either:
            words.append(", or ".join(either))
    return words
