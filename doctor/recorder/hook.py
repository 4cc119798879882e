"""The recording hook: when ``paddle.inference`` is first imported (by the service, never by this
module), ``create_predictor``, ``PredictorPool``, ``Predictor.clone`` and ``Predictor.run`` are
wrapped, in ``paddle.inference`` and in ``paddle.base.core`` where they come from, before anyone
can take a name from either: ``from paddle.inference import create_predictor`` gets the wrapper.
``run`` and ``clone`` are wrapped on the Predictor class (``copy_from_cpu``, and what else changes
an input handle, ``reshape`` and ``share_external_data``, on the Tensor class), so every predictor is
counted however it was reached. Each wrapper does what the original does and returns what it returns; the recorder's
own failures are kept in the record, never raised.

This module is all a service started with recording on imports until it imports ``paddle.inference``;
the wrappers are :mod:`.wrapping`'s.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import os
import sys
from types import ModuleType
from typing import Any

TARGET = "paddle.inference"
PADDLE = "paddle"
ENVIRONMENT: dict[str, str] | None = None  # the noted variables as the service began to import paddle


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
    """Finds nothing itself: it notes the environment as ``paddle`` is first looked for (before Paddle's
    own code runs and sets ``OMP_NUM_THREADS``), asks the finders after it for ``paddle.inference`` and
    puts a loader around theirs that wraps the module once it has run; then it leaves ``sys.meta_path``."""

    def find_spec(self, fullname: str, path: Any, target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != TARGET:
            if fullname == PADDLE:
                note_environment()
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


def note_environment() -> None:
    """The thread variables and FLAGS_* as the process sees them now, kept the first time only (bounded
    and redacted as the record is written: nothing more is imported as the service imports Paddle)."""
    global ENVIRONMENT
    if ENVIRONMENT is None:
        ENVIRONMENT = {name: value for name, value in os.environ.items() if name.endswith("_NUM_THREADS") or name.startswith("FLAGS_")}


def install() -> None:
    """Wrap ``paddle.inference`` when it is imported (now, if it already was)."""
    inference = sys.modules.get(TARGET)
    if inference is not None:
        wrap_inference(inference)
    elif not any(isinstance(finder, InferenceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, InferenceFinder())


PROCESS: Any = None  # the recorder's state (record.live.Process) once paddle.inference is wrapped


def wrap_inference(inference: ModuleType) -> None:
    global PROCESS
    if PROCESS is not None:
        return
    from . import wrapping  # the boundary to Paddle: the rest of the recorder loads once paddle.inference does

    PROCESS = wrapping.wrapped(inference)
    PROCESS.environment = ENVIRONMENT
