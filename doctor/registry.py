"""Checks and how they are found.

A check is a pure function of Facts returning Findings for the rules it declares. Built-in and
third-party checks register the same way: an object of type :class:`Check` published under the
entry-point group ``paddle_doctor.checks``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Callable

from .facts import Facts
from .findings import Finding

ENTRY_POINT_GROUP = "paddle_doctor.checks"


@dataclass(frozen=True)
class Check:
    """``fast``: the check judges only what the cheap probes find (cgroup, /proc, mounts, service
    config, cache folder), so the healthcheck runs it. A check that judges measured facts (the
    verification or the model's graph, which need ``--model``) or the service's source (which
    needs ``--source`` or ``--pid``) sets ``fast=False``: in the healthcheck it could only skip."""

    name: str
    rules: tuple[str, ...]
    run: Callable[[Facts], list[Finding]]
    fast: bool = True
    timeout: float = 5.0

    @property
    def description(self) -> str:
        module = sys.modules.get(self.run.__module__)
        return (module.__doc__ or "").strip() if module else ""


class RegistryError(RuntimeError):
    pass


@dataclass(frozen=True)
class LoadFailure:
    """A registered check that could not be loaded, and why."""

    entry_point: str
    reason: str


def discover_checks() -> tuple[list[Check], list[LoadFailure]]:
    """Every check published under the entry-point group, sorted by name.

    A third-party entry point that fails to import or is not a Check is reported, not fatal.
    """
    registered, failures = discover_registered()
    return [check for _, check in registered], failures


def discover_registered() -> tuple[list[tuple[str, Check]], list[LoadFailure]]:
    """Like :func:`discover_checks`, each check with its entry-point value (``module:attribute``)."""
    from importlib import metadata  # here: scanning entry points is the slow part, and load_check avoids it

    checks: dict[str, tuple[str, Check]] = {}
    failures: list[LoadFailure] = []
    for entry in metadata.entry_points(group=ENTRY_POINT_GROUP):
        label = f"{entry.name} = {entry.value}"
        try:
            check = entry.load()
        except Exception as exc:
            failures.append(LoadFailure(label, f"cannot import: {type(exc).__name__}: {exc}"))
            continue
        if not isinstance(check, Check):
            failures.append(LoadFailure(label, f"is a {type(check).__name__}, not a paddle_doctor Check"))
            continue
        if check.name in checks:
            failures.append(LoadFailure(label, f"a check named {check.name!r} is already registered"))
            continue
        checks[check.name] = (entry.value, check)
    return [checks[name] for name in sorted(checks)], failures


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
