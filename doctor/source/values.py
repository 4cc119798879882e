"""The value of an expression as the source reader works it out, shared by the evaluator and the
modules it asks (``namespaces.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Evaluation:
    """An expression's value when ``known``; where it came from the environment, the variable,
    the default the source gives and the live value."""

    value: Any = None
    known: bool = False
    env_var: str | None = None
    env_default: str | None = None
    env_live: str | None = None
    host_cpu_count: bool = False


UNKNOWN = Evaluation()


class _NotKnown:
    """An item of a known mapping that something changed to a value not known."""

    def __repr__(self) -> str:
        return "<not known>"


NOT_KNOWN = _NotKnown()


def unknown_of(results: list[Evaluation]) -> Evaluation:
    """Unknown, still saying whether any part counts the host's CPUs."""
    return Evaluation(host_cpu_count=any(result.host_cpu_count for result in results))
