"""One parsed Python file and the questions the source reader asks of it: what a name imported
from Paddle stands for, which function encloses a node, where a function is called."""

from __future__ import annotations

import ast
import copy
import time
from dataclasses import dataclass, field
from typing import Any

from ..base.inputs import MAX_DEPTH
from ..base.redact import redact_text
from ..facts import SourceLocation

LOOPS = (ast.For, ast.AsyncFor, ast.While)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
Function = ast.FunctionDef | ast.AsyncFunctionDef


class NestedTooDeeply(ValueError):
    """A file valid for Python with an expression or statement nested deeper than the doctor follows."""

    def __init__(self, lineno: int | None = None):
        self.lineno = lineno  # where the read stopped, for the SourceError's location
        super().__init__(f"nested more than {MAX_DEPTH} levels deep, the most the doctor follows")


class OutOfTime(Exception):
    """The source read's time ran out while this module was read."""


@dataclass
class Module:
    file: str
    tree: ast.Module
    parents: dict[ast.AST, ast.AST] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = field(default_factory=dict)
    # built by the one walk of parse, so that no question asked per function walks the tree again
    all_calls: list[ast.Call] = field(default_factory=list)
    calls_by_name: dict[str, list[ast.Call]] = field(default_factory=dict)  # ``f(...)`` and ``x.f(...)`` under ``f``
    deadline: float | None = None  # time.monotonic() past which the questions asked of it raise OutOfTime
    indexes: dict[str, Any] = field(default_factory=dict)  # built once when first asked for (attributes.py)

    @classmethod
    def parse(cls, file: str, text: str, deadline: float | None = None) -> Module:
        """Raises SyntaxError for a file Python cannot parse, NestedTooDeeply for one the doctor does not follow."""
        try:
            module = cls(file, ast.parse(text, filename=file), deadline=deadline)
        except (RecursionError, MemoryError):  # Python's own parser gave up: its stack overflows from about 3,000 levels
            raise NestedTooDeeply() from None
        except ValueError as exc:  # NUL bytes in Python 3.10 (a SyntaxError since, as running the file says)
            raise SyntaxError(str(exc)) from None
        depth: dict[ast.AST, int] = {module.tree: 1}
        for node in ast.walk(module.tree):
            for child in ast.iter_child_nodes(node):
                module.parents[child] = node
                depth[child] = depth[node] + 1
                if depth[child] > MAX_DEPTH:
                    raise NestedTooDeeply(getattr(child, "lineno", None))
            if isinstance(node, ast.Import):
                for name in node.names:
                    if name.asname:
                        module.aliases[name.asname] = name.name
                    else:
                        top = name.name.split(".")[0]
                        module.aliases[top] = top
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for name in node.names:
                    module.aliases[name.asname or name.name] = f"{node.module}.{name.name}"
            elif isinstance(node, FUNCTIONS):
                module.functions.setdefault(node.name, []).append(node)
            elif isinstance(node, ast.Call):
                module.all_calls.append(node)
                called = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
                if called is not None:
                    module.calls_by_name.setdefault(called, []).append(node)
        return module

    def location(self, node: ast.AST) -> SourceLocation:
        return SourceLocation(self.file, getattr(node, "lineno", 0))

    def canonical(self, node: ast.AST) -> str | None:
        """A dotted name with its import alias expanded: ``paddle_infer.Config`` -> ``paddle.inference.Config``."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        parts.append(self.aliases.get(node.id, node.id))
        return ".".join(reversed(parts))

    def in_time(self) -> None:
        """Raises OutOfTime past the deadline: the questions below are what reading a module repeats."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime()

    def ancestors(self, node: ast.AST):
        self.in_time()
        while node in self.parents:
            node = self.parents[node]
            yield node

    def enclosing_function(self, node: ast.AST) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        return next((parent for parent in self.ancestors(node) if isinstance(parent, FUNCTIONS)), None)

    def calls(self):
        self.in_time()
        return iter(self.all_calls)

    def call_sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef):
        """Calls of ``function`` by its name (``helper(...)``, ``self.helper(...)``), each with the
        number of leading parameters the call does not pass (``self`` for a method call)."""
        self.in_time()
        is_method = bool(function.args.args) and function.args.args[0].arg in ("self", "cls")
        for call in self.calls_by_name.get(function.name, ()):
            if isinstance(call.func, ast.Name):
                yield call, 0
            elif is_method:
                yield call, 1


def in_main_block(module: Module, node: ast.AST) -> bool:
    """Whether ``node`` is under ``if __name__ == "__main__":``."""
    return any(isinstance(parent, ast.If) and isinstance(parent.test, ast.Compare) and isinstance(parent.test.left, ast.Name)
               and parent.test.left.id == "__name__" and len(parent.test.comparators) == 1
               and isinstance(parent.test.comparators[0], ast.Constant) and parent.test.comparators[0].value == "__main__"
               and node is not parent.test for parent in module.ancestors(node))


def argument(call: ast.Call, position: int | None, keyword: str) -> ast.expr | None:
    """The expression passed for a parameter, by keyword or position; None when not passed."""
    for item in call.keywords:
        if item.arg == keyword:
            return item.value
    if position is not None and position < len(call.args) and not any(isinstance(a, ast.Starred) for a in call.args[: position + 1]):
        return call.args[position]
    return None


def rebinding(node: ast.AST) -> list[ast.AST]:
    """What a statement binds other than as an assignment's whole target, each node it holds: the targets of
    ``+=``, a loop, a walrus and a ``with``, and the items an assignment unpacks."""
    if isinstance(node, (ast.AugAssign, ast.For, ast.AsyncFor, ast.NamedExpr)):
        targets = [node.target]
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        targets = [item.optional_vars for item in node.items if item.optional_vars is not None]
    elif isinstance(node, ast.Assign):
        targets = [target for target in node.targets if isinstance(target, (ast.Tuple, ast.List))]
    else:
        return []
    return [element for target in targets for element in ast.walk(target)]


def parameter_position(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> int | None:
    names = [arg.arg for arg in function.args.posonlyargs + function.args.args]
    return names.index(name) if name in names else None


def passed_for(call: ast.Call, skipped: int, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.expr | None:
    """What a call site passes for one of ``function``'s parameters."""
    position = parameter_position(function, name)
    return argument(call, None if position is None else position - skipped, name)


def text(node: ast.AST) -> str:
    """The node's source code as the doctor records it: a string literal shaped like a secret is cut
    (``'postgres://<redacted>@db/app'``), and so is a secret the code spells (``password=<redacted>``)."""
    if any(_secret_literal(sub) for sub in ast.walk(node)):
        node = copy.deepcopy(node)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):  # a literal that is no secret stays as it is
                sub.value = redact_text(sub.value)
    return redact_text(ast.unparse(node))


def literal(value: object) -> object:
    """A constant of the source as the doctor records it: text shaped like a secret is cut."""
    return redact_text(value) if isinstance(value, str) else value


def _secret_literal(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and redact_text(node.value) != node.value
