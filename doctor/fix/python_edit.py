"""Edits of the service's Python code, each the span of one expression or one new line, so that the rest of
the file (comments, layout) is unchanged: a Config setter's argument, the setter itself
(``disable_mkldnn()`` to ``enable_mkldnn()``), a harmful call removed, a call added after the Config is
built, a wrapper's keyword, a launcher's top-level setting (gunicorn.conf.py's ``workers``)."""

from __future__ import annotations

import ast
from enum import Enum
from typing import Any

from ..base import quoting
from ..facts.knobs import Knob, Setter
from ..source.module import argument
from .text import EditRefused, TextEdit, line_start, offset_of_utf8

CONFIG_NAMES = ("Config", "AnalysisConfig")  # the classes whose construction builds a predictor's configuration


def python_literal(value: Any) -> str:
    """The value as Python code: ``2``, ``True``, ``'fp16'`` (an enum as its word)."""
    return quoting.python_literal(value.value if isinstance(value, Enum) else value)


def python_call(method: str, args: list[Any]) -> str:
    return quoting.python_call(method, [arg.value if isinstance(arg, Enum) else arg for arg in args])


def parsed(text: str, path: str) -> ast.Module:
    try:
        return ast.parse(text, filename=path)
    except (SyntaxError, ValueError) as exc:
        raise EditRefused(f"{path}: cannot be parsed as Python ({exc}); expected the file the doctor read") from None


def set_by_call(text: str, path: str, line: int, row: Knob, value: Any, why: str) -> list[TextEdit]:
    """The edits that make the setter call of ``row`` at ``line`` set ``value``: its argument, or which setter."""
    tree = parsed(text, path)
    call, setter = _setter_call(tree, path, line, row)
    if setter.argument is None:
        return _switched(tree, text, path, call, row, setter, value, why)
    spec = setter.argument
    passed = argument(call, spec.position, spec.keyword)
    if passed is None:
        if spec.default == value:
            return []
        return [_added_argument(text, call, spec.keyword if call.args or call.keywords else None, python_literal(value), why)]
    return _literal_edits(tree, text, path, passed, value, row.name, why)


def insert_after_config(text: str, path: str, line: int, calls: list[tuple[str, list[Any]]], why: str) -> list[TextEdit]:
    """New lines after the statement at ``line`` that builds a Config and binds it (``config = Config(...)``),
    one call each on what it is bound to, at the statement's indentation; none where the statement is followed
    by that call already."""
    tree = parsed(text, path)
    statement = next((node for node in ast.walk(tree) if isinstance(node, (ast.Assign, ast.AnnAssign))
                      and node.lineno <= line <= (node.end_lineno or node.lineno)), None)
    targets = ([] if statement is None else statement.targets if isinstance(statement, ast.Assign) else [statement.target])
    if statement is None or len(targets) != 1 or not isinstance(targets[0], (ast.Name, ast.Attribute)) \
            or not _builds_config(statement.value):
        raise EditRefused(f"{path}:{line}: no Config is built and bound to one name there (the file changed since it was "
                          "read?); expected `config = Config(...)` to add the call after")
    holder = ast.unparse(targets[0])
    newline = "\r\n" if "\r\n" in text else "\n"
    start = line_start(text, statement.lineno)
    indent = text[start:offset_of_utf8(text, statement.lineno, statement.col_offset)]
    end = line_start(text, (statement.end_lineno or statement.lineno) + 1)
    wanted = [f"{holder}.{python_call(method, args)}" for method, args in calls]
    following = _following(tree, statement)
    wanted = [code for code in wanted if code not in following]
    if not wanted:
        return []
    prefix = newline if end == len(text) and text and not text.endswith("\n") else ""
    return [TextEdit(end, end, prefix + "".join(f"{indent}{code}{newline}" for code in wanted), why)]


def _builds_config(value: ast.expr | None) -> bool:
    """Whether the expression calls a class named ``Config`` or ``AnalysisConfig`` (however it was imported)."""
    return value is not None and any(isinstance(node, ast.Call) and _last_name(node.func) in CONFIG_NAMES for node in ast.walk(value))


