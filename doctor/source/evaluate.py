"""Values of the expressions a service passes to its Config, worked out from the source alone.

What can be evaluated: literals, names assigned once (in the function, then the module), a
helper's parameters where every call site in the module agrees (else its default),
``os.environ.get(NAME, default)`` / ``os.getenv`` / ``os.environ[NAME]`` (the live value when the
process environment is known, else the default; with no default, an unset variable is None),
``a or b``, ``a and b``, ``not a``, comparisons, ``x[key]`` and ``x.get(key, default)`` of a
mapping, a module function's single ``return``, values of a YAML or JSON file the module opens by a
path built from its own ``__file__`` (``doctor/source/datafiles.py``), ``int``/``float``/``str``/``bool`` of those,
arithmetic on numbers (each value within MOST of zero: ``2 ** 20000`` is never computed, and
unknown), an attribute ``self.name`` every method of the class assigns the same value,
and ``args.name`` where ``args`` holds parsed arguments, however a wrapper hands them down
(``doctor/source/namespaces.py``). Anything else is unknown: the doctor never guesses. An
expression that counts the host's CPUs (``os.cpu_count()``) is unknown and says so.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from ..base.redact import REDACTED
from . import branches as flow
from . import namespaces
from .attributes import assigned_to_self, callers
from .changes import changed
from .datafiles import (
    LOADERS,
    OPENERS,
    PATH_CLASSES,
    PATH_FUNCTIONS,
    PATH_METHODS,
    ModulePath,
    load,
    path_attribute,
    path_function,
)
from .module import FUNCTIONS, Function, Module, literal, passed_for, rebinding
from .service_program import Program
from .values import NOT_KNOWN, UNKNOWN, Evaluation, unknown_of

ENV_GETTERS = ("os.environ.get", "os.getenv")
ENV_MAPPING = "os.environ"
HOST_CPU_COUNTERS = ("os.cpu_count", "multiprocessing.cpu_count", "psutil.cpu_count", "joblib.cpu_count")
CONVERSIONS = {"int": int, "float": float, "str": str, "bool": bool}
COMPARISONS = {ast.Eq: operator.eq, ast.NotEq: operator.ne, ast.Lt: operator.lt, ast.LtE: operator.le,
               ast.Gt: operator.gt, ast.GtE: operator.ge, ast.Is: operator.is_, ast.IsNot: operator.is_not}
OPERATORS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
             ast.LShift: operator.lshift, ast.Pow: operator.pow}
MAX_DEPTH = 32
MOST = 1 << 63  # past int64, more than any Config setting takes: a number this large or larger is unknown
MOST_BITS = MOST.bit_length()


class Evaluator:
    """Works out expressions of one module; with a ``program``, arguments passed from the other
    modules read are followed, each in an evaluator of its own module (one per module, shared)."""

    def __init__(self, module: Module, environ: dict[str, str] | None, program: Program | None = None,
                 shared: dict[str, Evaluator] | None = None):
        self.module = module
        self.environ = environ
        self.program = program
        self.shared = shared if shared is not None else {}
        self.shared.setdefault(module.file, self)
        self._known: dict[ast.AST, Evaluation] = {}
        self.memo: dict[tuple[Any, ...], Any] = {}  # what namespaces.py works out once per expression

    def of(self, module: Module) -> Evaluator:
        """The evaluator of another module of the program."""
        return self.shared.get(module.file) or Evaluator(module, self.environ, self.program, self.shared)

    def sites(self, function: ast.FunctionDef | ast.AsyncFunctionDef, depth: int = 0) -> list[tuple[Evaluator, ast.Call, int]]:
        """Every call of ``function``, in this module and the others read, with the evaluator of the caller's module."""
        found = [(self, call, skipped) for call, skipped in callers(self.module, function)]
        if self.program is not None:
            found.extend((self.of(module), call, skipped) for module, call, skipped in self.program.external_callers(self.module, function))
            found = [site for site in found if self.program.runs(site[0].module, site[1])]
            reached = [site for site in found if self.program.reached(site[0].module, site[1])]
            found = reached or found  # calls known to run, where there are: not a console script's
        return [site for site in found if site[0].may_run(site[1], depth)]

    def may_run(self, call: ast.Call, depth: int) -> bool:
        """Whether a call of this module is not in a branch known not to run (worked out once per call)."""
        key = ("runs", call)
        if key not in self.memo:
            self.memo[key] = True  # a condition that depends on this very call: not known to be false
            self.memo[key] = flow.branch_condition(self.module, self, call, depth + 1)[1] is not False
        return self.memo[key]

    def evaluate(self, node: ast.expr | None, depth: int = 0) -> Evaluation:
        """Each expression is worked out once; one met again while it is being worked out (``a = b``,
        ``b = a``) is unknown there."""
        if node is None or depth > MAX_DEPTH:
            return UNKNOWN
        self.module.in_time()  # evaluating counts against the read's time, as reading does
        if node not in self._known:
            self._known[node] = UNKNOWN
            result = self._evaluate(node, depth)
            self._known[node] = result if not result.known or within_range(result.value) else replace(result, value=None, known=False)
        return self._known[node]

    def _evaluate(self, node: ast.expr, depth: int) -> Evaluation:
        if isinstance(node, ast.Constant):
            return Evaluation(literal(node.value), True)
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        if isinstance(node, ast.Subscript):
            return self._subscript(node, depth)
        if isinstance(node, ast.UnaryOp):
            return self._unary(node, depth)
        if isinstance(node, ast.BinOp):
            return self._binary(node, depth)
        if isinstance(node, ast.BoolOp):
            return self._first_truthy(node, depth) if isinstance(node.op, ast.Or) else self._first_falsy(node, depth)
        if isinstance(node, ast.Compare):
            return self._compare(node, depth)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, depth)
        return self._unknown(node)

    def _subscript(self, node: ast.Subscript, depth: int) -> Evaluation:
        """``os.environ[NAME]``, ``mapping[key]``, or ``holder[key]`` of a parameter its callers pass mappings for."""
        if self.module.canonical(node.value) == ENV_MAPPING:
            return self._environment(self.evaluate(node.slice, depth + 1), None)
        container, key = self.evaluate(node.value, depth + 1), self.evaluate(node.slice, depth + 1)
        if not container.known and key.known and _literal(key.value):
            at_each_call = self._per_call(node.value, lambda passed: ast.Subscript(passed, ast.Constant(key.value), ast.Load()), depth)
            if at_each_call is not None:
                return at_each_call
        return self._item(container, key, None)

    def _unary(self, node: ast.UnaryOp, depth: int) -> Evaluation:
        """``-a`` and ``not a``."""
        if not isinstance(node.op, (ast.USub, ast.Not)):
            return self._unknown(node)
        inner = self.evaluate(node.operand, depth + 1)
        if not inner.known:
            return inner
        return replace(inner, value=-inner.value if isinstance(node.op, ast.USub) else not inner.value)

    def _binary(self, node: ast.BinOp, depth: int) -> Evaluation:
        """Arithmetic on numbers, and ``path / "name"`` of a known path."""
        if isinstance(node.op, ast.Div):
            left, right = self.evaluate(node.left, depth + 1), self.evaluate(node.right, depth + 1)
            if left.known and isinstance(left.value, ModulePath) and left.value.as_path and right.known and isinstance(right.value, str):
                return Evaluation(left.value / right.value, True)
        if type(node.op) in OPERATORS:
            return self._arithmetic(node, depth)
        return self._unknown(node)

    def _item(self, container: Evaluation, key: Evaluation, default: Evaluation | None) -> Evaluation:
        """``container[key]``, or ``container.get(key, default)`` when ``default`` is given."""
        if not (container.known and key.known):
            return unknown_of([container, key])
        value = container.value
        try:
            if isinstance(value, dict) and key.value not in value and default is not None:
                return default
            if isinstance(value, (dict, list)):
                return Evaluation(value[key.value], True) if value[key.value] is not NOT_KNOWN else UNKNOWN
        except (KeyError, IndexError, TypeError):
            pass
        return UNKNOWN

    def _opened(self, node: ast.expr, depth: int) -> Evaluation:
        """The path of ``open(PATH)``, or of the file a ``with open(PATH) as name`` bound to ``name``."""
        if isinstance(node, ast.Name):
            function = self.module.enclosing_function(node)
            for sub in ast.walk(function or self.module.tree):
                if isinstance(sub, (ast.With, ast.AsyncWith)):
                    for item in sub.items:
                        if isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == node.id:
                            return self._opened(item.context_expr, depth + 1)
            return UNKNOWN
        if isinstance(node, ast.Call) and self.module.canonical(node.func) in OPENERS and node.args:
            return self.evaluate(node.args[0], depth + 1)
        return UNKNOWN

    def _returned(self, function: Function, node: ast.Call, depth: int) -> Evaluation:
        """What a function of this module returns when called, when it has a single ``return``; a
        mapping it changes on the way (``config["Det"]["model_path"] = ...``) has what it changes not known."""
        returns = [sub for sub in ast.walk(function) if isinstance(sub, ast.Return) and sub.value is not None]
        if len(returns) != 1:
            return self._unknown(node)
        result = self.evaluate(returns[0].value, depth + 1)
        if result.known and isinstance(result.value, (dict, list)):
            return changed(self, function, result, depth)
        return result

    def _attribute(self, node: ast.Attribute, depth: int) -> Evaluation:
        name = node.value.id if isinstance(node.value, ast.Name) else None
        if name in ("self", "cls"):
            values = assigned_to_self(self.module, node)
            if not values:
                return self._unknown(node)
            results = [self.evaluate(value, depth + 1) for value in values]
            return results[0] if all(result == results[0] for result in results) else unknown_of(results)
        passed_down = namespaces.argument(self, node, depth)
        if passed_down is not None:
            return passed_down
        path = path_attribute(self.evaluate(node.value, depth + 1).value, node.attr)
        return Evaluation(path, True) if path is not None else self._unknown(node)

    def modules(self) -> list[Module]:
        """The modules read with this one: the program's, or this one alone."""
        return list(self.program.modules.values()) if self.program is not None else [self.module]

    def function_called(self, node: ast.Call) -> tuple[Evaluator, Function] | None:
        """The function a call calls, with the evaluator of its module: one of this module's by its
        name, or one another module read defines."""
        if isinstance(node.func, ast.Name) and node.func.id in self.module.functions:
            functions = self.module.functions[node.func.id]
            return (self, functions[0]) if len(functions) == 1 else None
        definition = self.program.definition(self.module, node.func) if self.program is not None else None
        if definition is not None and isinstance(definition[1], FUNCTIONS):
            return self.of(definition[0]), definition[1]
        return None

    def _compare(self, node: ast.Compare, depth: int) -> Evaluation:
        if not all(type(op) in COMPARISONS for op in node.ops):
            return self._unknown(node)
        operands = [self.evaluate(operand, depth + 1) for operand in [node.left, *node.comparators]]
        if not all(operand.known for operand in operands):
            return unknown_of(operands)
        try:
            holds = all(COMPARISONS[type(op)](left.value, right.value)
                        for op, left, right in zip(node.ops, operands, operands[1:]))
        except TypeError:
            return UNKNOWN
        return Evaluation(holds, True)

    def _first_falsy(self, node: ast.BoolOp, depth: int) -> Evaluation:
        """``a and b``: known as soon as one operand is known falsy, or when all are known."""
        results = []
        for value in node.values:
            result = self.evaluate(value, depth + 1)
            if result.known and not result.value:
                return result
            results.append(result)
        return results[-1] if all(result.known for result in results) else unknown_of(results)

    def _unknown(self, node: ast.AST) -> Evaluation:
        counts_cpus = any(isinstance(sub, ast.Call) and self.module.canonical(sub.func) in HOST_CPU_COUNTERS
                          for sub in ast.walk(node))
        return Evaluation(host_cpu_count=counts_cpus)

    def _name(self, node: ast.Name, depth: int) -> Evaluation:
        if node.id == "__file__" and not self.assigned("__file__", None):
            return Evaluation(ModulePath.of_module(self.module.file), True)
        function = self.module.enclosing_function(node)
        if function is not None and node.id in {arg.arg for arg in function.args.args + function.args.kwonlyargs}:
            return self._parameter(function, node.id, depth)
        if function is not None and function.args.kwarg is not None and node.id == function.args.kwarg.arg:
            return self._keywords(function, depth)
        values = self.assigned(node.id, function)
        if values and function is not None:
            values = flow.reaching(self, node.id, node, function.body, depth) or values  # those that reach this use
        values = values or (self.assigned(node.id, None) if function is not None else [])
        if not values:
            return UNKNOWN
        results = [self.evaluate(value, depth + 1) for value in values]
        return results[0] if all(result == results[0] for result in results) else UNKNOWN

    def _keywords(self, function: Function, depth: int) -> Evaluation:
        """A function's ``**kwargs``: the keywords every caller passes beyond the named parameters
        ({} where none calls it); not known where callers differ or one passes a ``**`` of its own."""
        named = {arg.arg for arg in function.args.posonlyargs + function.args.args + function.args.kwonlyargs}
        results = []
        for evaluator, call, _ in self.sites(function, depth):
            if any(keyword.arg is None for keyword in call.keywords):
                return UNKNOWN
            given = {keyword.arg: evaluator.evaluate(keyword.value, depth + 1) for keyword in call.keywords if keyword.arg not in named}
            if not all(value.known for value in given.values()):
                return UNKNOWN
            results.append({name: value.value for name, value in given.items()})
        if not results:
            return Evaluation({}, True)
        return Evaluation(results[0], True) if all(result == results[0] for result in results) else UNKNOWN

    def _per_call(self, holder: ast.expr, rebuild: Callable[[ast.expr], ast.expr], depth: int) -> Evaluation | None:
        """``holder[key]`` or ``holder.get(...)`` where ``holder`` is a parameter its callers pass
        different mappings for: worked out at each call (``rebuild`` makes the expression there);
        known where they all agree. None where ``holder`` is no such parameter."""
        function = self.module.enclosing_function(holder)
        if (not isinstance(holder, ast.Name) or function is None or depth > MAX_DEPTH
                or holder.id not in {arg.arg for arg in function.args.args + function.args.kwonlyargs}
                or self.assigned(holder.id, function)):
            return None
        results = []
        for evaluator, call, skipped in self.sites(function, depth):
            passed = passed_for(call, skipped, function, holder.id)
            if passed is None:
                return None
            results.append(evaluator.evaluate(rebuild(passed), depth + 1))
        if not results:
            return None
        return results[0] if all(result == results[0] for result in results) else unknown_of(results)

    def assigned(self, name: str, function: ast.AST | None) -> list[ast.expr]:
        """Every value assigned to ``name`` directly in the function (or the module's top level);
        none when the name is also bound another way there (``+=``, a loop, unpacking, ``global``
        in a function, an import...), which would make any of those values a guess."""
        scope = function or self.module.tree
        if self._rebound_otherwise(name, function):
            return []
        values = []
        for node in ast.walk(scope):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and self.module.enclosing_function(node) is function:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(target, ast.Name) and target.id == name for target in targets) and node.value is not None:
                    values.append(node.value)
        return values

    def _rebound_otherwise(self, name: str, function: ast.AST | None) -> bool:
        """Whether ``name`` is declared global or nonlocal in ``function`` (or the module's top level), or
        bound there by a statement other than an assignment to it whole."""
        for node in ast.walk(function or self.module.tree):
            if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return True
            if self.module.enclosing_function(node) is function and _binds_otherwise(node, name):
                return True
        return False

    def _parameter(self, function: ast.FunctionDef | ast.AsyncFunctionDef, name: str, depth: int) -> Evaluation:
        sites = self.sites(function, depth)
        default = _default(function, name)
        results = []
        for evaluator, call, skipped in sites:
            expression = passed_for(call, skipped, function, name)
            if expression is None:
                results.append(self.evaluate(default, depth + 1) if default is not None else UNKNOWN)
            else:
                results.append(evaluator.evaluate(expression, depth + 1))
        if not sites:
            return self.evaluate(default, depth + 1) if default is not None else UNKNOWN
        return results[0] if all(result == results[0] for result in results) else UNKNOWN

    def _call(self, node: ast.Call, depth: int) -> Evaluation:
        """A call the reading knows (each of :meth:`_call_rules`, in turn, until one says its value), else
        what the function it calls returns (one of this module's by its name, or another module's)."""
        name = self.module.canonical(node.func)
        for rule in self._call_rules():
            result = rule(node, name, depth)
            if result is not None:
                return result
        called = self.function_called(node)
        return called[0]._returned(called[1], node, depth) if called is not None else self._unknown(node)

    def _call_rules(self) -> tuple[Callable[[ast.Call, str | None, int], Evaluation | None], ...]:
        """The calls the reading knows, each saying its value or None where it is not that call (or says nothing)."""
        return (self._loaded, self._path_made, self._path_method, self._got, self._path_text, self._from_environment,
                self._converted, self._has_argument)

    def _loaded(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``yaml.safe_load(f)`` / ``json.load(f)`` of a file the module opens by a path it builds."""
        if name not in LOADERS or not node.args:
            return None
        path = self._opened(node.args[0], depth + 1)
        document = load(path.value, LOADERS[name]) if path.known else None
        return Evaluation(document, True) if document is not None else self._unknown(node)

    def _path_made(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``Path(...)``, ``os.path.join(...)`` and the like of known parts."""
        if name not in PATH_CLASSES + PATH_FUNCTIONS or not node.args or node.keywords:
            return None
        values = [self.evaluate(arg, depth + 1) for arg in node.args]
        if not all(value.known for value in values):
            return None
        built = (values[0].value.moved(values[0].value.path, True) if name in PATH_CLASSES and len(values) == 1
                 and isinstance(values[0].value, ModulePath) else path_function(name, [v.value for v in values]))
        return Evaluation(built, True) if built is not None else None

    def _path_method(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``path.resolve()`` and the like of a known path."""
        if not (isinstance(node.func, ast.Attribute) and node.func.attr in PATH_METHODS and not node.args):
            return None
        value = path_attribute(self.evaluate(node.func.value, depth + 1).value, node.func.attr)
        return Evaluation(value, True) if value is not None else None

    def _got(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``mapping.get(key, default)`` of a known mapping, or of a parameter its callers pass mappings for."""
        if not (isinstance(node.func, ast.Attribute) and node.func.attr == "get" and 1 <= len(node.args) <= 2
                and name != ENV_MAPPING + ".get"):
            return None
        container = self.evaluate(node.func.value, depth + 1)
        default = self.evaluate(node.args[1], depth + 1) if len(node.args) == 2 else Evaluation(None, True)
        key = self.evaluate(node.args[0], depth + 1)
        if container.known and isinstance(container.value, dict):
            return self._item(container, key, default)
        if container.known or not (key.known and default.known and _literal(key.value) and _literal(default.value)):
            return None
        return self._per_call(node.func.value, lambda passed: ast.Call(
            ast.Attribute(passed, "get", ast.Load()), [ast.Constant(key.value), ast.Constant(default.value)], []), depth)

    def _path_text(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``str(path)`` of a known path."""
        if name != "str" or len(node.args) != 1:
            return None
        inner = self.evaluate(node.args[0], depth + 1)
        return Evaluation(inner.value.moved(inner.value.path, False), True) if inner.known and isinstance(inner.value, ModulePath) else None

    def _from_environment(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``os.environ.get(NAME, default)`` and ``os.getenv(NAME, default=...)``."""
        if name not in ENV_GETTERS or not node.args:
            return None
        fallback = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "default"), None)
        return self._environment(self.evaluate(node.args[0], depth + 1),
                                 self.evaluate(fallback, depth + 1) if fallback is not None else None)

    def _converted(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``int(x)``, ``float(x)``, ``str(x)`` and ``bool(x)`` of a known value."""
        if name not in CONVERSIONS or len(node.args) != 1 or node.keywords:
            return None
        inner = self.evaluate(node.args[0], depth + 1)
        if not inner.known:
            return inner
        try:
            return replace(inner, value=_convert(CONVERSIONS[name], inner.value))
        except (TypeError, ValueError):
            return replace(inner, value=None, known=False)

    def _has_argument(self, node: ast.Call, name: str | None, depth: int) -> Evaluation | None:
        """``hasattr(args, "name")`` of parsed arguments."""
        if name != "hasattr" or len(node.args) != 2 or not (isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)):
            return None
        has = namespaces.has_argument(self, node.args[0], node.args[1].value, depth)
        return Evaluation(has, True) if has is not None else None

    def _environment(self, variable: Evaluation, fallback: Evaluation | None) -> Evaluation:
        if not (variable.known and isinstance(variable.value, str)):
            return UNKNOWN
        default = None if fallback is None or not fallback.known else fallback.value
        live = None if self.environ is None else self.environ.get(variable.value)
        shown_default = None if default is None else str(default)
        base = Evaluation(env_var=variable.value, env_default=shown_default, env_live=live,
                          host_cpu_count=bool(fallback and fallback.host_cpu_count))
        if live is not None and REDACTED not in live:
            return replace(base, value=live, known=True)
        if live is None and fallback is not None and fallback.known:
            return replace(base, value=default, known=True)
        if live is None and fallback is None:
            return replace(base, value=None, known=True)
        return base

    def _arithmetic(self, node: ast.BinOp, depth: int) -> Evaluation:
        left, right = self.evaluate(node.left, depth + 1), self.evaluate(node.right, depth + 1)
        numbers = all(result.known and isinstance(result.value, (int, float)) and not isinstance(result.value, bool)
                      for result in (left, right))
        if not numbers:
            return Evaluation(host_cpu_count=left.host_cpu_count or right.host_cpu_count)
        if past_range(node.op, left.value, right.value):
            return UNKNOWN
        try:
            value = OPERATORS[type(node.op)](left.value, right.value)
        except (ArithmeticError, ValueError):
            return UNKNOWN
        carrier = left if left.env_var else right
        return replace(carrier, value=value, known=True)

    def _first_truthy(self, node: ast.BoolOp, depth: int) -> Evaluation:
        """``a or b``; an environment variable read in ``a`` stays named, with ``b`` as its default."""
        variable = None
        for value in node.values:
            result = self.evaluate(value, depth + 1)
            if not result.known or result.value:
                break
            variable = variable or (result if result.env_var else None)
        if variable is not None and not result.env_var:
            default = variable.env_default if variable.env_default is not None else (None if result.value is None else str(result.value))
            result = replace(result, env_var=variable.env_var, env_default=default, env_live=variable.env_live)
        return result


def within_range(value: Any) -> bool:
    """Whether a number is one a Config setting could take: finite, and within MOST of zero (anything else is)."""
    if isinstance(value, float):
        return math.isfinite(value) and abs(value) < MOST
    return not isinstance(value, int) or -MOST < value < MOST


def past_range(op: ast.operator, left: float, right: float) -> bool:
    """Whether ``left ** right`` or ``left << right`` of integers would be past MOST, told from the
    operands' sizes without computing it (``9 ** 9 ** 9`` would take minutes, ``1 << 10 ** 10`` a gigabyte)."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return False  # a float overflows at once, and says so
    if isinstance(op, ast.Pow):  # |left| ** right >= 2 ** ((bits - 1) * right)
        return abs(left) > 1 and right > 0 and (abs(left).bit_length() - 1) * right >= MOST_BITS
    if isinstance(op, ast.LShift):
        return left != 0 and right > 0 and left.bit_length() + right > MOST_BITS
    return False


def _literal(value: Any) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _default(function: ast.FunctionDef | ast.AsyncFunctionDef, name: str) -> ast.expr | None:
    positional = function.args.posonlyargs + function.args.args
    defaults = dict(zip([arg.arg for arg in positional][len(positional) - len(function.args.defaults):], function.args.defaults))
    defaults.update({arg.arg: value for arg, value in zip(function.args.kwonlyargs, function.args.kw_defaults) if value is not None})
    return defaults.get(name)


def _convert(kind: type, value: Any) -> Any:
    if kind is bool and isinstance(value, str):
        raise ValueError("bool() of a string is True for any non-empty text")
    if kind is int and isinstance(value, str):
        return int(value.strip())
    return kind(value)


def _binds_otherwise(node: ast.AST, name: str) -> bool:
    """Whether the statement ``node`` binds ``name`` other than by assigning to it whole: importing it,
    deleting it, or as the target of ``+=``, a loop, a walrus or a ``with``, or an item unpacked."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((alias.asname or alias.name.split(".")[0]) == name for alias in node.names)
    bound = list(node.targets) if isinstance(node, ast.Delete) else rebinding(node)
    return any(isinstance(target, ast.Name) and target.id == name and not isinstance(target.ctx, ast.Load) for target in bound)
