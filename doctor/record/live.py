"""The recorder's state in the service: one :class:`LivePredictor` per predictor built, and the
``run()`` wrapper that counts into it.

``run()`` pays for two ``perf_counter_ns`` calls, two histogram updates, one dictionary update for
its inputs, and a lock held for a few additions at entry and at exit (the concurrency counts); the
snapshot for the writer copies counters without that lock, so under concurrent runs a count may lag
by the runs in flight. Input shapes and dtypes are those ``Tensor.copy_from_cpu`` was given on the
same thread since its last ``run()`` (numpy attributes: cheap); a ``run()`` with none (inputs shared
with ``share_external_data``) reads its input handles' shapes, and their dtypes the first time a
shape is seen.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..vocabulary import BuiltBy
from .callers import build_site

if TYPE_CHECKING:
    from .document import BuildSite, ModelFiles, RecordedConfig

MAX_PREDICTORS = 64
MAX_SHAPES = 32
MAX_ERRORS = 8
MAX_PENDING = 64
BUCKETS = 64 << 3
PENDING = threading.local()  # .inputs: (shape, dtype) copied in on this thread since its last run()


def bucket(ns: int) -> int:
    """The histogram bucket of a duration: 8 buckets per power of two (12.5% wide), exact below 16 ns."""
    bits = ns.bit_length()
    return ns if bits <= 4 else (bits << 3) | ((ns >> (bits - 4)) & 7)


def bucket_middle_ns(index: int) -> float:
    if index < 16:
        return float(index)
    bits, sub = index >> 3, index & 7
    width = 1 << (bits - 4)
    return (8 + sub) * width + width / 2


def percentile_ns(counts: list[int], share: float) -> float | None:
    total = sum(counts)
    if not total:
        return None
    wanted, seen = share * total, 0
    for index, count in enumerate(counts):
        seen += count
        if count and seen >= wanted:
            return bucket_middle_ns(index)
    return None


class Process:
    """Process-wide: every predictor, the concurrency across them, the recorder's own failures."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.by_id: dict[int, LivePredictor] = {}
        self.predictors: list[LivePredictor] = []
        self.not_kept = 0
        self.inside_runs = 0
        self.inside_threads = 0
        self.peak_runs = 0
        self.peak_threads = 0
        self.errors: list[str] = []
        self.on_first_predictor: Callable[[], None] | None = None

    def failed(self, message: str) -> None:
        errors = self.errors
        errors.append(message)
        if len(errors) > MAX_ERRORS:
            del errors[0]

    def add(self, predictor: Any, built_by: Any, config: RecordedConfig | None, model: ModelFiles | None,
            site: BuildSite, clone_of: LivePredictor | None = None, pool_size: int | None = None) -> LivePredictor:
        with self.lock:
            first = not self.predictors
            if len(self.predictors) < MAX_PREDICTORS:
                live = LivePredictor(self, len(self.predictors), built_by, config, model, site, clone_of, pool_size)
                self.predictors.append(live)
            else:
                live = self._fold(built_by, config, site)
            self.by_id[id(predictor)] = live
        live.watch(predictor)
        if first and self.on_first_predictor is not None:
            self.on_first_predictor()
        return live

    def _fold(self, built_by: Any, config: RecordedConfig | None, site: BuildSite) -> LivePredictor:
        """Past :data:`MAX_PREDICTORS`: the kept predictor of the same build site and configuration counts
        one more, and runs into it; a new kind counts as not kept and runs into a predictor not listed."""
        for kept in self.predictors:
            if kept.config == config and kept.site == site and kept.built_by == built_by:
                kept.built += 1
                return kept
        self.not_kept += 1
        return LivePredictor(self, -1, built_by, config, None, site, None, None)

    def live_of(self, predictor: Any) -> LivePredictor:
        live = self.by_id.get(id(predictor))
        if live is None:
            live = self.add(predictor, BuiltBy.UNSEEN, None, None, build_site(None))
        return live


