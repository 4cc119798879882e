"""No two modules of the doctor import each other, however indirectly, at the top of a module:
``if TYPE_CHECKING:`` imports count (a cycle kept for the type checker is still a knot a reader
must untie), imports inside functions do not (they run after both modules are loaded). The
evaluator of the service's source recurses through the modules it asks (``source/values.py``'s
``Evaluates``), which never import it back."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import REPO

PACKAGES = {"paddle_doctor": REPO / "doctor", "paddle_doctor.checks": REPO / "checks"}


def module_files(packages: dict[str, Path]) -> dict[str, Path]:
    """Every module of the packages by its dotted name (a package by its ``__init__.py``)."""
    found = {}
    for package, root in packages.items():
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def top_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements that run as the module loads: its top level and the blocks of its ``if`` and ``try``."""
    found = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, ast.If):
            found += top_statements(statement.body) + top_statements(statement.orelse)
        elif isinstance(statement, ast.Try):
            found += top_statements(statement.body + statement.orelse + statement.finalbody)
            for handler in statement.handlers:
                found += top_statements(handler.body)
    return found


def imported_at_top(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``name`` imports as it loads (``from .x import y`` is ``x.y``
    where that is a module, else ``x``)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for statement in top_statements(ast.parse(path.read_text(encoding="utf-8")).body):
        if isinstance(statement, ast.Import):
            found |= {alias.name for alias in statement.names}
        elif isinstance(statement, ast.ImportFrom):
            base = ".".join(package.split(".")[:len(package.split(".")) - statement.level + 1]) if statement.level else ""
            target = ".".join(part for part in (base, statement.module or "") if part)
            found |= {f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target for alias in statement.names}
    return {imported for imported in found if imported in modules and imported != name}


def import_cycles(packages: dict[str, Path]) -> list[list[str]]:
    """Each set of modules that import one another at the top, however indirectly (Tarjan's strongly connected components)."""
    modules = module_files(packages)
    edges = {name: sorted(imported_at_top(name, path, modules)) for name, path in modules.items()}
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles: list[list[str]] = []

    def visit(name: str) -> None:
        order[name] = low[name] = len(order)
        stack.append(name)
        for imported in edges[name]:
            if imported not in order:
                visit(imported)
                low[name] = min(low[name], low[imported])
            elif imported in stack:
                low[name] = min(low[name], order[imported])
        if low[name] == order[name]:
            component = []
            while not component or component[-1] != name:
                component.append(stack.pop())
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in sorted(edges):
        if name not in order:
            visit(name)
    return cycles


def inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_no_module_of_the_doctor_imports_itself_back_at_the_top():
    assert import_cycles(PACKAGES) == []


def test_the_source_reader_has_no_import_cycle():
    assert [cycle for cycle in import_cycles(PACKAGES) if any(inside(module, "paddle_doctor.source") for module in cycle)] == []


def test_a_cycle_kept_for_the_type_checker_is_a_cycle(tmp_path):
    package = tmp_path / "package"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "inner" / "reader.py").write_text("from __future__ import annotations\nfrom . import asker\n")
    (package / "inner" / "asker.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .reader import Reader\n")
    (package / "inner" / "back.py").write_text("try:\n    from ..late import later\nexcept ImportError:\n    pass\n")
    (package / "late.py").write_text("def later():\n    from .inner import back\n")  # inside a function: no cycle
    assert import_cycles({"package": package}) == [["package.inner.asker", "package.inner.reader"]]
