"""Checks and how they are found.

A check is a pure function of Facts returning Findings for the rules it declares: an object of
type :class:`Check`. The built-in checks are the tuple ``paddle_doctor.checks.BUILT_IN``; a third
party publishes its own under the entry-point group ``paddle_doctor.checks``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, TypeVar

from ..base.deferred import deferred_dataclass
from ..base.vocabulary import Device, SourceStatus, Word
from ..facts import Facts
from .findings import Evidence, Finding

if TYPE_CHECKING:
    from ..facts.baseline import BaselineFacts
    from ..facts.graph import GraphFacts
    from ..facts.verification import VerificationFacts
    from .rules import Rulebook

ENTRY_POINT_GROUP = "paddle_doctor.checks"


class Need(Word):
    """What a check needs beyond the cheap probes. A check declares its needs (``requires=``); where
    the facts lack one, the runner skips the check with one message saying what is missing and how
    to provide it, and the check itself never sees such facts."""

    MEASUREMENTS = "measurements"
    GRAPH = "graph"
    SOURCE = "source"
    GPU_SERVICE = "gpu service"
    BASELINE = "baseline"

    def missing(self, facts: Facts) -> str | None:
        """Why the facts lack this need, and how to provide it; None when they have it."""
        if self is Need.MEASUREMENTS:
            if facts.verification is not None:
                return None
            if facts.issues_for("verification"):  # asked for, and not finished
                return facts.issues_for("verification")[0].reason
            if facts.service.device == Device.GPU:
                return "not measured: the doctor measures predictors on the CPU, and this service runs on the GPU"
            return "not measured: give --model to measure on the real predictor"
        if self is Need.GRAPH:
            if facts.graph is not None:
                return None
            stopped = facts.issues_for("graph")
            return stopped[0].reason if stopped else "no model given (--model or model: in --config)"
        if self is Need.SOURCE:
            return None if facts.service_source.status == SourceStatus.READ else \
                "no service source was read (--source FILE, or --pid for the script the service runs)"
        if self is Need.GPU_SERVICE:
            from .gpu_support import cpu_service, uses_gpu
            from .live_word import live_cpu

            if uses_gpu(facts):
                return None
            return cpu_service(facts) if live_cpu(facts) else f"{cpu_service(facts)}; a GPU service says device: gpu in --config"
        return None if facts.baseline is not None else (
            "judged by 'paddle-doctor healthcheck --baseline PATH' in the running container, against what "
            "'paddle-doctor baseline --out PATH' recorded there; no baseline here")


NOT_IN_HEALTHCHECK = frozenset({Need.MEASUREMENTS, Need.GRAPH, Need.SOURCE})


class Unmet(LookupError):
    """A check read a section of Facts that its ``requires=`` does not give it here. The runner skips
    a check whose needs are missing, so this is a check called without them, or one declaring too little."""


Section = TypeVar("Section")


def _given(section: Section | None, need: Need, facts: Facts) -> Section:
    if section is None:
        raise Unmet(f"a check that requires {need.value} ran without it: {need.missing(facts)}")
    return section


def verification_of(facts: Facts) -> VerificationFacts:
    """The measurements, typed as present, for a check that declares ``requires=(Need.MEASUREMENTS,)``."""
    return _given(facts.verification, Need.MEASUREMENTS, facts)


def graph_of(facts: Facts) -> GraphFacts:
    """The model's graph, typed as present, for a check that declares ``requires=(Need.GRAPH,)``."""
    return _given(facts.graph, Need.GRAPH, facts)


def baseline_of(facts: Facts) -> BaselineFacts:
    """The baseline, typed as present, for a check that declares ``requires=(Need.BASELINE,)``."""
    return _given(facts.baseline, Need.BASELINE, facts)


def applying_checks(checks: list[Check], facts: Facts, assume: frozenset[Need] = frozenset()) -> str:
    """How many of the fast ``checks`` apply to these facts, said alike by the baseline and the healthcheck:
    "27 of 30 fast checks apply here (3 need a gpu service)". ``assume``: needs met where the checks will run."""
    unmet: dict[Need, int] = {}
    for check in checks:
        need = next((need for need in check.requires if need not in assume and need.missing(facts)), None)
        if need is not None:
            unmet[need] = unmet.get(need, 0) + 1
    why = ", ".join(f"{count} need a {need.value}" for need, count in unmet.items())
    return f"{len(checks) - sum(unmet.values())} of {len(checks)} fast checks apply here" + (f" ({why})" if why else "")


