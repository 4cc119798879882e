"""Values a module gives to attributes: ``self.name = ...`` in a class's methods, and the defaults
of its ``argparse`` arguments (``parser.add_argument("--cpu_threads", type=int, default=10)``)."""

from __future__ import annotations

import ast

from .module import Module, rebinding


def assigned_to_self(module: Module, node: ast.Attribute) -> list[ast.expr]:
    """Every value the class enclosing ``node`` assigns to ``self.<attr>`` in any of its methods; none
    when it is also bound another way (``+=``, unpacking, a loop), which would make any of them a guess."""
    owner = next((parent for parent in module.ancestors(node) if isinstance(parent, ast.ClassDef)), None)
    if owner is None:
        return []
    values = []
    for sub in ast.walk(owner):
        value = _assigned_whole(sub, node.attr)
        if value is not None:
            values.append(value)
        elif _bound_otherwise(sub, node.attr):
            return []
    return values


def _assigned_whole(sub: ast.AST, attr: str) -> ast.expr | None:
    """The value ``sub`` assigns to ``self.<attr>`` as one of its targets (``self.attr = value``), if it does."""
    if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None:
        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
        if any(_is_self_attribute(target, attr) for target in targets):
            return sub.value
    return None


def _bound_otherwise(sub: ast.AST, attr: str) -> bool:
    """Whether ``sub`` binds ``self.<attr>`` another way: unpacked, augmented (``+=``), a loop's or a ``with``'s target."""
    return any(_is_self_attribute(element, attr) for element in rebinding(sub))


def attribute_assigned(module: Module, attr: str) -> bool:
    """Whether anything in the module assigns ``<something>.attr`` (an argument changed after
    parsing); an attribute of ``self`` is the object's own, not the arguments'."""
    if "assigned" not in module.indexes:
        names: set[str] = set()
        setattrs: list[ast.Call] = []
        for sub in ast.walk(module.tree):
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] if isinstance(
                sub, (ast.AnnAssign, ast.AugAssign)) else []
            names.update(element.attr for target in targets for element in ast.walk(target)
                         if isinstance(element, ast.Attribute) and not _is_self_attribute(element, element.attr))
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "setattr":
                setattrs.append(sub)
        module.indexes["assigned"] = (names, setattrs)
    names, setattrs = module.indexes["assigned"]
    return attr in names or any(_may_set(call, attr) for call in setattrs)


def _may_set(call: ast.Call, attr: str) -> bool:
    """Whether ``setattr(...)`` may set ``attr`` of parsed arguments: its name is ``attr`` or not a
    literal, on a plain name (``setattr(self.font, style, True)`` sets no argument)."""
    if len(call.args) < 2:
        return True
    name = call.args[1]
    if isinstance(name, ast.Constant):
        return name.value == attr
    return isinstance(call.args[0], ast.Name) and call.args[0].id not in ("self", "cls")


def argparse_defaults(module: Module, attr: str) -> list[ast.expr]:
    """The defaults of the module's ``add_argument`` calls whose destination is ``attr``."""
    if "arguments" not in module.indexes:
        by_destination: dict[str | None, list[ast.Call]] = {}
        for call in module.calls_by_name.get("add_argument", ()):
            if isinstance(call.func, ast.Attribute):
                keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
                by_destination.setdefault(_destination(call, keywords), []).append(call)
        module.indexes["arguments"] = by_destination
    defaults = []
    for call in module.indexes["arguments"].get(attr, []):
        keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
        given = keywords.get("action")
        action = given.value if isinstance(given, ast.Constant) else None
        if "default" in keywords:
            defaults.append(keywords["default"])
        elif action in ("store_true", "store_false"):
            defaults.append(ast.Constant(action == "store_false"))
        else:
            defaults.append(ast.Constant(None))
    return defaults


def _destination(call: ast.Call, keywords: dict[str, ast.expr]) -> str | None:
    dest = keywords.get("dest")
    if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
        return dest.value
    flags = [arg.value for arg in call.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)]
    long = next((flag for flag in flags if flag.startswith("--")), None)
    chosen = long or (flags[0] if flags else None)
    return chosen.lstrip("-").replace("-", "_") if chosen else None


def _is_self_attribute(node: ast.AST, attr: str) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == attr
            and isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))


def callers(module: Module, function: ast.FunctionDef | ast.AsyncFunctionDef):
    """``module.call_sites`` and, for a class's ``__init__``, the calls that build the class
    (``Engine(threads=4)``) and the ``super().__init__(...)`` of the module's classes derived from
    it, each with the leading parameters the call does not pass."""
    owner = module.parents.get(function)
    if function.name != "__init__" or not isinstance(owner, ast.ClassDef):
        yield from module.call_sites(function)
        return
    for call in module.calls():
        func = call.func
        if (isinstance(func, ast.Name) and func.id == owner.name) or (isinstance(func, ast.Attribute) and func.attr == owner.name):
            yield call, 1
    for derived in module.tree.body:
        if isinstance(derived, ast.ClassDef) and any(isinstance(base, ast.Name) and base.id == owner.name for base in derived.bases):
            yield from ((call, 1) for call in super_inits(derived))


def super_inits(derived: ast.ClassDef) -> list[ast.Call]:
    """The ``super().__init__(...)`` calls in a class's methods."""
    return [sub for sub in ast.walk(derived) if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute)
            and sub.func.attr == "__init__" and isinstance(sub.func.value, ast.Call)
            and isinstance(sub.func.value.func, ast.Name) and sub.func.value.func.id == "super"]
