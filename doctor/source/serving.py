"""How a module serves its predictor: created per request, shared by threads, warmed up or not.

A request handler is a function routed by a web framework (``@app.route``, ``@app.get``,
``@router.post``...) or an ``http.server`` handler method (``do_GET``, ``do_POST``); a loop over
anything but ``range(...)`` (which builds a pool) counts as serving requests one by one. Whether requests
reach a shared predictor from several threads at once is the serving model's (:mod:`.serving_model`): the
code's server, framework and routes, and the launcher's settings where it imports the code.
"""

from __future__ import annotations

import ast

from ..base.vocabulary import SourcePatternKind
from ..facts import SourcePattern
from ..facts.launcher import LauncherFacts
from .module import FUNCTIONS, LOOPS, Function, Module, text
from .serving_model import serving_model

PREDICTOR_FACTORIES = ("paddle.inference.create_predictor", "paddle_infer.create_predictor")
POOL_CLASSES = ("paddle.inference.PredictorPool", "paddle_infer.PredictorPool")
ROUTE_DECORATORS = (".route", ".get", ".post", ".put", ".patch", ".api_route", ".websocket")
HANDLER_METHODS = ("do_GET", "do_POST", "do_PUT")
SAFE_SHARING = ("threading.Lock", "threading.RLock", "threading.local", "paddle.inference.PredictorPool")


def serving_patterns(module: Module, launcher: LauncherFacts | None = None) -> list[SourcePattern]:
    """``launcher``: what runs the service's code, and its settings (whether ``app.run()`` under the main block
    runs; gunicorn's worker class and threads)."""
    creations = [call for call in module.calls()
                 if module.canonical(call.func) in PREDICTOR_FACTORIES + POOL_CLASSES]
    if not creations:
        return []
    handlers = _handlers(module)
    patterns = []
    per_request = [call for call in creations if _why_per_request(module, call, handlers)]
    for call in per_request:
        patterns.append(SourcePattern(SourcePatternKind.PREDICTOR_PER_REQUEST, module.location(call),
                                      f"{text(call.func)}() runs for every request ({_why_per_request(module, call, handlers)})"))
    shared = [call for call in creations if call not in per_request and module.canonical(call.func) in PREDICTOR_FACTORIES]
    model = serving_model(module, sorted((handler for handler in handlers if _routed(handler)), key=lambda handler: handler.lineno), launcher)
    if shared and model is not None and model.threaded and not _shares_safely(module):
        patterns.append(SourcePattern(SourcePatternKind.SHARED_PREDICTOR_THREADS, module.location(shared[0]),
                                      f"one predictor is used by {model.said}, with no clone(), PredictorPool or lock"))
    elif shared and model is not None and not model.threaded:
        patterns.append(SourcePattern(SourcePatternKind.ONE_REQUEST_AT_A_TIME, module.location(shared[0]),
                                      f"one predictor, reached by {model.said}"))
    if shared and (handlers or model is not None) and not _warms_up(module, handlers, _predictor_holders(module, creations)):
        patterns.append(SourcePattern(SourcePatternKind.NO_WARMUP, module.location(shared[0]),
                                      "no inference runs before the service starts answering requests"))
    return patterns


def _handlers(module: Module) -> set[Function]:
    return {function for functions in module.functions.values() for function in functions
            if _routed(function) or function.name in HANDLER_METHODS}


def _routed(function: Function) -> bool:
    """Whether a web framework routes requests to ``function`` (``@app.route``, ``@app.get``, ``@router.post``...)."""
    return any(text(decorator.func if isinstance(decorator, ast.Call) else decorator).endswith(ROUTE_DECORATORS)
               for decorator in function.decorator_list)


def _why_per_request(module: Module, call: ast.Call, handlers: set[Function]) -> str:
    for parent in module.ancestors(call):
        if parent in handlers:
            return f"inside the request handler {parent.name}()"
        if isinstance(parent, LOOPS) and not _builds_a_pool(parent):
            return f"inside the loop at line {parent.lineno}"
        if isinstance(parent, FUNCTIONS) and _called_only_from_handlers(module, parent, handlers):
            return f"in {parent.name}(), which every request handler calls"
    return ""


def _builds_a_pool(loop: ast.AST) -> bool:
    return isinstance(loop, ast.For) and isinstance(loop.iter, ast.Call) and text(loop.iter.func) == "range"


def _called_only_from_handlers(module: Module, function: Function, handlers: set[Function]) -> bool:
    callers = [module.enclosing_function(call) for call, _ in module.call_sites(function)]
    return bool(callers) and all(caller in handlers for caller in callers)


def _shares_safely(module: Module) -> bool:
    return any(module.canonical(call.func) in SAFE_SHARING
               or (isinstance(call.func, ast.Attribute) and call.func.attr == "clone") for call in module.calls())


def _predictor_holders(module: Module, creations: list[ast.Call]) -> set[str]:
    """Expressions assigned a predictor: from create_predictor, clone() or a pool's retrive()."""
    holders: set[str] = set()
    for node in ast.walk(module.tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and (
                node.value in creations or (isinstance(node.value.func, ast.Attribute) and node.value.func.attr in ("clone", "retrive"))):
            holders.update(text(target) for target in node.targets)
    return holders


def _warms_up(module: Module, handlers: set[Function], predictors: set[str]) -> bool:
    """An inference (``predictor.run()``) that runs outside the request handlers: at module level,
    or in a function something other than a handler calls. A receiver counts as a predictor when
    a predictor was assigned to it or its name says so (a helper's ``predictor`` parameter)."""
    for call in module.calls():
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "run"
                and (text(func.value) in predictors or "predictor" in text(func.value).lower())):
            continue
        function = module.enclosing_function(call)
        if function is None:
            return True
        if function in handlers:
            continue
        callers = [module.enclosing_function(site) for site, _ in module.call_sites(function)]
        if any(caller not in handlers for caller in callers):
            return True
    return False