@dataclass(frozen=True)
class Check:
    """``requires``: what the check needs beyond the cheap probes (see :class:`Need`).

    ``fast``: the check judges only what the healthcheck can give it (cgroup, /proc, mounts, service
    config, cache folder, the baseline), so the healthcheck runs it. Derived from ``requires`` unless
    given: a check that needs measurements, the model's graph (``--model``) or the service's source
    (``--source`` or ``--pid``) could only skip there.

    ``evidence``: per rule, the type of the evidence its findings carry (or the types, where findings
    of one rule say different things); the rule's fix may name their fields as ``{placeholders}``,
    and a check whose evidence lacks one is refused at load (see :meth:`unfilled`).

    ``summary``: what the check says of the facts in a few words where none of its rules made a passing
    finding to say it (the healthcheck's healthy line: "cpu budget 2 >= 2 threads" without a baseline)."""

    name: str
    rules: tuple[str, ...]
    run: Callable[[Facts], list[Finding]]
    requires: tuple[Need, ...] = ()
    fast: bool | None = None
    timeout: float = 5.0
    evidence: Mapping[str, type[Evidence] | tuple[type[Evidence], ...]] = field(default_factory=dict)
    summary: Callable[[Facts], str] | None = None

    def __post_init__(self) -> None:
        if self.fast is None:
            object.__setattr__(self, "fast", not NOT_IN_HEALTHCHECK.intersection(self.requires))

    def missing(self, facts: Facts) -> str | None:
        """What the facts lack of what this check needs, and how to provide it; None when nothing."""
        reasons = [reason for reason in (need.missing(facts) for need in self.requires) if reason]
        return "; ".join(reasons) or None

    def evidence_types(self, rule_id: str) -> tuple[type[Evidence], ...]:
        declared = self.evidence.get(rule_id, ())
        return declared if isinstance(declared, tuple) else (declared,)

    def unfilled(self, rulebook: Rulebook) -> list[str]:
        """Each ``{placeholder}`` the fix of a rule of this check names that an evidence type of the rule
        has no field for, said as "PD-CPU-010 {threads}: ThreadsEvidence has no field threads" (the
        report fills those it knows for every fix itself: ``rules.REPORT_WIDE``)."""
        from .rules import REPORT_WIDE  # a rulebook is loaded already

        problems = []
        for rule in self.rules:
            wanted = rulebook[rule].placeholders - REPORT_WIDE if rule in rulebook else frozenset()
            kinds = self.evidence_types(rule)
            if wanted and not kinds:
                problems.append(f"{rule} names {', '.join(sorted(wanted))} but check {self.name} declares no evidence type for it")
            problems += [f"{rule} {{{name}}}: {kind.__name__} has no field {name}"
                         for kind in kinds for name in sorted(wanted - {f.name for f in fields(kind)})]
        return problems


class RegistryError(RuntimeError):
    pass


@deferred_dataclass(frozen=True)
class LoadFailure:
    """A registered check that could not be loaded, and why."""

    entry_point: str
    reason: str


def discover_checks(rulebook: Rulebook | None = None) -> tuple[list[Check], list[LoadFailure]]:
    """Every check: the built-in ones, ``paddle_doctor.checks.BUILT_IN``, then those third parties
    publish under the entry-point group, sorted by name.

    A check that fails to import or is not a Check is reported, not fatal; so is, given the
    ``rulebook``, one whose rule's fix names a ``{placeholder}`` its evidence type has no field for.
    """
    registered, failures = discover_registered(rulebook)
    return [check for _, check in registered], failures


def discover_registered(rulebook: Rulebook | None = None) -> tuple[list[tuple[str, Check]], list[LoadFailure]]:
    """Like :func:`discover_checks`, each check with its reference (``module:attribute``)."""
    from importlib import metadata  # here: scanning entry points is the slow part, and load_check avoids it

    built_in, failures = _built_in()
    references = {BUILT_IN_MODULE.format(name=check.name) for check in built_in}
    # an older install's metadata may still publish the built-in checks: they are loaded once, from the tuple
    third_party = [entry for entry in metadata.entry_points(group=ENTRY_POINT_GROUP) if entry.value not in references]
    checks: dict[str, tuple[str, Check]] = {}
    for check in built_in:
        _register(checks, failures, check.name, BUILT_IN_MODULE.format(name=check.name), check, rulebook)
    for entry in third_party:
        try:
            loaded = entry.load()
        except Exception as exc:
            failures.append(LoadFailure(f"{entry.name} = {entry.value}", f"cannot import: {type(exc).__name__}: {exc}"))
            continue
        _register(checks, failures, entry.name, entry.value, loaded, rulebook)
    return [checks[name] for name in sorted(checks)], failures


