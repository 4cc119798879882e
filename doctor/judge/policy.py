"""A run's policy, the ``--settings`` file: the failure threshold, ignored rules and per-rule severity
overrides (not the service's Paddle settings, which are facts). The file is YAML::

    fail_on: warning            # error | warning | info
    ignore: [PD-CPU-014, PD-GPU]  # rule ids or id prefixes; an empty entry means none
    severity:
      PD-CPU-011: warning
    docs_url: https://docs.example.com/paddle-doctor/rules.html   # where docs/rules.md is published
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..base.serde import load_yaml_file
from ..base.vocabulary import Severity
from .rule_docs import is_https_url

KEYS = {"fail_on", "ignore", "severity", "docs_url"}


class PolicyError(ValueError):
    """A --settings file, --ignore or --fail-on that cannot be used; the message names what and why."""


@dataclass(frozen=True)
class Policy:
    """What counts against the exit code: the severity that fails, ignored rules, severity overrides, the docs URL."""

    fail_on: Severity = Severity.ERROR
    ignore: tuple[str, ...] = ()
    severity: dict[str, Severity] = field(default_factory=dict)
    docs_url: str | None = None

    def __post_init__(self) -> None:  # --fail-on and a settings file give the words; the settings hold the vocabulary
        object.__setattr__(self, "fail_on", Severity(self.fail_on))
        object.__setattr__(self, "severity", {rule_id: Severity(level) for rule_id, level in self.severity.items()})

    def is_ignored(self, rule_id: str) -> bool:
        return any(rule_id.startswith(item) for item in self.ignore)

    def ignoring(self, items: Iterable[str]) -> Policy:
        """These settings with ``items`` ignored too; empty items (an unset CI variable) ignore nothing."""
        return replace(self, ignore=self.ignore + rule_ids(items))

    def check_rule_ids(self, known: Iterable[str], source: str | None) -> None:
        """PolicyError naming the first ignored id or prefix, or severity override, that matches no rule;
        ``source`` is the settings file, or None for --ignore."""
        known = list(known)
        for item in self.ignore:
            where = f"{source}: ignore" if source else "--ignore"
            if not any(rule_id.startswith(item) for rule_id in known):
                raise PolicyError(f"{where} {item!r} matches no rule id or id prefix; `paddle-doctor rules` lists them")
            if not AREA_PREFIX.match(item):  # "P", "PD", "PD-": every rule, and CI would pass whatever it found
                raise PolicyError(f"{where} {item!r} would ignore every rule; name a rule id or an area prefix such as PD-CPU")
        for rule_id in self.severity:
            if rule_id not in known:
                raise PolicyError(f"{source}: severity {rule_id!r} is no rule id; `paddle-doctor rules` lists them")


AREA_PREFIX = re.compile(r"^PD-[A-Z]+")


def rule_ids(items: Iterable[str]) -> tuple[str, ...]:
    """Rule ids or prefixes as the rules spell them (upper case), blank items left out."""
    return tuple(item.strip().upper() for item in items if item.strip())


def load_policy(path: str | Path) -> Policy:
    data = load_yaml_file(path, PolicyError, "settings", f"expected keys {', '.join(sorted(KEYS))}")
    if data is None:
        return Policy()
    if not isinstance(data, dict):
        raise PolicyError(f"{path}: expected a mapping with keys {', '.join(sorted(KEYS))}")
    unknown = sorted(set(data) - KEYS)
    if unknown:
        raise PolicyError(f"{path}: unknown key {unknown[0]!r}; expected one of {', '.join(sorted(KEYS))}")
    fail_on = data.get("fail_on", "error")
    if fail_on not in Severity.values():
        raise PolicyError(f"{path}: fail_on is {fail_on!r}; expected one of {Severity.listing()}")
    ignore = data.get("ignore") or []
    if not isinstance(ignore, list) or not all(isinstance(item, str) for item in ignore):
        raise PolicyError(f"{path}: ignore must be a list of rule ids or prefixes")
    severity = data.get("severity") or {}
    if not isinstance(severity, dict):
        raise PolicyError(f"{path}: severity must map rule ids to {Severity.listing()}")
    for rule_id, level in severity.items():
        if level not in Severity.values():
            raise PolicyError(f"{path}: severity of {rule_id} is {level!r}; expected one of {Severity.listing()}")
    docs_url = data.get("docs_url")
    if docs_url is not None and (not isinstance(docs_url, str) or not is_https_url(docs_url)):
        raise PolicyError(f"{path}: docs_url must be the URL of the published docs/rules.md page, an https:// URL")
    return Policy(fail_on=fail_on, ignore=rule_ids(ignore), severity={str(k).upper(): v for k, v in severity.items()}, docs_url=docs_url)
