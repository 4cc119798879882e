"""The ``paddle.inference.Config`` objects a module builds and the settings made on them.

A Config is followed through assignments (``config = Config(...)``, ``self.config = ...``),
factory functions that return one, and helpers it is passed to (``tune(config)`` makes the
helper's parameter a Config too), so a setting made in a helper is found at its own line.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any, Callable

from ..facts import SourceLocation, SourceSetting
from .evaluate import Evaluation, Evaluator
from .module import FUNCTIONS, Module, argument, parameter_position, text

CONFIG_CLASSES = ("paddle.inference.Config", "paddle.inference.AnalysisConfig", "paddle_infer.Config")
TRT_PRECISIONS = {"Float32": "fp32", "Half": "fp16", "Int8": "int8", "Bfloat16": "bf16"}


@dataclass(frozen=True)
class Argument:
    """A Config method's parameter: its position, keyword and value when the call leaves it out."""

    setting: str
    position: int | None
    keyword: str
    default: Any = None
    convert: Callable[[Any], Any] | None = None


def _fixed(setting: str, value: Any) -> Argument:
    """A setting the call makes by being called (``disable_mkldnn()`` sets onednn False)."""
    return Argument(setting, None, "", value)


def _trt_precision(node: ast.expr) -> Evaluation:
    name = node.attr if isinstance(node, ast.Attribute) else None
    return Evaluation(TRT_PRECISIONS[name], True) if name in TRT_PRECISIONS else Evaluation()


METHODS: dict[str, tuple[Argument, ...]] = {
    "set_cpu_math_library_num_threads": (Argument("threads", 0, "cpu_math_library_num_threads"),),
    "enable_mkldnn": (_fixed("onednn", True),),
    "disable_mkldnn": (_fixed("onednn", False),),
    "set_mkldnn_cache_capacity": (Argument("onednn_cache_capacity", 0, "capacity"),),
    "enable_mkldnn_bfloat16": (_fixed("precision", "bf16"),),
    "switch_ir_optim": (Argument("ir_optim", 0, "x", True),),
    "switch_use_feed_fetch_ops": (Argument("feed_fetch_ops", 0, "x", True),),
    "enable_memory_optim": (_fixed("memory_optim", True),),
    "set_optim_cache_dir": (Argument("optim_cache_dir", 0, "opt_cache_dir"),),
    "enable_save_optim_model": (Argument("save_optim_model", 0, "save_optimized_model", True),),
    "use_optimized_model": (Argument("use_optimized_model", 0, "x", True),),
    "enable_use_gpu": (_fixed("device", "gpu"), Argument("gpu_memory_pool_mb", 0, "memory_pool_init_size_mb"),
                       Argument("gpu_device_id", 1, "device_id", 0)),
    "enable_tensorrt_engine": (_fixed("tensorrt.enabled", True),
                               Argument("tensorrt.workspace_mb", 0, "workspace_size", 1 << 30, lambda size: size >> 20),
                               Argument("tensorrt.max_batch_size", 1, "max_batch_size", 1),
                               Argument("tensorrt.min_subgraph_size", 2, "min_subgraph_size", 3),
                               Argument("tensorrt.precision", 3, "precision_mode", "fp32"),
                               Argument("tensorrt.use_static", 4, "use_static", False)),
}


@dataclass
class ModuleConfigs:
    """What one module does with Configs: where each is built, the expressions that hold one, the settings."""

    built: list[SourceLocation]
    holders: set[str]
    settings: list[SourceSetting]


def read_configs(module: Module, evaluator: Evaluator) -> ModuleConfigs:
    constructions = [call for call in module.calls() if module.canonical(call.func) in CONFIG_CLASSES]
    holders = _holders(module, constructions)
    settings = []
    for call in module.calls():
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in METHODS and text(func.value) in holders:
            settings.extend(_settings(module, evaluator, call, METHODS[func.attr]))
    return ModuleConfigs([module.location(call) for call in constructions], holders, settings)


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
                for call, skipped in module.call_sites(function):
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


def _parameters_given_a_config(function, call: ast.Call, skipped: int, holders: set[str]) -> set[str]:
    names = [arg.arg for arg in function.args.posonlyargs + function.args.args]
    found = set()
    for name in names[skipped:]:
        position = parameter_position(function, name)
        passed = argument(call, position - skipped, name)
        if passed is not None and text(passed) in holders:
            found.add(name)
    return found


def _settings(module: Module, evaluator: Evaluator, call: ast.Call, arguments: tuple[Argument, ...]) -> list[SourceSetting]:
    found = []
    for spec in arguments:
        passed = None if spec.position is None else argument(call, spec.position, spec.keyword)
        if spec.position is not None and passed is None and spec.default is None:
            continue
        if passed is None:
            result = Evaluation(spec.default, True)
        elif spec.setting == "tensorrt.precision":
            result = _trt_precision(passed)
        else:
            result = evaluator.evaluate(passed)
        value = result.value if result.known else None
        if value is not None and spec.convert is not None and passed is not None:
            value = spec.convert(value)
        if not isinstance(value, (bool, int, str)):
            value = None
        found.append(SourceSetting(
            name=spec.setting, value=value, evaluated=result.known, location=module.location(call), code=text(call),
            env_var=result.env_var, env_default=result.env_default, env_live=result.env_live,
            host_cpu_count=result.host_cpu_count,
        ))
    return found
