"""The recorder's runs noted in Python, where its C module (``_native.c``) was not built: the same
methods as its ``Runs`` (the :class:`~.live.Runs` protocol), for :class:`~.live.Process` to fold.

``run()`` does the least Python can: one dictionary get for its predictor, the inputs its thread
copied in since its last ``run()`` (``Tensor.copy_from_cpu`` notes each array's shape and dtype on
the thread; with none, what its predictor's last run read from the input handles, while no input
handle changed since: :data:`CHANGED`), one append of ``[predictor, start, end, inputs]`` to the list of runs (atomic under the
GIL: no lock) and two ``perf_counter_ns`` reads written into it, the start once it is in the list
and the end when the run returns; its thread's number, and whether its thread copied its inputs in
and another thread's ``run()`` of the predictor began since the first copy (:data:`CROSSED`: its
predictor's last thread and the :data:`CHANGED` number as that run began, kept on its
:class:`~.live.LivePredictor`, compared with the number the thread's first copy put), as
``_native.c`` keeps them in the predictor's slot. :meth:`PythonRuns.take` hands the writer the runs that ended and
those still running, and keeps the running ones for the next take.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

PENDING = threading.local()  # .inputs: [(shape, dtype)] copied in on this thread since its last run(), or None;
# .copied_at: CHANGED's number put by the first of them; .number: the thread's own (1 for the first to call one)
# [the last change of any input handle]: each copy_from_cpu, reshape, share_external_data and run(inputs)
# puts a number never put before (next() is atomic, a store too: a run that read it before any of them sees another)
CHANGED = [0]
CHANGES = itertools.count(1)
NUMBERS = itertools.count(1)  # the number of the next thread to run(), copy_from_cpu or get_output_handle
COPIED, CROSSED = 1, 2  # a run's inputs copied in on its thread; and another thread's run() of its predictor began since


def thread_number() -> int:
    """This thread's number, given the first time it asks (1 for the first thread), as ``_native.thread_number``."""
    number = getattr(PENDING, "number", 0)
    if not number:
        number = PENDING.number = next(NUMBERS)
    return number


