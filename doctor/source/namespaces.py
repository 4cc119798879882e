"""Parsed command-line arguments as a wrapper hands them down: ``args.cpu_threads`` where ``args``
is what ``parser.parse_args()`` or ``argparse.Namespace(...)`` made, in this module or another one
read, passed on through functions and constructors. Its value is the keyword the wrapper's caller
passed, where the function that made the namespace updates it with its ``**kwargs``
(``params.__dict__.update(**kwargs)``, ``vars(params).update(...)``); otherwise the default of
``add_argument("--cpu_threads", default=...)`` in the modules read, where they all agree. An
argument something assigns after parsing (``params.use_gpu = check(...)``) is unknown."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .attributes import argparse_defaults, attribute_assigned
from .module import Function, passed_for
from .values import UNKNOWN, Evaluates, Evaluation, unknown_of

MAKERS = ("parse_args", "parse_known_args")  # a parser's methods that make the namespace
NAMESPACE_CLASSES = ("argparse.Namespace",)
COPIES = ("copy.copy", "copy.deepcopy")  # a copy of a namespace holds what it holds
MAX_DEPTH = 16


@dataclass(frozen=True)
class Made:
    """Where a namespace was made: the module's evaluator, the function (None: the module's top
    level) and the name it was bound to there ("" where it was made to be passed on at once)."""

    evaluator: Evaluates
    function: Function | None
    name: str


def made_at(evaluator: Evaluates, node: ast.expr, depth: int = 0) -> list[Made] | None:
    """Where the namespace a name holds was made, one place per path of calls; None when it holds no
    namespace the doctor can follow (a parameter some caller passes something else). A path that
    ends at a parameter nothing read passes (a function none calls) leads nowhere: it adds no place.
    Worked out once per expression; one met again while it is worked out holds none there."""
    key = ("made", node)
    if key not in evaluator.memo:
        evaluator.memo[key] = None
        evaluator.memo[key] = _made_at(evaluator, node, depth)
    return evaluator.memo[key]


def _made_at(evaluator: Evaluates, node: ast.expr, depth: int) -> list[Made] | None:
    if isinstance(node, ast.Call) and evaluator.module.canonical(node.func) in COPIES and len(node.args) == 1:
        return made_at(evaluator, node.args[0], depth + 1)
    if isinstance(node, ast.Call) and makes_namespace(evaluator, node, depth):  # ``main(parse_args())``
        return [Made(evaluator, evaluator.module.enclosing_function(node), "")]
    if not isinstance(node, ast.Name) or depth > MAX_DEPTH:
        return None
    function = evaluator.module.enclosing_function(node)
    if function is not None and node.id in {arg.arg for arg in function.args.args + function.args.kwonlyargs}:
        found: list[Made] = []
        for caller, call, skipped in evaluator.sites(function, depth):
            made = made_at(caller, passed_for(call, skipped, function, node.id) or ast.Constant(None), depth + 1)
            if made is None:
                return None
            found.extend(made)
        return found
    scope = function if function is not None and evaluator.assigned(node.id, function) else None
    values = evaluator.assigned(node.id, scope)
    if values and all(makes_namespace(evaluator, value, depth) for value in values):
        return [Made(evaluator, scope, node.id)]
    return None


def makes_namespace(evaluator: Evaluates, value: ast.expr, depth: int) -> bool:
    """``parser.parse_args()``, ``argparse.Namespace(...)``, or a call of a function every ``return`` of which is one."""
    if not isinstance(value, ast.Call) or depth > MAX_DEPTH:
        return False
    if isinstance(value.func, ast.Attribute) and value.func.attr in MAKERS:
        return True
    if evaluator.module.canonical(value.func) in NAMESPACE_CLASSES:
        return True
    called = evaluator.function_called(value)
    if called is None:
        return False
    owner, function = called
    returns = [sub.value for sub in ast.walk(function) if isinstance(sub, ast.Return) and sub.value is not None]
    return bool(returns) and all(makes_namespace(owner, returned, depth + 1) for returned in returns)


def argument(evaluator: Evaluates, node: ast.Attribute, depth: int) -> Evaluation | None:
    """The value of ``args.name``; None when ``args`` holds no namespace."""
    made = made_at(evaluator, node.value, depth)
    if not made:
        return None
    if any(attribute_assigned(module, node.attr) for module in evaluator.modules()):
        return UNKNOWN
    results = [_value(place, node.attr, depth) for place in made]
    return results[0] if all(result == results[0] for result in results) else unknown_of(results)


def has_argument(evaluator: Evaluates, holder: ast.expr, name: str, depth: int) -> bool | None:
    """``hasattr(args, "name")``: True where ``args`` holds a namespace some ``add_argument`` gives ``name``; None when not known."""
    if not made_at(evaluator, holder, depth):
        return None
    return True if any(argparse_defaults(module, name) for module in evaluator.modules()) else None


def _value(place: Made, name: str, depth: int) -> Evaluation:
    for update in _updates(place):
        if update.args:
            return UNKNOWN
        for keyword in update.keywords:
            if keyword.arg == name:
                return place.evaluator.evaluate(keyword.value, depth + 1)
            if keyword.arg is None:
                passed = _passed_through(place, keyword.value, name, depth)
                if passed is not None:
                    return passed
    return default(place.evaluator, name, depth)


def default(evaluator: Evaluates, name: str, depth: int) -> Evaluation:
    """The default the modules read give the argument ``name``, where they agree."""
    results = [evaluator.of(module).evaluate(value, depth + 1)
               for module in evaluator.modules() for value in argparse_defaults(module, name)]
    if not results:
        return UNKNOWN
    return results[0] if all(result == results[0] for result in results) else unknown_of(results)


def _updates(place: Made) -> list[ast.Call]:
    """``name.__dict__.update(...)`` and ``vars(name).update(...)`` where the namespace was made."""
    found = []
    for call in place.evaluator.module.calls():
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "update"):
            continue
        if place.evaluator.module.enclosing_function(call) is not place.function:
            continue
        holder = _namespace_of(func.value)
        if isinstance(holder, ast.Name) and holder.id == place.name:
            found.append(call)
    return found


def _spread(caller: Evaluates, spread: ast.expr, name: str, depth: int) -> Evaluation:
    """``name`` of the namespace a call spreads (``**vars(args)``), worked out once per call and name."""
    key = ("spread", spread, name)
    if key not in caller.memo:
        caller.memo[key] = UNKNOWN
        namespace = _namespace_of(spread)
        found = argument(caller, ast.Attribute(namespace, name, ast.Load()), depth + 1) if namespace is not None else None
        caller.memo[key] = found if found is not None else UNKNOWN
    return caller.memo[key]


def _namespace_of(node: ast.expr) -> ast.expr | None:
    """``args`` of ``args.__dict__`` or ``vars(args)``."""
    if isinstance(node, ast.Attribute) and node.attr == "__dict__":
        return node.value
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "vars" and len(node.args) == 1:
        return node.args[0]
    return None


def _passed_through(place: Made, node: ast.expr, name: str, depth: int) -> Evaluation | None:
    """What the callers of the function pass for ``name`` in its ``**kwargs`` (``node``): None where
    every caller leaves it out (or none calls), unknown where they differ or pass a ``**`` of their own."""
    function = place.function
    if function is None or function.args.kwarg is None or not (isinstance(node, ast.Name) and node.id == function.args.kwarg.arg):
        return UNKNOWN
    results: list[Evaluation | None] = []
    for caller, call, _ in place.evaluator.sites(function, depth):
        given = next((keyword.value for keyword in call.keywords if keyword.arg == name), None)
        spread = [keyword.value for keyword in call.keywords if keyword.arg is None]
        if given is not None:
            results.append(caller.evaluate(given, depth + 1))
        elif len(spread) == 1 and _namespace_of(spread[0]) is not None:  # ``Engine(**vars(args))``: the arguments, passed on
            results.append(_spread(caller, spread[0], name, depth))
        elif spread:
            results.append(UNKNOWN)
        else:
            results.append(None)
    if not results or all(result is None for result in results):
        return None
    return results[0] if all(result == results[0] for result in results) else UNKNOWN
