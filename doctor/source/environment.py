"""Where the service's source sets its own thread variables and FLAGS_* (``facts.environment``):
``os.environ[NAME] = value``, ``os.environ.setdefault(NAME, value)``, ``os.environ.update({...})``
(and its keywords) and ``os.putenv(NAME, value)``, at a module's top level, in a function the program
is seen to run from there, or in a function that builds a Config (which the service runs before its
predictor). A name the doctor cannot evaluate is not one it notes; a value it cannot is kept unevaluated."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..facts.environment import MAX_VALUE, EnvironmentChange, SourceEnvironment, noted_name
from .evaluate import Evaluator
from .module import Module, text
from .service_program import Program

ENVIRON = "os.environ"
CALLS = {"os.environ.setdefault": EnvironmentChange.DEFAULTED, "os.putenv": EnvironmentChange.PUTENV,
         "os.environ.update": EnvironmentChange.UPDATED}
BUILDERS = ("paddle.inference.Config", "paddle.inference.create_predictor")
MAX_CODE = 200

Pair = tuple[ast.expr | str, ast.expr]  # the variable's name (an expression, or a keyword's name) and its value


def environment_changes(module: Module, evaluator: Evaluator, program: Program | None) -> list[SourceEnvironment]:
    """The noted variables ``module`` sets where the service runs it, in the order of their lines."""
    found: list[SourceEnvironment] = []
    for node, change, pairs in _changes(module):
        if not _runs(module, evaluator, program, node):
            continue
        function = module.enclosing_function(node)
        for name_node, value_node in pairs:
            name = name_node if isinstance(name_node, str) else _text_of(evaluator, name_node)
            if name is None or not noted_name(name):
                continue
            value = _text_of(evaluator, value_node)
            found.append(SourceEnvironment(name, value, value is not None, change, module.file, getattr(node, "lineno", 0),
                                           text(node)[:MAX_CODE], function.name if function else None))
    return sorted(found, key=lambda setting: setting.line)


def _changes(module: Module) -> Iterator[tuple[ast.AST, EnvironmentChange, list[Pair]]]:
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Assign):
            pairs: list[Pair] = [(target.slice, node.value) for target in node.targets
                                 if isinstance(target, ast.Subscript) and module.canonical(target.value) == ENVIRON]
            if pairs:
                yield node, EnvironmentChange.ASSIGNED, pairs
        elif isinstance(node, ast.Call) and module.canonical(node.func) in CALLS:
            change = CALLS[module.canonical(node.func) or ""]
            yield node, change, _updated(node) if change == EnvironmentChange.UPDATED else _named(node)


def _named(call: ast.Call) -> list[Pair]:
    """``setdefault(NAME, value)`` and ``putenv(NAME, value)``."""
    return [(call.args[0], call.args[1])] if len(call.args) == 2 else []


def _updated(call: ast.Call) -> list[Pair]:
    """``update({NAME: value, ...}, NAME=value)``: a dictionary written out, and keywords."""
    pairs: list[Pair] = []
    if len(call.args) == 1 and isinstance(call.args[0], ast.Dict):
        pairs += [(key, value) for key, value in zip(call.args[0].keys, call.args[0].values) if key is not None]
    pairs += [(keyword.arg, keyword.value) for keyword in call.keywords if keyword.arg is not None]
    return pairs


def _text_of(evaluator: Evaluator, node: ast.expr) -> str | None:
    """The text of a value the doctor can work out (a string, a number), cut to what a record keeps; else None."""
    result = evaluator.evaluate(node)
    if not result.known or isinstance(result.value, bool) or not isinstance(result.value, (str, int, float)):
        return None
    return str(result.value)[:MAX_VALUE]


def _runs(module: Module, evaluator: Evaluator, program: Program | None, node: ast.AST) -> bool:
    """Whether the service runs ``node``: not in a branch known not to run, and reached from a top level
    (or at one), or in a function that builds a Config."""
    if isinstance(node, ast.Call) and not evaluator.may_run(node, 0):
        return False
    function = module.enclosing_function(node)
    if function is None:
        return program.reached(module, node) if program is not None else True
    return (program is not None and program.reached(module, node)) or _builds_a_config(module, function)


def _builds_a_config(module: Module, function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any(isinstance(node, ast.Call) and module.canonical(node.func) in BUILDERS for node in ast.walk(function))
