"""The values of a name that reach one use of it in a function, statement by statement:
``config = read_yaml(path)`` then ``config = update(config)`` is the second where it is used after
it, and the first inside it. An ``if`` whose condition is known adds its branch that runs; one
whose condition is not known adds what either branch leaves; a ``with`` body runs once. Any other
statement that binds the
name (a loop, ``with``, ``try``, ``+=``, unpacking) makes the values not known: the doctor never
guesses. ``branch_condition``: the condition under which a node runs in its function."""

from __future__ import annotations

import ast

from .module import FUNCTIONS, Module, text
from .values import Evaluates

Values = list[ast.expr]


class _NotFollowed(Exception):
    """A statement binds the name in a way the reading does not follow."""


def reaching(evaluator: Evaluates, name: str, use: ast.AST, body: list[ast.stmt], depth: int = 0) -> Values | None:
    """The values assigned to ``name`` in ``body`` (a function's) that may reach ``use``; None when
    they are not known, an empty list when none is assigned before it."""
    around = set(evaluator.module.ancestors(use))
    try:
        values, _ = _through(evaluator, name, use, around, body, [], depth)
    except _NotFollowed:
        return None
    return values


def _through(evaluator: Evaluates, name: str, use: ast.AST, around: set[ast.AST], body: list[ast.stmt],
             current: Values, depth: int) -> tuple[Values, bool]:
    """The values after ``body`` (or at ``use``, then True: the use was reached)."""
    for statement in body:
        if statement in around:
            if isinstance(statement, ast.If) and statement.test not in around and use is not statement.test:
                branch = statement.body if any(s in around for s in statement.body) else statement.orelse
                return _through(evaluator, name, use, around, branch, current, depth)[0], True
            if isinstance(statement, (ast.With, ast.AsyncWith)) and any(s in around for s in statement.body) and not _binds_as(statement, name):
                return _through(evaluator, name, use, around, statement.body, current, depth)[0], True
            if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.Expr, ast.Return, ast.If)):
                return current, True
            raise _NotFollowed()
        current = _after(evaluator, name, use, around, statement, current, depth)
    return current, False


def _after(evaluator: Evaluates, name: str, use: ast.AST, around: set[ast.AST], statement: ast.stmt, current: Values,
           depth: int) -> Values:
    if isinstance(statement, (ast.Assign, ast.AnnAssign)) and statement.value is not None:
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return [statement.value]
    if isinstance(statement, ast.If):
        test = evaluator.evaluate(statement.test, depth + 1)
        if test.known:
            return _through(evaluator, name, use, around, statement.body if test.value else statement.orelse, current, depth)[0]
        body = _through(evaluator, name, use, around, statement.body, current, depth)[0]
        orelse = _through(evaluator, name, use, around, statement.orelse, current, depth)[0]
        return list(dict.fromkeys(body + orelse))
    if isinstance(statement, (ast.With, ast.AsyncWith)) and not _binds_as(statement, name):
        return _through(evaluator, name, use, around, statement.body, current, depth)[0]  # its body runs once
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        if statement.name == name:
            raise _NotFollowed()
        return current
    if any(isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load)
           for node in ast.walk(statement)) or _declares(statement, name):
        raise _NotFollowed()
    return current


def _binds_as(statement: ast.With | ast.AsyncWith, name: str) -> bool:
    return any(isinstance(node, ast.Name) and node.id == name for item in statement.items
               if item.optional_vars is not None for node in ast.walk(item.optional_vars))


def _declares(statement: ast.stmt, name: str) -> bool:
    return any(isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names for node in ast.walk(statement)) or any(
        isinstance(node, (ast.Import, ast.ImportFrom)) and any((alias.asname or alias.name.split(".")[0]) == name for alias in node.names)
        for node in ast.walk(statement))


def branch_condition(module: Module, evaluator: Evaluates, node: ast.AST, depth: int = 0) -> tuple[str | None, bool | None]:
    """The condition under which ``node`` runs inside its function (``args.use_gpu``, ``not
    args.use_gpu`` in the ``else``), and whether it holds: True (the condition is None then),
    False, or None when its inputs are not known."""
    unknown: list[str] = []
    child = node
    for parent in module.ancestors(node):
        if isinstance(parent, FUNCTIONS + (ast.ClassDef,)):
            break
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test:
            in_body = child in parent.body if isinstance(parent, ast.If) else child is parent.body
            result = evaluator.evaluate(parent.test, depth)
            if result.known:
                if bool(result.value) != in_body:
                    return None, False
            elif in_body:  # of ``a and b``, the parts not known to hold
                parts = parent.test.values if isinstance(parent.test, ast.BoolOp) and isinstance(parent.test.op, ast.And) else [parent.test]
                unknown.extend(reversed([text(part) for part in parts if not evaluator.evaluate(part, depth).known]))
            else:
                unknown.append(f"not ({text(parent.test)})")
        child = parent
    if not unknown:
        return None, True
    return " and ".join(reversed(unknown)), None
