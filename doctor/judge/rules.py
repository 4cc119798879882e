"""rules.yaml: the symptom -> cause -> fix checklist, as validated data.

Each rule has a stable id ``PD-<AREA>-NNN`` (never reused; retired rules stay with
``status: removed``), a default severity, the fix as concrete changes with what applying them may
change (``fix.safety``), and the name of the experiment that confirms the fix on the real predictor.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..base.serde import load_yaml_file
from ..base.vocabulary import Experiment, FixSafety, Lifecycle, Severity

SCHEMA_VERSION = 1
RULE_ID = re.compile(r"^PD-(?P<area>[A-Z]+)-\d{3}$")
SLUG = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
CHANGE_KINDS = ("python", "env", "dockerfile", "shell", "kubernetes", "yaml", "text")
AREAS = {
    "PADDLE": "Paddle installation",
    "CPU": "CPU and threads",
    "MEM": "Memory",
    "GPU": "GPU stack",
    "TRT": "TensorRT",
    "GRAPH": "Graph optimisation",
    "START": "Cold start",
    "PREC": "Precision",
    "CFG": "Predictor configuration",
    "LOAD": "Concurrency",
    "OBS": "Observability",
    "SRC": "Service source",
    "HEALTH": "Health since the baseline",
}
PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")  # in a fix's code: a field of the finding's evidence
# filled in from the report's facts for every fix, whatever the finding's evidence says: one value per report
REPORT_WIDE = frozenset({"threads_per_instance"})
# what applying a fix of each safety may change, and whether ``paddle-doctor fix`` applies it: explain and the docs say it
SAFETY_MEANING = {
    FixSafety.SAFE: "paddle-doctor fix applies it",
    FixSafety.UNSAFE: "outputs or behaviour may change; paddle-doctor fix applies it only with --unsafe-fixes",
}
RULE_FIELDS = {"id", "slug", "title", "severity", "status", "symptom", "cause", "fix", "docs", "experiment"}


class RulesError(ValueError):
    """rules.yaml is broken; the message names the file, the rule id and the field."""


@dataclass(frozen=True)
class Change:
    """One concrete change a fix makes: its kind (python, shell, yaml, ...) and the code."""

    kind: str
    code: str


@dataclass(frozen=True)
class Rule:
    """One entry of rules.yaml: symptom, cause and fix for a finding."""

    id: str
    slug: str
    title: str
    severity: Severity
    status: Lifecycle
    symptom: str
    cause: str
    fix_text: str
    fix_changes: tuple[Change, ...]
    fix_safety: FixSafety
    docs: tuple[str, ...]
    experiment: Experiment | None

    @property
    def area(self) -> str:
        return self.id.split("-")[1]

    @property
    def explain_command(self) -> str:
        return f"paddle-doctor explain {self.id}"

    @property
    def safety_line(self) -> str:
        """``Safety: safe — paddle-doctor fix applies it``: the fix's safety and what it means, in one line."""
        return f"Safety: {self.fix_safety} — {SAFETY_MEANING[self.fix_safety]}"

    @property
    def placeholders(self) -> frozenset[str]:
        """The evidence fields the fix's code names as ``{name}``."""
        return frozenset(name for change in self.fix_changes for name in PLACEHOLDER.findall(change.code))


@dataclass(frozen=True)
class Rulebook:
    """The rules by id, and the file they came from."""

    source: str
    rules: dict[str, Rule]

    def __getitem__(self, rule_id: str) -> Rule:
        return self.rules[rule_id]

    def __contains__(self, rule_id: str) -> bool:
        return rule_id in self.rules

    def ordered(self) -> list[Rule]:
        return sorted(self.rules.values(), key=lambda rule: (list(AREAS).index(rule.area), rule.id))


def packaged_file(name: str) -> Path:
    """A data file the build ships in the package (``rules.yaml``, ``wrappers.yaml``): in the package's
    folder where it is installed, at the top of the source tree beside ``doctor/`` in a checkout (an
    editable install, ``scripts/``), where the file is kept."""
    package = Path(__file__).parent.parent  # the package's top, this module's package's parent
    return package.parent / name if package.name == "doctor" else package / name


def default_rules_path() -> Path:
    return packaged_file("rules.yaml")


@lru_cache(maxsize=4)
def load_rules(path: str | None = None) -> Rulebook:
    source = str(path or default_rules_path())
    data = load_yaml_file(source, RulesError, "rules", "expected a rules.yaml with schema_version and rules")
    return parse_rules(data, source)


def parse_rules(data: Any, source: str) -> Rulebook:
    if not isinstance(data, dict):
        raise RulesError(f"{source}: expected a mapping with schema_version and rules")
    if data.get("schema_version") != SCHEMA_VERSION:
        raise RulesError(f"{source}: schema_version is {data.get('schema_version')!r}, expected {SCHEMA_VERSION}")
    entries = data.get("rules")
    if not isinstance(entries, list) or not entries:
        raise RulesError(f"{source}: 'rules' must be a non-empty list")
    rules: dict[str, Rule] = {}
    slugs: set[str] = set()
    for index, entry in enumerate(entries):
        rule = _parse_rule(entry, source, index)
        if rule.id in rules:
            raise RulesError(f"{source}: rule {rule.id}: field 'id': duplicate id")
        if rule.slug in slugs:
            raise RulesError(f"{source}: rule {rule.id}: field 'slug': duplicate slug {rule.slug!r}")
        rules[rule.id] = rule
        slugs.add(rule.slug)
    return Rulebook(source, rules)