class LivePredictor:
    def __init__(self, process: Process, number: int, built_by: Any, config: RecordedConfig | None,
                 model: ModelFiles | None, site: BuildSite, clone_of: LivePredictor | None, pool_size: int | None) -> None:
        self.process = process
        self.number = number
        self.built_by = built_by
        self.config = config
        self.model = model
        self.site = site
        self.clone_of = clone_of.number if clone_of is not None else None
        self.pool_size = pool_size
        self.threads = config.cpu.threads if config is not None else 1
        self.built = 1
        self.alive = True
        self.handles: list[Any] | None = None
        self.input_names: list[str] = []
        self.latency = [0] * BUCKETS
        self.gaps = [0] * BUCKETS
        self.shapes: dict[tuple[Any, ...], int] = {}
        self.handle_dtypes: dict[tuple[Any, ...], tuple[str, ...]] = {}
        self.shapes_not_kept = 0
        self.first_run_ns: int | None = None
        self.first_start_ns = 0
        self.last_end_ns = 0
        self.busy_ns = 0
        self.inside = 0
        self.peak = 0

    def watch(self, predictor: Any) -> None:
        """Its input handles, read once; and when the service drops it, it is no longer alive."""
        try:
            self.input_names = [str(name)[:200] for name in predictor.get_input_names()]
            self.handles = [predictor.get_input_handle(name) for name in self.input_names]
        except Exception as exc:  # a predictor with feed/fetch ops, or one that cannot say
            self.process.failed(f"predictor {self.number} input handles: {exc!r}"[:200])
            self.handles = []
        try:
            weakref.finalize(predictor, self._dropped, id(predictor))
        except TypeError:
            pass

    def _dropped(self, key: int) -> None:
        self.alive = False
        if self.process.by_id.get(key) is self:
            del self.process.by_id[key]

    def inputs_of(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        if args:  # run(list of tensors)
            return tuple((tuple(tensor.shape), str(tensor.dtype)) for tensor in args[0])
        copied = getattr(PENDING, "inputs", None)
        if copied:
            PENDING.inputs = []
            return tuple(copied)
        return tuple((tuple(handle.shape()), None) for handle in self.handles or ())

    def dtypes_of(self, inputs: tuple[Any, ...]) -> list[str]:
        from_handles = self.handle_dtypes.get(inputs, ())
        return [str(dtype if dtype is not None else (from_handles[index] if index < len(from_handles) else "unknown"))
                for index, (_, dtype) in enumerate(inputs)]

    def count(self, start: int, end: int, inputs: tuple[Any, ...]) -> None:
        took = end - start
        if self.first_run_ns is None:
            self.first_run_ns = took
            self.first_start_ns = start
        else:
            self.latency[bucket(took)] += 1
            gap = start - self.last_end_ns
            if gap > 0:
                self.gaps[bucket(gap)] += 1
        self.last_end_ns = end
        self.busy_ns += took
        shapes = self.shapes
        seen = shapes.get(inputs)
        if seen is not None:
            shapes[inputs] = seen + 1
        elif len(shapes) < MAX_SHAPES:
            shapes[inputs] = 1
            if inputs and inputs[0][1] is None:
                self.handle_dtypes[inputs] = tuple(str(handle.type()) for handle in self.handles or ())
        else:
            self.shapes_not_kept += 1


def recorded_copy(original: Callable[..., Any]) -> Callable[..., Any]:
    """``Tensor.copy_from_cpu`` that notes the array's shape and dtype for this thread's next ``run()``."""

    def copy_from_cpu(tensor: Any, data: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(tensor, data, *args, **kwargs)
        try:
            copied = getattr(PENDING, "inputs", None)
            if copied is None or len(copied) >= MAX_PENDING:
                copied = PENDING.inputs = []
            copied.append((data.shape, data.dtype))
        except Exception:  # a list of strings has neither
            pass
        return result

    copy_from_cpu.__doc__ = getattr(original, "__doc__", None)
    return copy_from_cpu


def recorded_run(process: Process, original: Callable[..., Any]) -> Callable[..., Any]:
    """``Predictor.run`` that counts each call into its predictor's :class:`LivePredictor`."""
    lock = process.lock
    clock = time.perf_counter_ns

    def run(predictor: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            live = process.live_of(predictor)
            inputs = live.inputs_of(args)
            with lock:
                live.inside += 1
                live.peak = max(live.peak, live.inside)
                process.inside_runs += 1
                process.inside_threads += live.threads
                process.peak_runs = max(process.peak_runs, process.inside_runs)
                process.peak_threads = max(process.peak_threads, process.inside_threads)
        except Exception as exc:  # the recorder never raises into the service
            process.failed(f"before run(): {exc!r}"[:200])
            return original(predictor, *args, **kwargs)
        start = clock()
        try:
            return original(predictor, *args, **kwargs)
        finally:
            end = clock()
            with lock:
                live.inside -= 1
                process.inside_runs -= 1
                process.inside_threads -= live.threads
            try:
                live.count(start, end, inputs)
            except Exception as exc:
                process.failed(f"after run(): {exc!r}"[:200])

    run.__name__ = run.__qualname__ = "run"
    run.__doc__ = getattr(original, "__doc__", None)
    return run
