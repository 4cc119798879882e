"""The value of an expression as the source reader works it out, shared by the evaluator and the
modules it asks (``branches.py``, ``namespaces.py``, ``changes.py``), and what they ask of it
(:class:`Evaluates`): they recurse into the evaluator through that, never importing it."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from .module import Function, Module


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


class Evaluates(Protocol):
    """The evaluator of one module (``evaluate.Evaluator``), as the modules it asks see it."""

    module: Module
    memo: dict[tuple[Any, ...], Any]  # what an asking module works out once per expression

    def evaluate(self, node: ast.expr | None, depth: int = 0) -> Evaluation:
        """The expression's value, worked out once."""

    def of(self, module: Module) -> Evaluates:
        """The evaluator of another module of the program."""

    def modules(self) -> list[Module]:
        """The modules read with this one."""

    def sites(self, function: Function, depth: int = 0) -> Sequence[tuple[Evaluates, ast.Call, int]]:
        """Every call of ``function`` that may run, with the evaluator of the caller's module."""

    def assigned(self, name: str, function: ast.AST | None) -> list[ast.expr]:
        """Every value assigned to ``name`` directly in the function (or the module's top level)."""

    def function_called(self, node: ast.Call) -> tuple[Evaluates, Function] | None:
        """The function a call calls, with the evaluator of its module."""
