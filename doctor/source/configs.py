"""The ``paddle.inference.Config`` objects a module builds and the settings made on them.

A Config is followed through assignments (``config = Config(...)``, ``self.config = ...``),
factory functions that return one, and helpers it is passed to (``tune(config)`` makes the
helper's parameter a Config too), so a setting made in a helper is found at its own line.

Each Config built is a predictor of its own, and each setting names the predictors whose Config
it is made on. A setting under an ``if``/``else`` carries its branch's condition; where the
condition's value is known the branch that does not run is left out, and the one that runs has no
condition.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, replace
from enum import Enum
from itertools import zip_longest

from ..facts import SourceLocation, SourcePredictor, SourceSetting
from ..facts.knobs import TRT_PRECISION_NAMES, Setter, setter_arguments
from .attributes import callers
from .branches import branch_condition
from .datafiles import ModulePath
from .evaluate import Evaluator
from .module import FUNCTIONS, Function, Module, argument, parameter_position, text
from .service_program import Program
from .values import Evaluation

MAX_CHAIN = 8
MAX_PATHS = 16  # predictors one Config construction stands for, one per path of calls to it

CONFIG_CLASSES = ("paddle.inference.Config", "paddle.inference.AnalysisConfig", "paddle_infer.Config")


def _trt_precision(node: ast.expr) -> Evaluation:
    name = node.attr if isinstance(node, ast.Attribute) else None
    return Evaluation(TRT_PRECISION_NAMES[name], True) if name in TRT_PRECISION_NAMES else Evaluation()


# per Config method, the settings a call of it makes and how (the table of settings, facts/knobs.py)
METHODS = setter_arguments()


@dataclass
class ModuleConfigs:
    """What one module does with Configs: where each is built, the expressions that hold one, the settings."""

    built: list[SourceLocation]
    holders: set[str]
    settings: list[SourceSetting]
    predictors: list[SourcePredictor]


def read_configs(module: Module, evaluator: Evaluator, first_id: int = 1) -> ModuleConfigs:
    """``first_id``: the id the module's first Config gets as a predictor."""
    constructions = sorted((call for call in module.calls() if module.canonical(call.func) in CONFIG_CLASSES),
                           key=lambda call: (call.lineno, call.col_offset))
    paths = {call: _paths(module, call, evaluator.program, 0) for call in constructions}
    ids: dict[ast.Call, list[int]] = {}
    for call in constructions:
        ids[call] = [first_id + sum(map(len, ids.values())) + index for index in range(len(paths[call]))]
    holders = _holders(module, constructions)
    settings: list[SourceSetting] = []
    for call in module.calls():
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in METHODS and text(func.value) in holders:
            condition, runs = branch_condition(module, evaluator, call)
            if runs is False:
                continue
            built = _held(module, text(func.value), module.enclosing_function(call), set(constructions), 0)
            if not built and len(constructions) == 1:
                built = set(constructions)
            numbers = sorted(number for construction in built for number in ids[construction])
            settings.extend(replace(setting, condition=condition, predictors=numbers, function=_function_name(module, call))
                            for setting in _settings(module, evaluator, call, METHODS[func.attr]))
    predictors = [SourcePredictor(number, module.location(call), _function_name(module, call), chain, caller)
                  for call in constructions for number, (chain, caller) in zip(ids[call], paths[call])]
    return ModuleConfigs([module.location(call) for call in constructions], holders, settings, predictors)


def _held(module: Module, holder: str, function: ast.AST | None, constructions: set[ast.Call], depth: int) -> set[ast.Call]:
    """The Config constructions an expression (``config``, ``self.config``) holds where it is used in ``function``:
    those assigned to it there, else those passed in where it is a parameter, else those at the module's top."""
    if depth > MAX_CHAIN:
        return set()
    found = _assigned(module, holder, function, constructions, depth)
    if found or function is None:
        return found
    if isinstance(function, FUNCTIONS) and holder in {arg.arg for arg in function.args.posonlyargs + function.args.args}:
        return _passed(module, holder, function, constructions, depth)
    return _held(module, holder, None, constructions, depth + 1)


def _assigned(module: Module, holder: str, function: ast.AST | None, constructions: set[ast.Call], depth: int) -> set[ast.Call]:
    """The Config constructions assigned to ``holder`` in ``function`` (an attribute of ``self``: anywhere in its class)."""
    self_attribute = holder.startswith("self.")
    scope = function if function is not None and not self_attribute else _class_of(module, function) or module.tree
    found: set[ast.Call] = set()
    for node in ast.walk(scope):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and (
                self_attribute or module.enclosing_function(node) is function):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(text(target) == holder for target in targets):
                found |= _made_by(module, node.value, module.enclosing_function(node), constructions, depth + 1)
    return found


def _passed(module: Module, holder: str, function: Function, constructions: set[ast.Call], depth: int) -> set[ast.Call]:
    """The Config constructions the callers of ``function`` pass as its parameter ``holder``."""
    found: set[ast.Call] = set()
    for call, skipped in callers(module, function):
        passed = argument(call, (parameter_position(function, holder) or 0) - skipped, holder)
        if passed is not None:
            found |= _held(module, text(passed), module.enclosing_function(call), constructions, depth + 1)
    return found