def _built_in() -> tuple[tuple[Check, ...], list[LoadFailure]]:
    """The built-in checks, or none and why, where one of them cannot be imported (they are imported together)."""
    try:
        from ..checks import BUILT_IN
    except Exception as exc:
        return (), [LoadFailure(f"{BUILT_IN_PACKAGE}.BUILT_IN", f"cannot import: {type(exc).__name__}: {exc}")]
    return BUILT_IN, []


def _register(checks: dict[str, tuple[str, Check]], failures: list[LoadFailure], name: str, reference: str,
              check: object, rulebook: Rulebook | None) -> None:
    """Adds ``check`` to ``checks`` by its name, or to ``failures`` why it is refused."""
    label = f"{name} = {reference}"
    if not isinstance(check, Check):
        failures.append(LoadFailure(label, f"is a {type(check).__name__}, not a paddle_doctor Check"))
        return
    if check.name in checks:
        failures.append(LoadFailure(label, f"a check named {check.name!r} is already registered"))
        return
    unfilled = check.unfilled(rulebook) if rulebook is not None else []
    if unfilled:
        failures.append(LoadFailure(label, f"its evidence does not fill its rules' fixes: {'; '.join(unfilled)}"))
        return
    checks[check.name] = (reference, check)


BUILT_IN_PACKAGE = "paddle_doctor.checks"
BUILT_IN_MODULE = BUILT_IN_PACKAGE + ".{name}:CHECK"  # a built-in check's module is named as the check


def names_built_in(reference: str) -> bool:
    """Whether ``reference`` names a built-in check: ``paddle_doctor.checks.NAME:CHECK``, NAME a module
    of that package (each is one of ``BUILT_IN``'s: tests/test_layout.py), found without importing any check."""
    module, _, attribute = reference.partition(":")
    package, _, name = module.rpartition(".")
    if attribute != "CHECK" or package != BUILT_IN_PACKAGE or not name.isidentifier() or name.startswith("_"):
        return False
    from importlib.util import find_spec

    return find_spec(module) is not None


def load_pinned(name: str, reference: str) -> Check:
    """The check a baseline pins by ``name``, found among the installed checks: a baseline names
    checks, never code, so its ``reference`` is only a claim to verify. A built-in check is its
    module of ``paddle_doctor.checks`` (:func:`names_built_in`), imported alone: no entry-point scan,
    and no other check (the healthcheck's start-up); any other must be the entry point an installed
    distribution registers with that value.

    Raises RegistryError naming the check and why it is not loaded; nothing else is imported.
    """
    if names_built_in(reference):
        check = load_check(reference)
    else:
        from importlib import metadata

        entry = next((e for e in metadata.entry_points(group=ENTRY_POINT_GROUP) if e.value == reference), None)
        if entry is None:
            raise RegistryError(f"the baseline pins check {name!r} as {reference!r}, which no installed package registers "
                                f"under {ENTRY_POINT_GROUP}")
        check = load_check(entry.value)
    if check.name != name:
        raise RegistryError(f"the baseline pins check {name!r} as {reference!r}, which is the check {check.name!r}")
    return check


def load_check(reference: str) -> Check:
    """The check an entry-point value ``module:attribute`` names, imported directly.

    Raises RegistryError naming the reference and what went wrong.
    """
    import importlib

    module_name, _, attribute = reference.partition(":")
    try:
        target = importlib.import_module(module_name)
        for part in attribute.split("."):
            target = getattr(target, part)
    except Exception as exc:
        raise RegistryError(f"cannot load check {reference}: {type(exc).__name__}: {exc}") from None
    if not isinstance(target, Check):
        raise RegistryError(f"{reference} is a {type(target).__name__}, not a paddle_doctor Check")
    return target