def _following(tree: ast.Module, statement: ast.stmt) -> set[str]:
    """The code of the expression statements right after ``statement`` in its block, up to the next other kind."""
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and statement in block:
                after = block[block.index(statement) + 1:]
                found = set()
                for one in after:
                    if not isinstance(one, ast.Expr):
                        break
                    found.add(ast.unparse(one.value))
                return found
    return set()


def set_keywords(text: str, path: str, line: int, callee: str, keywords: dict[str, str], why: str) -> list[TextEdit]:
    """The call of ``callee`` (its last name: ``PaddleOCR``) at ``line`` given each keyword as the code says
    (``{'cpu_threads': '2'}``): an existing literal replaced, a missing keyword added."""
    tree = parsed(text, path)
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and _last_name(node.func) == callee
             and node.lineno <= line <= (node.end_lineno or node.lineno)]
    if len(calls) != 1:
        raise EditRefused(f"{path}:{line}: expected one call of {callee}(...) there, found {len(calls)}")
    call = calls[0]
    edits = []
    for keyword, code in keywords.items():
        given = next((item.value for item in call.keywords if item.arg == keyword), None)
        if given is None:
            if any(item.arg is None for item in call.keywords):
                raise EditRefused(f"{path}:{line}: {callee}(...) passes **keywords, which may hold {keyword}; "
                                  f"expected {keyword}= written in the call to change it")
            edits.append(_added_argument(text, call, keyword, code, why))
        elif not _is_literal(given):
            raise EditRefused(f"{path}:{given.lineno}: {keyword}= is `{ast.unparse(given)}`, which paddle-doctor does not "
                              f"rewrite; set it to {code} there")
        elif ast.literal_eval(given) != ast.literal_eval(code):
            edits.append(_replaced(text, given, code, why))
    return edits


def set_assignment(text: str, path: str, line: int, name: str, value: Any, why: str) -> list[TextEdit]:
    """The module's top-level ``name = <literal>`` at ``line`` (gunicorn.conf.py's ``workers = 4``) set to ``value``."""
    tree = parsed(text, path)
    assigned = [node for node in tree.body if isinstance(node, ast.Assign) and node.lineno == line and len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name) and node.targets[0].id == name]
    if not assigned:
        raise EditRefused(f"{path}:{line}: expected `{name} = ...` there (the file changed since it was read?)")
    return _literal_edits(tree, text, path, assigned[0].value, value, name, why)


def _setter_call(tree: ast.Module, path: str, line: int, row: Knob) -> tuple[ast.Call, Setter]:
    methods = {setter.method: setter for setter in row.setters}
    calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
             and node.func.attr in methods and node.lineno == line]
    if len(calls) != 1:
        raise EditRefused(f"{path}:{line}: expected one call of {' or '.join(methods)} there, found {len(calls)}; "
                          "the file changed since the doctor read it?")
    call = calls[0]
    assert isinstance(call.func, ast.Attribute)
    return call, methods[call.func.attr]


def _switched(tree: ast.Module, text: str, path: str, call: ast.Call, row: Knob, setter: Setter, value: Any, why: str) -> list[TextEdit]:
    """A setter that sets by being called: renamed to the one that sets ``value``, or its statement removed."""
    if setter.fixed == value:
        return []
    assert isinstance(call.func, ast.Attribute)
    other = next((one for one in row.setters if one.argument is None and one.fixed == value), None)
    if other is not None:
        end = offset_of_utf8(text, call.func.end_lineno or call.func.lineno, call.func.end_col_offset or 0)
        return [TextEdit(end - len(call.func.attr), end, other.method, why)]
    statement = _statement_of(tree, call)
    if statement is None:
        raise EditRefused(f"{path}:{call.lineno}: `{ast.unparse(call)}` is part of a larger expression; "
                          f"expected it alone on its line to remove it")
    start, end = line_start(text, statement.lineno), line_start(text, (statement.end_lineno or statement.lineno) + 1)
    if text[start:offset_of_utf8(text, statement.lineno, statement.col_offset)].strip() or \
            text[offset_of_utf8(text, statement.end_lineno or statement.lineno, statement.end_col_offset or 0):end].strip(" \t\r\n;#"):
        raise EditRefused(f"{path}:{call.lineno}: `{ast.unparse(call)}` shares its line with other code; expected it alone there")
    return [TextEdit(start, end, "", why)]


