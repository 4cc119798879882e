"""Values a module gives to attributes: ``self.name = ...`` in a class's methods, and the defaults
of its ``argparse`` arguments (``parser.add_argument("--cpu_threads", type=int, default=10)``)."""

from __future__ import annotations

import ast

from .module import Module


def assigned_to_self(module: Module, node: ast.Attribute) -> list[ast.expr]:
    """Every value the class enclosing ``node`` assigns to ``self.<attr>`` in any of its methods; none
    when it is also bound another way (``+=``, unpacking, a loop), which would make any of them a guess."""
    owner = next((parent for parent in module.ancestors(node) if isinstance(parent, ast.ClassDef)), None)
    if owner is None:
        return []
    values = []
    for sub in ast.walk(owner):
        if isinstance(sub, (ast.Assign, ast.AnnAssign)) and sub.value is not None:
            targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target]
            if any(_is_self_attribute(target, node.attr) for target in targets):
                values.append(sub.value)
            elif any(_is_self_attribute(element, node.attr) for target in targets
                     if isinstance(target, (ast.Tuple, ast.List)) for element in ast.walk(target)):
                return []
        elif isinstance(sub, (ast.AugAssign, ast.For, ast.AsyncFor, ast.With, ast.AsyncWith)):
            bound = [sub.target] if isinstance(sub, (ast.AugAssign, ast.For, ast.AsyncFor)) else [
                item.optional_vars for item in sub.items if item.optional_vars is not None]
            if any(_is_self_attribute(element, node.attr) for target in bound for element in ast.walk(target)):
                return []
    return values


def attribute_assigned(module: Module, attr: str) -> bool:
    """Whether anything in the module assigns ``<something>.attr`` (an argument changed after parsing)."""
    for sub in ast.walk(module.tree):
        targets = sub.targets if isinstance(sub, ast.Assign) else [sub.target] if isinstance(
            sub, (ast.AnnAssign, ast.AugAssign)) else []
        if any(isinstance(element, ast.Attribute) and element.attr == attr for target in targets for element in ast.walk(target)):
            return True
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name) and sub.func.id == "setattr":
            return True
    return False


def argparse_defaults(module: Module, attr: str) -> list[ast.expr]:
    """The defaults of the module's ``add_argument`` calls whose destination is ``attr``."""
    defaults = []
    for call in module.calls():
        if not (isinstance(call.func, ast.Attribute) and call.func.attr == "add_argument"):
            continue
        keywords = {keyword.arg: keyword.value for keyword in call.keywords if keyword.arg}
        if _destination(call, keywords) != attr:
            continue
        action = keywords.get("action")
        action = action.value if isinstance(action, ast.Constant) else None
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
    (``Engine(threads=4)``), each with the leading parameters the call does not pass."""
    yield from module.call_sites(function)
    owner = module.parents.get(function)
    if function.name == "__init__" and isinstance(owner, ast.ClassDef):
        for call in module.calls():
            func = call.func
            if (isinstance(func, ast.Name) and func.id == owner.name) or (isinstance(func, ast.Attribute) and func.attr == owner.name):
                yield call, 1