class PythonRuns:
    """The runs of a process's predictors, noted by the ``run()`` of :meth:`wrap_run`."""

    def __init__(self, process: Any, wake: Callable[[], None], no_inputs: Any, fold_at: int, max_ended: int,
                 max_pending: int) -> None:
        self.process = process
        self.wake = wake
        self.no_inputs = no_inputs
        self.fold_at = fold_at
        self.max_ended = max_ended
        self.max_pending = max_pending
        self.by_id: dict[int, Any] = {}
        self.events: list[list[Any]] = []  # [live, start, end, inputs, thread, copied] of each run, appended as it starts
        self.running: list[list[Any]] = []  # runs still running at the last take
        self.not_counted = 0
        self.lock = threading.Lock()

    def remember(self, predictor: Any, live: Any) -> None:
        self.by_id[id(predictor)] = live

    def forget(self, key: int, live: Any) -> None:
        if self.by_id.get(key) is live:
            del self.by_id[key]

    def known(self, predictor: Any) -> Any:
        return self.by_id.get(id(predictor))

    @property
    def waiting(self) -> int:
        return len(self.events)

    def thread_number(self) -> int:
        return thread_number()

    def take(self) -> tuple[int, list[tuple[Any, int, int, Any, int, int]], list[tuple[Any, int]]]:
        """(until, the runs that ended by then, the runs running then), as ``_native.Runs.take``."""
        until = time.perf_counter_ns()
        events = self.events
        taken = events[:]  # a copy and a deletion, each atomic: a run appended meanwhile stays
        del events[:len(taken)]
        ended: list[tuple[Any, int, int, Any, int, int]] = []
        running: list[tuple[Any, int]] = []
        kept: list[list[Any]] = []
        for event in self.running + taken:
            live, start, end, inputs, thread, copied = event
            if not start or start >= until:  # not started before the clock: the next take's
                kept.append(event)
            elif end is None or end > until:
                kept.append(event)
                running.append((live, start))
            else:
                ended.append((live, start, end, inputs, thread, copied))
        self.running = kept
        return until, ended, running

    def forked(self) -> None:
        """In the child of a fork: the runs noted, and those running in the parent's threads, were the parent's."""
        self.lock = threading.Lock()
        del self.events[:]  # in place: the run()s of wrap_run append to this list
        self.running = []
        self.not_counted = 0

    def crowded(self, event: list[Any]) -> None:
        """A run that finds ``fold_at`` runs waiting: the writer is woken, and past ``max_ended``
        the run is not counted."""
        self.wake()
        with self.lock:
            if len(self.events) < self.max_ended:
                self.events.append(event)
            else:
                self.not_counted += 1

    def wrap_run(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Predictor.run`` that notes each call (see the module's words). Its arguments are Paddle's
        own (``run()``, ``run(inputs)``, ``run(inputs=…)``): no keyword dictionary to build; another
        keyword is a ``TypeError``, as it is for Paddle's."""
        clock = time.perf_counter_ns
        predictor_of = self.by_id.get
        live_of, failed = self.process.live_of, self.process.failed
        events = self.events
        append = events.append
        pending, fold_at, no_inputs, changed, changes = PENDING, self.fold_at, self.no_inputs, CHANGED, CHANGES

        def run(predictor: Any, inputs: Any = no_inputs, *more: Any) -> Any:
            if more:  # not a call Paddle's run() takes: its TypeError, and no run
                return original(predictor, inputs, *more)
            try:
                live = predictor_of(id(predictor)) or live_of(predictor)
                seen = getattr(pending, "inputs", None)
                number = getattr(pending, "number", 0) or thread_number()
                copied = 0
                if seen is not None:
                    pending.inputs = None
                    last = live.last_thread
                    copied = CROSSED if last and last != number and live.last_run_at >= pending.copied_at else COPIED
                live.last_thread, live.last_run_at = number, changed[0]
                if inputs is not no_inputs:
                    seen = live.inputs_of(inputs)
                elif seen is None:
                    at = changed[0]
                    if live.read_at == at:
                        seen = live.read
                    else:
                        seen = live.read = live.inputs_of(no_inputs)
                        live.read_at = at
                event = [live, 0, None, seen, number, copied]
                if len(events) < fold_at:
                    append(event)
                else:
                    self.crowded(event)
                event[1] = clock()
            except Exception as exc:  # the recorder never raises into the service
                failed(f"before run(): {exc!r}"[:200])
                return original(predictor) if inputs is no_inputs else original(predictor, inputs)
            try:
                return original(predictor) if inputs is no_inputs else original(predictor, inputs)
            finally:
                event[2] = clock()
                if inputs is not no_inputs:
                    changed[0] = next(changes)  # run(inputs) leaves them in the input handles

        run.__name__ = run.__qualname__ = "run"
        run.__doc__ = getattr(original, "__doc__", None)
        return run

    def wrap_copy(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Tensor.copy_from_cpu`` that notes the array's shape and dtype for this thread's next ``run()``
        (at most ``max_pending`` between two). Its arguments are Paddle's own (``data``, by position or by name)."""
        pending, changed, changes, most = PENDING, CHANGED, CHANGES, self.max_pending

        def copy_from_cpu(tensor: Any, data: Any, *more: Any) -> Any:
            try:
                result = original(tensor, data, *more) if more else original(tensor, data)
            finally:
                changed[0] = at = next(changes)
            try:
                seen = (data.shape, data.dtype)
                copied = getattr(pending, "inputs", None)
                if copied is None or len(copied) >= most:
                    pending.inputs = [seen]
                    pending.copied_at = at
                else:
                    copied.append(seen)
            except Exception:  # a list of strings has neither
                pass
            return result

        copy_from_cpu.__doc__ = getattr(original, "__doc__", None)
        return copy_from_cpu

    def wrap_change(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Tensor.reshape``, ``share_external_data`` and the like, noting that an input handle may have changed."""
        changed, changes = CHANGED, CHANGES

        def changing(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return original(tensor, *args, **kwargs)
            finally:
                changed[0] = next(changes)

        changing.__name__ = changing.__qualname__ = getattr(original, "__name__", "changing")
        changing.__doc__ = getattr(original, "__doc__", None)
        return changing
