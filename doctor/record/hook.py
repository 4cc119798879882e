"""The recording hook: when ``paddle.inference`` is first imported (by the service, never by this
module), ``create_predictor``, ``PredictorPool``, ``Predictor.clone`` and ``Predictor.run`` are
wrapped, in ``paddle.inference`` and in ``paddle.base.core`` where they come from, before anyone
can take a name from either: ``from paddle.inference import create_predictor`` gets the wrapper.
``run`` and ``clone`` are wrapped on the Predictor class (``copy_from_cpu`` on the Tensor class), so every predictor is counted however it
was reached. Each wrapper does what the original does and returns what it returns; the recorder's
own failures are kept in the record, never raised.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
from types import ModuleType
from typing import Any

TARGET = "paddle.inference"
HOLDERS = ("paddle.inference", "paddle.base.core")
TEXT = 200


class _PatchingLoader(importlib.abc.Loader):
    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        self.loader.exec_module(module)
        wrap_inference(module)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.loader, name)


class InferenceFinder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: it asks the finders after it for ``paddle.inference`` and puts a loader
    around theirs that wraps the module once it has run; then it leaves ``sys.meta_path``."""

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            return None
        for finder in list(sys.meta_path):
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        else:
            return None
        if spec.loader is not None:
            spec.loader = _PatchingLoader(spec.loader)
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        return spec


def install() -> None:
    """Wrap ``paddle.inference`` when it is imported (now, if it already was)."""
    inference = sys.modules.get(TARGET)
    if inference is not None:
        wrap_inference(inference)
    elif not any(isinstance(finder, InferenceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, InferenceFinder())


PROCESS: Any = None


def wrap_inference(inference: ModuleType) -> None:
    global PROCESS
    if PROCESS is not None:
        return
    from .live import Process

    PROCESS = process = Process()
    try:
        _wrap(process, inference)
    except Exception as exc:  # noqa: BLE001 (a Paddle whose module looks different: recorded, the service runs)
        process.failed(f"cannot wrap paddle.inference: {exc!r}"[:TEXT])


def _wrap(process: Any, inference: ModuleType) -> None:
    from .live import recorded_copy, recorded_run
    from .settings_read import remember_setters
    from .writer import Writer

    predictor_class, config_class = inference.Predictor, inference.Config
    remember_setters(config_class, process.failed)
    predictor_class.run = recorded_run(process, predictor_class.run)
    predictor_class.clone = _recorded_clone(process, predictor_class.clone)
    inference.Tensor.copy_from_cpu = recorded_copy(inference.Tensor.copy_from_cpu)
    create, pool = inference.create_predictor, inference.PredictorPool
    wrapped = {id(create): _recorded_create(process, create), id(pool): _recorded_pool(process, pool)}
    for name in HOLDERS:
        holder = sys.modules.get(name)
        for attribute in ("create_predictor", "PredictorPool"):
            value = getattr(holder, attribute, None)
            if id(value) in wrapped:
                setattr(holder, attribute, wrapped[id(value)])
    process.on_first_predictor = Writer(process).start


def _seen(process: Any, config: Any) -> tuple[Any, Any, Any] | None:
    """The configuration, model and build site of a predictor about to be built from ``config``."""
    from .callers import build_site
    from .settings_read import read_config

    try:
        recorded, model, threads_set_at = read_config(config, process.failed)
        return recorded, model, build_site(threads_set_at)
    except Exception as exc:  # noqa: BLE001
        process.failed(f"reading the Config: {exc!r}"[:TEXT])
        return None


def _add(process: Any, predictor: Any, built_by: str, seen: tuple[Any, Any, Any] | None, **more: Any) -> None:
    from ..vocabulary import BuiltBy
    from .document import BuildSite

    try:
        config, model, site = seen if seen is not None else (None, None, BuildSite(None, None))
        process.add(predictor, BuiltBy(built_by), config, model, site, **more)
    except Exception as exc:  # noqa: BLE001
        process.failed(f"recording a predictor: {exc!r}"[:TEXT])


def _recorded_create(process: Any, original: Any) -> Any:
    def create_predictor(config: Any, *args: Any, **kwargs: Any) -> Any:
        seen = _seen(process, config)
        predictor = original(config, *args, **kwargs)
        _add(process, predictor, "create_predictor", seen)
        return predictor

    create_predictor.__doc__ = getattr(original, "__doc__", None)
    return create_predictor


def _recorded_clone(process: Any, original: Any) -> Any:
    def clone(predictor: Any, *args: Any, **kwargs: Any) -> Any:
        from .callers import build_site

        child = original(predictor, *args, **kwargs)
        try:
            parent = process.live_of(predictor)
            _add(process, child, "clone", (parent.config, parent.model, build_site(parent.site.threads_set_at)),
                 clone_of=parent)
        except Exception as exc:  # noqa: BLE001
            process.failed(f"recording a clone: {exc!r}"[:TEXT])
        return child

    clone.__doc__ = getattr(original, "__doc__", None)
    return clone


def _recorded_pool(process: Any, original: type) -> type:
    class PredictorPool(original):  # type: ignore[valid-type,misc]
        """Paddle's PredictorPool; its predictors are recorded, and held as long as the pool is."""

        def __init__(self, config: Any, size: int = 1, *args: Any, **kwargs: Any) -> None:
            seen = _seen(process, config)
            super().__init__(config, size, *args, **kwargs)
            self._recorded_members = []
            try:
                for index in range(int(size)):
                    member = self.retrieve(index)
                    _add(process, member, "pool", seen, pool_size=int(size))
                    self._recorded_members.append(member)
            except Exception as exc:  # noqa: BLE001
                process.failed(f"recording a pool: {exc!r}"[:TEXT])

    PredictorPool.__module__ = original.__module__
    return PredictorPool