Fail = Callable[[str, str], RulesError]  # a field's name and what is wrong with it: the error naming the rule


def _parse_rule(entry: Any, source: str, index: int) -> Rule:
    """One entry of rules.yaml as a Rule, or RulesError naming the rule, the field and what is wrong."""
    label = entry.get("id") if isinstance(entry, dict) and isinstance(entry.get("id"), str) else f"#{index + 1}"

    def fail(field: str, message: str) -> RulesError:
        return RulesError(f"{source}: rule {label}: field '{field}': {message}")

    _check_fields(entry, fail)
    _check_id(entry["id"], fail)
    _check_words(entry, fail)
    fix = entry["fix"]
    changes, safety = _parse_fix(fix, fail)
    docs = entry["docs"]
    if not isinstance(docs, list) or not all(isinstance(d, str) and d.startswith("https://") for d in docs):
        raise fail("docs", "expected a list of https:// URLs")
    experiment = entry["experiment"]
    if experiment is not None and experiment not in Experiment.values():
        raise fail("experiment", f"unknown experiment {experiment!r}; expected one of {Experiment.listing()} or null")
    return Rule(
        id=entry["id"],
        slug=entry["slug"],
        title=entry["title"].strip(),
        severity=Severity(entry["severity"]),
        status=Lifecycle(entry["status"]),
        symptom=" ".join(entry["symptom"].split()),
        cause=" ".join(entry["cause"].split()),
        fix_text=" ".join(fix["text"].split()),
        fix_changes=changes,
        fix_safety=safety,
        docs=tuple(docs),
        experiment=Experiment(experiment) if experiment is not None else None,
    )


def _check_fields(entry: Any, fail: Fail) -> None:
    """The entry is a mapping of exactly the rule's fields."""
    if not isinstance(entry, dict):
        raise fail("-", "expected a mapping")
    for field in sorted(RULE_FIELDS - set(entry)):
        raise fail(field, "missing")
    for field in sorted(set(entry) - RULE_FIELDS):
        raise fail(field, "unknown field")


def _check_id(rule_id: Any, fail: Fail) -> None:
    """The id is ``PD-<AREA>-NNN`` of a known area."""
    match = RULE_ID.match(str(rule_id))
    if not match:
        raise fail("id", "expected PD-<AREA>-NNN, e.g. PD-CPU-001")
    if match.group("area") not in AREAS:
        raise fail("id", f"unknown area {match.group('area')!r}; expected one of {', '.join(AREAS)}")


def _check_words(entry: dict[str, Any], fail: Fail) -> None:
    """The texts are non-empty, the slug is a slug, the severity and status are known words."""
    for field in ("slug", "title", "symptom", "cause"):
        if not isinstance(entry[field], str) or not entry[field].strip():
            raise fail(field, "expected non-empty text")
    if not SLUG.match(entry["slug"]):
        raise fail("slug", "expected lowercase words joined by '-'")
    if entry["severity"] not in Severity.values():
        raise fail("severity", f"expected one of {Severity.listing()}")
    if entry["status"] not in Lifecycle.values():
        raise fail("status", f"expected one of {Lifecycle.listing()}")


def _parse_fix(fix: Any, fail: Fail) -> tuple[tuple[Change, ...], FixSafety]:
    """The fix's changes and its safety, from a mapping of its text, its safety and a non-empty list of changes."""
    if not isinstance(fix, dict) or set(fix) - {"text", "safety", "changes"} or not isinstance(fix.get("text"), str):
        raise fail("fix", "expected a mapping with 'text', 'safety' and 'changes'")
    changes = fix.get("changes")
    if not isinstance(changes, list) or not changes:
        raise fail("fix", "'changes' must be a non-empty list")
    if "safety" not in fix:
        raise fail("fix.safety", f"missing; expected one of {FixSafety.listing()}")
    if fix["safety"] not in FixSafety.values():
        raise fail("fix.safety", f"unknown safety {fix['safety']!r}; expected one of {FixSafety.listing()}")
    return tuple(_parse_change(change, fail) for change in changes), FixSafety(fix["safety"])


def _parse_change(change: Any, fail: Fail) -> Change:
    """One change of a fix: exactly a known kind and non-empty code."""
    if not isinstance(change, dict) or set(change) != {"kind", "code"}:
        raise fail("fix", "each change needs exactly 'kind' and 'code'")
    if change["kind"] not in CHANGE_KINDS:
        raise fail("fix", f"change kind {change['kind']!r}; expected one of {', '.join(CHANGE_KINDS)}")
    if not isinstance(change["code"], str) or not change["code"].strip():
        raise fail("fix", "change code must be non-empty text")
    return Change(change["kind"], change["code"].rstrip("\n"))
