"""The modules the doctor read, taken together: what an imported name stands for in another module
read (``from .utils import PaddleInferSession``, re-exported by a package's ``__init__``), and the
calls of a function or class from the other modules (a derived class's ``super().__init__`` too),
so an argument passed from the caller is
followed and each caller's path to a Config is a predictor of its own."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from .attributes import callers, super_inits
from .imports import imported_from, imported_names, package_of
from .module import FUNCTIONS, Module, in_main_block

MAX_RESOLVE = 8  # re-exports followed from one name to its definition
MAX_REACH = 32  # callers followed up from a function to a module's top level

Definition = tuple[Module, ast.AST]  # a module and a top-level function or class in it


@dataclass
class Program:
    modules: dict[str, Module] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)  # a module's file -> its dotted name
    _imported: dict[str, dict[str, str]] = field(default_factory=dict)
    _callers: dict[int, list[tuple[Module, ast.Call, int]]] = field(default_factory=dict)
    _tails: dict[str, list[Module]] | None = None
    _reached: dict[int, bool] = field(default_factory=dict)
    _imported_names: set[tuple[str, str]] | None = None  # (a module's file, a dotted name it imports)
    _calls: tuple[dict[int, list[tuple[Module, ast.Call]]], dict[int, list[tuple[Module, ast.ClassDef]]]] | None = None

    def add(self, module: Module, name: str) -> None:
        self.modules.setdefault(name, module)
        self.names[module.file] = name
        self._tails = self._imported_names = self._calls = None
        self._reached.clear()

    def imported(self, module: Module) -> dict[str, str]:
        """Each name a module imports, as the dotted name it stands for; relative imports resolved."""
        if module.file not in self._imported:
            package = self._package(module)
            table = dict(module.aliases)
            for node in ast.walk(module.tree):
                if isinstance(node, ast.ImportFrom) and node.level:
                    prefix = imported_from(node, package)
                    for alias in node.names:
                        table[alias.asname or alias.name] = f"{prefix}.{alias.name}" if prefix else alias.name
            table.pop("*", None)
            self._imported[module.file] = table
        return self._imported[module.file]

    def _starred(self, module: Module) -> list[str]:
        """The modules a module imports every name of (``from .paddleocr import *``)."""
        return [imported_from(node, self._package(module)) for node in module.tree.body
                if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)]

    def _package(self, module: Module) -> str:
        return package_of(self.names.get(module.file, ""), module.file)

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
        module = self.modules.get(owner) or self._by_tail(owner)
        if module is None or depth > MAX_RESOLVE:
            return None
        for statement in module.tree.body:
            if isinstance(statement, FUNCTIONS + (ast.ClassDef,)) and statement.name == name:
                return module, statement
        forwarded = self.imported(module).get(name)
        if forwarded:
            return self._find(forwarded, depth + 1)
        return next(filter(None, (self._find(f"{star}.{name}", depth + 1) for star in self._starred(module))), None)

    def reached(self, module: Module, node: ast.AST, seen: frozenset[int] = frozenset()) -> bool:
        """Whether code at ``node`` is reached from a module's top level (which runs when the module
        is imported) through calls the doctor sees; a function only a framework or a console
        script calls is not."""
        function = module.enclosing_function(node)
        if function is None:
            return self.runs(module, node) if isinstance(node, ast.Call) else True
        if id(function) not in self._reached:
            if id(function) in seen or len(seen) > MAX_REACH:
                return False
            sites = [(module, call) for call, _ in callers(module, function)]
            sites += [(other, call) for other, call, _ in self.external_callers(module, function)]
            self._reached[id(function)] = any(self.runs(other, call) and self.reached(other, call, seen | {id(function)})
                                              for other, call in sites)
        return self._reached[id(function)]

    def runs(self, module: Module, call: ast.Call) -> bool:
        """Whether a call runs when the program does: one under ``if __name__ == "__main__":`` runs
        only where no other module read imports its module (then it is a script of its own)."""
        return not in_main_block(module, call) or not self._imported_by_others(module)

    def _imported_by_others(self, module: Module) -> bool:
        if self._imported_names is None:
            self._imported_names = set()
            for other in self.modules.values():
                self._imported_names.update((other.file, name) for name in imported_names(other.tree, self._package(other)))
        name = self.names.get(module.file, "")
        parts = name.split(".")
        tails = {".".join(parts[start:]) for start in range(len(parts))}
        return any(file != module.file and imported in tails for file, imported in self._imported_names)

    def _index(self) -> tuple[dict[int, list[tuple[Module, ast.Call]]], dict[int, list[tuple[Module, ast.ClassDef]]]]:
        """Once per program: the calls of each definition (by its node's id), and the classes derived from each class."""
        if self._calls is None:
            calls: dict[int, list[tuple[Module, ast.Call]]] = {}
            derived: dict[int, list[tuple[Module, ast.ClassDef]]] = {}
            for other in self.modules.values():
                for call in other.calls():
                    found = self.definition(other, call.func) if isinstance(call.func, (ast.Name, ast.Attribute)) else None
                    if found is not None:
                        calls.setdefault(id(found[1]), []).append((other, call))
                for statement in other.tree.body:
                    if isinstance(statement, ast.ClassDef):
                        for base in statement.bases:
                            found = self.definition(other, base)
                            if found is not None:
                                derived.setdefault(id(found[1]), []).append((other, statement))
            self._calls = (calls, derived)
        return self._calls

    def _by_tail(self, dotted: str) -> Module | None:
        """The one module read whose name ends with ``dotted``: a package that puts its own folder on
        ``sys.path`` imports its modules without the package's name (``tools.infer.utility``)."""
        if self._tails is None:
            self._tails = {}
            for full, module in self.modules.items():
                parts = full.split(".")
                for start in range(1, len(parts)):
                    self._tails.setdefault(".".join(parts[start:]), []).append(module)
        found = self._tails.get(dotted, [])
        return found[0] if len(found) == 1 else None

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
            calls, derived = self._index()
            found = [(other, call, skipped) for other, call in calls.get(id(target), []) if other is not module]
            if skipped:  # the classes of the other modules derived from this one
                found += [(other, call, 1) for other, cls in derived.get(id(target), []) if other is not module
                          for call in super_inits(cls)]
        self._callers[id(function)] = found
        return found
