"""The modules the doctor read, taken together: what an imported name stands for in another module
read (``from .utils import PaddleInferSession``, re-exported by a package's ``__init__``), and the
calls of a function or class from the other modules, so an argument passed from the caller is
followed and each caller's path to a Config is a predictor of its own."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

from .module import FUNCTIONS, Module

MAX_RESOLVE = 8  # re-exports followed from one name to its definition

Definition = tuple[Module, ast.AST]  # a module and a top-level function or class in it


def module_name(file: str, root: str) -> str:
    """``root/pkg/sub/mod.py`` -> ``pkg.sub.mod``; a package's ``__init__.py`` is the package."""
    relative = os.path.relpath(os.path.abspath(file), os.path.abspath(root))
    parts = relative[:-3].split(os.sep) if relative.endswith(".py") else relative.split(os.sep)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


@dataclass
class Program:
    modules: dict[str, Module] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # a module's file -> its dotted name
    _imported: dict[str, dict[str, str]] = field(default_factory=dict)
    _callers: dict[int, list[tuple[Module, ast.Call, int]]] = field(default_factory=dict)

    def add(self, module: Module, name: str) -> None:
        self.modules.setdefault(name, module)
        self.names[module.file] = name

    def imported(self, module: Module) -> dict[str, str]:
        """Each name a module imports, as the dotted name it stands for; relative imports resolved."""
        if module.file not in self._imported:
            own = self.names.get(module.file, "")
            package = own if module.file.endswith("__init__.py") else own.rpartition(".")[0]
            table = dict(module.aliases)
            for node in ast.walk(module.tree):
                if isinstance(node, ast.ImportFrom) and node.level:
                    base = package.split(".") if package else []
                    base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
                    prefix = ".".join(base + ([node.module] if node.module else []))
                    for alias in node.names:
                        table[alias.asname or alias.name] = f"{prefix}.{alias.name}" if prefix else alias.name
            self._imported[module.file] = table
        return self._imported[module.file]

    def definition(self, module: Module, node: ast.expr) -> Definition | None:
        """The function or class of another module read that a name used in ``module`` stands for."""
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id not in self.imported(module):
            return None
        return self._find(".".join([self.imported(module)[node.id], *reversed(parts)]), 0)

    def _find(self, dotted: str, depth: int) -> Definition | None:
        owner, _, name = dotted.rpartition(".")
        module = self.modules.get(owner)
        if module is None or depth > MAX_RESOLVE:
            return None
        for statement in module.tree.body:
            if isinstance(statement, FUNCTIONS + (ast.ClassDef,)) and statement.name == name:
                return module, statement
        forwarded = self.imported(module).get(name)
        return self._find(forwarded, depth + 1) if forwarded else None

    def external_callers(self, module: Module, function: ast.AST) -> list[tuple[Module, ast.Call, int]]:
        """Calls from the other modules read of ``function`` (a top-level function, or a class's
        ``__init__`` through calls of the class), each with the parameters the call does not pass."""
        if id(function) in self._callers:
            return self._callers[id(function)]
        target, skipped = function, 0
        owner = module.parents.get(function)
        if isinstance(function, FUNCTIONS) and function.name == "__init__" and isinstance(owner, ast.ClassDef):
            target, skipped = owner, 1
        found = []
        if module.parents.get(target) is module.tree:
            for other in self.modules.values():
                if other is module:
                    continue
                for call in other.calls():
                    if isinstance(call.func, (ast.Name, ast.Attribute)) and self.definition(other, call.func) == (module, target):
                        found.append((other, call, skipped))
        self._callers[id(function)] = found
        return found
