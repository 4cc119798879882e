"""A mapping a function changes before it returns it (``config["Det"]["model_path"] = ...``):
what it changes is not known afterwards, the rest stays as it was read. A function that changes a
mapping in a way the reading does not follow (``update()``, ``pop()``, a key not known) returns
nothing known."""

from __future__ import annotations

import ast
import copy
from dataclasses import replace

from .module import Function
from .values import NOT_KNOWN, UNKNOWN, Evaluates, Evaluation

MUTATORS = ("update", "pop", "popitem", "setdefault", "clear", "append", "extend", "insert", "remove")


def changed(evaluator: Evaluates, function: Function, result: Evaluation, depth: int) -> Evaluation:
    """``result`` (a mapping or list ``function`` returns) with every item ``function`` assigns not known."""
    stores: list[ast.Subscript] = []
    for sub in ast.walk(function):
        targets = sub.targets if isinstance(sub, (ast.Assign, ast.Delete)) else [sub.target] if isinstance(
            sub, (ast.AugAssign, ast.AnnAssign)) else []
        stores += [target for target in targets if isinstance(target, ast.Subscript)]
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr in MUTATORS:
            return UNKNOWN
    if not stores:
        return result
    value = copy.deepcopy(result.value)
    for target in stores:
        keys: list[object] = []
        node: ast.expr = target
        while isinstance(node, ast.Subscript):
            key = evaluator.evaluate(node.slice, depth + 1)
            if not key.known or not isinstance(key.value, (str, int)):
                return UNKNOWN
            keys.append(key.value)
            node = node.value
        container = value
        try:
            for item in reversed(keys[1:]):
                container = container[item]
            container[keys[0]] = NOT_KNOWN
        except (KeyError, IndexError, TypeError):
            return UNKNOWN
    return replace(result, value=value)