def _made_by(module: Module, value: ast.expr, function: ast.AST | None, constructions: set[ast.Call], depth: int) -> set[ast.Call]:
    if value in constructions:
        return {value}
    if isinstance(value, ast.IfExp):
        return (_made_by(module, value.body, function, constructions, depth)
                | _made_by(module, value.orelse, function, constructions, depth))
    if isinstance(value, ast.Call):
        name = value.func.id if isinstance(value.func, ast.Name) else value.func.attr if isinstance(value.func, ast.Attribute) else None
        found: set[ast.Call] = set()
        for factory in module.functions.get(name or "", []):
            for sub in ast.walk(factory):
                if isinstance(sub, ast.Return) and sub.value is not None and depth <= MAX_CHAIN:
                    found |= _made_by(module, sub.value, factory, constructions, depth + 1) or _held(
                        module, text(sub.value), factory, constructions, depth + 1)
        return found
    if isinstance(value, (ast.Name, ast.Attribute)):
        return _held(module, text(value), function, constructions, depth)
    return set()


def _class_of(module: Module, node: ast.AST | None) -> ast.ClassDef | None:
    return None if node is None else next((p for p in module.ancestors(node) if isinstance(p, ast.ClassDef)), None)


def _function_name(module: Module, node: ast.AST) -> str | None:
    """The function ``node`` is in, with its class: ``Engine.build``; None at the module's top level."""
    function = module.enclosing_function(node)
    if function is None:
        return None
    owner = _class_of(module, function)
    return f"{owner.name}.{function.name}" if owner is not None else function.name


def _paths(module: Module, node: ast.AST, program: Program | None, depth: int,
           seen: frozenset[ast.AST] = frozenset()) -> list[tuple[list[SourceLocation], str | None]]:
    """The calls that lead to ``node``, outermost first, and the function the outermost is in: one
    path per caller, in the module and in the others read, at most MAX_PATHS of MAX_CHAIN calls
    (taken from each caller in turn, so that every caller of the Config's function leads one).
    Where some callers are reached from a module's top level, only those lead a path."""
    here = module.location(node)
    function = module.enclosing_function(node)
    if function is None:
        return [([here], None)]
    sites = [(module, call) for call, _ in callers(module, function)]
    if program is not None:
        sites = [(other, call) for other, call, _ in program.external_callers(module, function)] + sites
        sites = [(other, call) for other, call in sites if program.runs(other, call)]
        sites = [(other, call) for other, call in sites if program.reached(other, call)] or sites
    if not sites or depth >= MAX_CHAIN or function in seen:
        return [([here], _function_name(module, function.body[0]))]
    each = [_paths(caller_module, call, program, depth + 1, seen | {function}) for caller_module, call in sites]
    found = [(outer + [here], caller) for paths in zip_longest(*each) for path in paths if path is not None
             for outer, caller in [path]]  # each caller's first path, then each one's second...
    return found[:MAX_PATHS]


def _holders(module: Module, constructions: list[ast.Call]) -> set[str]:
    """Expressions (``config``, ``self.config``) that hold a Config somewhere in the module."""
    makers: set[ast.Call] = set(constructions)
    holders: set[str] = set()
    factories: set[str] = set()
    while True:
        before = (len(holders), len(factories))
        for node in ast.walk(module.tree):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None and _makes_config(node.value, makers, factories):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                holders.update(text(target) for target in targets)
            elif isinstance(node, FUNCTIONS) and any(
                    isinstance(sub, ast.Return) and sub.value is not None
                    and (text(sub.value) in holders or _makes_config(sub.value, makers, factories))
                    for sub in ast.walk(node)):
                factories.add(node.name)
        for functions in module.functions.values():
            for function in functions:
                for call, skipped in callers(module, function):
                    holders.update(_parameters_given_a_config(function, call, skipped, holders))
        if (len(holders), len(factories)) == before:
            return holders


def _makes_config(value: ast.expr, makers: set[ast.Call], factories: set[str]) -> bool:
    if value in makers:
        return True
    if isinstance(value, ast.IfExp):
        return _makes_config(value.body, makers, factories) or _makes_config(value.orelse, makers, factories)
    if isinstance(value, ast.Call):
        func = value.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return name in factories
    return False


def _parameters_given_a_config(function: Function, call: ast.Call, skipped: int, holders: set[str]) -> set[str]:
    names = [arg.arg for arg in function.args.posonlyargs + function.args.args]
    found = set()
    for position, name in enumerate(names[skipped:], start=skipped):
        passed = argument(call, position - skipped, name)
        if passed is not None and text(passed) in holders:
            found.add(name)
    return found


def _settings(module: Module, evaluator: Evaluator, call: ast.Call, setters: tuple[tuple[str, Setter], ...]) -> list[SourceSetting]:
    found = []
    for setting, setter in setters:
        spec = setter.argument
        passed = argument(call, spec.position, spec.keyword) if spec is not None else None
        if spec is not None and passed is None and spec.default is None:
            continue
        if passed is None:
            result = Evaluation(setter.fixed if spec is None else spec.default, True)
        elif setting == "tensorrt.precision":
            result = _trt_precision(passed)
        else:
            result = evaluator.evaluate(passed)
        value = result.value if result.known else None
        if isinstance(value, ModulePath):
            value = value.path
        if isinstance(value, Enum):  # a word of the table: the source says its value
            value = value.value
        if spec is not None and spec.convert is not None and passed is not None:  # it converts a number of the kind the parameter takes
            value = spec.convert(value) if isinstance(value, int) and not isinstance(value, bool) else None
        if not isinstance(value, (bool, int, str)):
            value = None
        found.append(SourceSetting(
            name=setting, value=value, evaluated=result.known, location=module.location(call), code=text(call),
            env_var=result.env_var, env_default=result.env_default, env_live=result.env_live,
            host_cpu_count=result.host_cpu_count,
        ))
    return found
