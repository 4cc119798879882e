"""The wrappers the recording hook puts around ``paddle.inference`` (see :mod:`.hook`): each does
what the original does and returns what it returns, and records the predictors it builds or runs
into the recorder's :class:`~.live.Process`."""

from __future__ import annotations

import os
import sys
from types import ModuleType
from typing import Any

from ..base.vocabulary import BuiltBy
from ..facts.recorded import BuildSite
from .callers import build_site
from .live import Process
from .settings_read import read_config, remember_setters
from .writer import Writer

HOLDERS = ("paddle.inference", "paddle.base.core")
CHANGING = ("reshape", "share_external_data", "share_external_data_by_ptr_name")  # what changes an input handle but a copy
TEXT = 200


def wrapped(inference: ModuleType) -> Process:
    """The recorder's state, with ``inference``'s predictors wrapped to record into it."""
    process = Process()
    try:
        _wrap(process, inference)
    except Exception as exc:  # a Paddle whose module looks different: recorded, the service runs
        process.failed(f"cannot wrap paddle.inference: {exc!r}"[:TEXT])
    return process


def _wrap(process: Process, inference: ModuleType) -> None:
    predictor_class, config_class = inference.Predictor, inference.Config
    remember_setters(config_class, process.failed)
    predictor_class.run = process.recorded_run(predictor_class.run)
    predictor_class.clone = _recorded_clone(process, predictor_class.clone)
    predictor_class.get_output_handle = _recorded_output(process, predictor_class.get_output_handle)
    inference.Tensor.copy_from_cpu = process.recorded_copy(inference.Tensor.copy_from_cpu)
    for name in CHANGING:
        if hasattr(inference.Tensor, name):
            setattr(inference.Tensor, name, process.recorded_change(getattr(inference.Tensor, name)))
    create, pool = inference.create_predictor, inference.PredictorPool
    wrapped = {id(create): _recorded_create(process, create), id(pool): _recorded_pool(process, pool)}
    for name in HOLDERS:
        holder = sys.modules.get(name)
        for attribute in ("create_predictor", "PredictorPool"):
            value = getattr(holder, attribute, None)
            if id(value) in wrapped:
                setattr(holder, attribute, wrapped[id(value)])
    writer = Writer(process)
    process.on_first_predictor = writer.start
    os.register_at_fork(after_in_child=writer.forked)


def _seen(process: Any, config: Any) -> tuple[Any, Any, Any] | None:
    """The configuration, model and build site of a predictor about to be built from ``config``."""
    try:
        recorded, model, threads_set_at = read_config(config, process.failed)
        return recorded, model, build_site(threads_set_at)
    except Exception as exc:
        process.failed(f"reading the Config: {exc!r}"[:TEXT])
        return None


def _add(process: Any, predictor: Any, built_by: str, seen: tuple[Any, Any, Any] | None, **more: Any) -> None:
    try:
        config, model, site = seen if seen is not None else (None, None, BuildSite(None, None))
        process.add(predictor, BuiltBy(built_by), config, model, site, **more)
    except Exception as exc:
        process.failed(f"recording a predictor: {exc!r}"[:TEXT])


def _recorded_create(process: Any, original: Any) -> Any:
    def create_predictor(config: Any, *args: Any, **kwargs: Any) -> Any:
        seen = _seen(process, config)
        predictor = original(config, *args, **kwargs)
        _add(process, predictor, "create_predictor", seen)
        return predictor

    create_predictor.__doc__ = getattr(original, "__doc__", None)
    return create_predictor


def _recorded_output(process: Any, original: Any) -> Any:
    def get_output_handle(predictor: Any, *args: Any, **kwargs: Any) -> Any:
        handle = original(predictor, *args, **kwargs)
        try:
            process.asked_output(predictor)
        except Exception as exc:
            process.failed(f"noting get_output_handle: {exc!r}"[:TEXT])
        return handle

    get_output_handle.__doc__ = getattr(original, "__doc__", None)
    return get_output_handle


def _recorded_clone(process: Any, original: Any) -> Any:
    def clone(predictor: Any, *args: Any, **kwargs: Any) -> Any:
        child = original(predictor, *args, **kwargs)
        try:
            parent = process.live_of(predictor)
            _add(process, child, "clone", (parent.config, parent.model, build_site(parent.site.threads_set_at)),
                 clone_of=parent)
        except Exception as exc:
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
            except Exception as exc:
                process.failed(f"recording a pool: {exc!r}"[:TEXT])

    PredictorPool.__module__ = original.__module__
    return PredictorPool