def _statement_of(tree: ast.Module, call: ast.Call) -> ast.Expr | None:
    return next((node for node in ast.walk(tree) if isinstance(node, ast.Expr) and node.value is call), None)


def _literal_edits(tree: ast.Module, text: str, path: str, node: ast.expr, value: Any, setting: str, why: str) -> list[TextEdit]:
    """``node`` (a literal, or a name the module binds once to a literal) made to say ``value``: the name's
    binding where nothing else reads the name, else ``node`` itself (the other readers keep their value)."""
    if isinstance(node, ast.Name) and not _local(tree, node):
        bound = [one for one in tree.body if isinstance(one, ast.Assign) and len(one.targets) == 1
                 and isinstance(one.targets[0], ast.Name) and one.targets[0].id == node.id]
        if len(bound) == 1 and _is_literal(bound[0].value):
            if _reads(tree, node.id) > 1:
                shared = ast.literal_eval(bound[0].value) == (value.value if isinstance(value, Enum) else value)
                return [] if shared else [_replaced(text, node, python_literal(value), why)]
            node = bound[0].value
    if not _is_literal(node):
        raise EditRefused(f"{path}:{node.lineno}: {setting} is set from `{ast.unparse(node)}`, which paddle-doctor does not "
                          f"rewrite; set it to {python_literal(value)} there")
    if ast.literal_eval(node) == (value.value if isinstance(value, Enum) else value):
        return []
    return [_replaced(text, node, python_literal(value), why)]


def _reads(tree: ast.Module, name: str) -> int:
    """How many times the module reads ``name``."""
    return sum(1 for node in ast.walk(tree) if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load))


def _local(tree: ast.Module, name: ast.Name) -> bool:
    """Whether ``name`` is a parameter or a local variable of a function it is read in (not the module's)."""
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) or \
                not any(node is name for node in ast.walk(function)):
            continue
        arguments = function.args
        given = [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, arguments.vararg, arguments.kwarg]
        if any(one is not None and one.arg == name.id for one in given):
            return True
        body = function.body if isinstance(function.body, list) else [function.body]
        if any(isinstance(node, ast.Name) and node.id == name.id and isinstance(node.ctx, ast.Store)
               for statement in body for node in ast.walk(statement)):
            return True
    return False


def _is_literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return isinstance(node, (ast.Constant, ast.UnaryOp))


def _replaced(text: str, node: ast.expr, code: str, why: str) -> TextEdit:
    start = offset_of_utf8(text, node.lineno, node.col_offset)
    end = offset_of_utf8(text, node.end_lineno or node.lineno, node.end_col_offset or 0)
    return TextEdit(start, end, code, why)


def _added_argument(text: str, call: ast.Call, keyword: str | None, code: str, why: str) -> TextEdit:
    """``code`` passed to ``call`` (as ``keyword=code`` where a keyword is given), after its last argument."""
    given = [*call.args, *(item.value for item in call.keywords)]
    written = f"{keyword}={code}" if keyword else code
    if not given:
        end = offset_of_utf8(text, call.end_lineno or call.lineno, call.end_col_offset or 0)
        close = text.rfind(")", 0, end)
        return TextEdit(close, close, written, why)
    last = max(given, key=lambda node: (node.end_lineno or 0, node.end_col_offset or 0))
    close = offset_of_utf8(text, call.end_lineno or call.lineno, call.end_col_offset or 0) - 1
    after = probe = offset_of_utf8(text, last.end_lineno or last.lineno, last.end_col_offset or 0)
    while probe < close and (text[probe].isspace() or text[probe] == ")"):  # past the parentheses around the last argument
        probe += 1
        after = probe if text[probe - 1] == ")" else after
    return TextEdit(after, after, f", {written}", why)


def _last_name(func: ast.expr) -> str | None:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
