"""The recorder's state in the service: one :class:`LivePredictor` per predictor built, and the runs
of their ``run()``, noted by the wrappers of the process's :attr:`Process.runs` and folded here.

The runs are noted in C (``_native.c``, built with the package where a compiler was at hand) or,
where it was not built or ``PADDLE_DOCTOR_RECORD_NATIVE`` is off (``0``), in Python
(:mod:`.python_runs`); both note the same things and hand them over the same way, the :class:`Runs`
protocol, made with the limits below, and :func:`chosen_runs` picks one.
``PADDLE_DOCTOR_RECORD_NATIVE=require`` demands the C one: where it is not built, the runs are
noted in Python and the record's errors say why (the writer says it on stderr too), as the recorder
never raises into the service. A ``run()``
notes the least: its predictor, the inputs its thread copied in since its last ``run()``
(``Tensor.copy_from_cpu`` notes each array's shape and dtype on the thread), and its start and
end; and the thread that called it, by its number (:meth:`Runs.thread_number`), and whether
its thread had copied its inputs in, and another thread's ``run()`` of the same predictor began
since the first of those copies (a run crossed: its inputs may have been run or overwritten by the
other's). ``get_output_handle`` notes its thread too. A ``run()`` with no inputs copied (the same inputs run again, or shared with
``share_external_data``) reads its input handles' shapes (:meth:`LivePredictor.inputs_of`), and
their dtypes on its own thread the first time a shape is seen; or, where no input handle has
changed since its predictor's last run read them (no ``copy_from_cpu``, ``reshape``,
``share_external_data`` nor ``run(inputs)`` anywhere: :meth:`Process.recorded_change`), takes
what that run read.

Everything else happens in :meth:`Process.fold`, on the writer's thread (every few seconds, at
exit, and sooner once :data:`FOLD_AT` runs wait): the runs that ended are taken and counted into
each predictor's histograms, shapes, first run, busy time and gaps, the threads that ran it and
copied its inputs in (the first :data:`MAX_THREADS` by number, and how many more) and its runs that
crossed, in the order they started.
Concurrency is exact: each fold sweeps the starts and ends of the runs that ended since the previous
fold's clock and of those still running (their end clipped at the fold's clock), so a run that
straddles folds is counted against every run it overlaps. Past :data:`MAX_EVENTS` waiting runs (the
writer stuck) a run is not counted, and the record says how many were not.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..base.vocabulary import BuiltBy, Recorder
from .callers import build_site
from .location import NATIVE, REQUIRE, native_required, switch
from .python_runs import CROSSED, PythonRuns

if TYPE_CHECKING:
    from ..facts.recorded import BuildSite, ModelFiles, RecordedConfig

MAX_PREDICTORS = 64
MAX_SHAPES = 32
MAX_SEEN = 4 * MAX_SHAPES  # the inputs noted kept as counted: one shape seen with dtypes of each kind, and a few more
MAX_ERRORS = 8
MAX_PENDING = 64  # inputs a thread copied in kept for its next run(): the last ones
MAX_THREADS = 16  # the threads kept by their number, of those that called one method of a predictor
MAX_COUNTED_THREADS = 4096  # the threads past those counted as more, each once; past these, not counted
FOLD_AT = 4096  # runs waiting: the writer is woken to fold them
MAX_EVENTS = 16384  # runs waiting past which a run is not counted (a writer stuck)
BUCKETS = 64 << 3
NO_INPUTS: Any = object()  # run() called with no inputs: they were copied in, or shared


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


def dtype_name(dtype: Any) -> str:
    """``float32`` for numpy's dtype, Paddle's ``paddle.float32`` and ``PaddleDType.FLOAT32`` alike."""
    return str(dtype).rpartition(".")[2].lower() if dtype is not None else "unknown"


class Runs(Protocol):
    """The runs of a process's predictors, noted by the wrappers it makes, as both recorders keep
    them: ``_native.Runs`` in C and :class:`~.python_runs.PythonRuns`, each made as
    ``Runs(process, wake, no_inputs, fold_at, max_ended, max_pending)`` (:data:`FOLD_AT`,
    :data:`MAX_EVENTS`, :data:`MAX_PENDING`)."""

    @property
    def not_counted(self) -> int:
        """Runs not counted: past ``max_ended`` waiting."""

    @property
    def waiting(self) -> int:
        """Runs ended and not yet taken."""

    def remember(self, predictor: Any, live: LivePredictor) -> None:
        """The runs of ``predictor`` are ``live``'s."""

    def forget(self, key: int, live: LivePredictor) -> None:
        """The predictor of ``id()`` ``key``, ``live``'s, is gone."""

    def known(self, predictor: Any) -> LivePredictor | None:
        """The predictor's :class:`LivePredictor`, where it was remembered."""

    def take(self) -> tuple[int, list[tuple[Any, int, int, Any, int, int]], list[tuple[Any, int]]]:
        """(until, [(live, start, end, inputs, thread, copied)] of the runs ended since the last take,
        [(live, start)] running then): ``thread`` the number of the thread that ran it
        (:meth:`thread_number`), ``copied`` 0 when no input was copied in on its thread since its
        last run, :data:`~.python_runs.COPIED` when some were, :data:`~.python_runs.CROSSED` when,
        besides, another thread's ``run()`` of the same predictor began after the first of those copies."""

    def thread_number(self) -> int:
        """The calling thread's number in the process: 1 for the first thread to run, copy or ask
        for an output, and so on, given once and kept with the thread."""

    def wrap_run(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Predictor.run`` that notes each call."""

    def wrap_copy(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Tensor.copy_from_cpu`` that notes each array's shape and dtype for its thread's next ``run()``."""

    def wrap_change(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Tensor.reshape`` and the like, noting that an input handle may have changed."""

    def forked(self) -> None:
        """In the child of a fork: the parent's runs forgotten."""


RunsKind = Callable[["Process", Callable[[], None], Any, int, int, int], Runs]


@dataclass(frozen=True)
class ChosenRuns:
    """The recorder of runs the environment chose, and where the C one was demanded and is not
    built, why (``unmet``)."""

    kind: RunsKind
    recorder: Recorder
    unmet: str | None = None


def chosen_runs(environ: Mapping[str, str]) -> ChosenRuns:
    """The C recorder, unless ``PADDLE_DOCTOR_RECORD_NATIVE`` is off (:func:`~.location.switch`) or
    its module was not built; then Python's, saying why where ``PADDLE_DOCTOR_RECORD_NATIVE=require``
    demanded the C one."""
    if not switch(environ, NATIVE):
        return ChosenRuns(PythonRuns, Recorder.PYTHON)
    try:
        from . import _native
    except ImportError as exc:
        unmet = (f"{NATIVE}={REQUIRE} and the recorder's C module is not built here ({exc!s:.200}): "
                 "the runs are noted in Python") if native_required(environ) else None
        return ChosenRuns(PythonRuns, Recorder.PYTHON, unmet)
    return ChosenRuns(_native.Runs, Recorder.NATIVE)


class Process:
    """Process-wide: every predictor, their runs (:attr:`runs`, in C or in Python), the concurrency
    across predictors, the recorder's own failures. :meth:`fold` is called by one thread at a time
    (the writer's lock)."""

    def __init__(self, native: bool | None = None) -> None:
        """``native``: the recorder of runs the environment chooses (None, :func:`chosen_runs`), the C
        one demanded (True: as ``PADDLE_DOCTOR_RECORD_NATIVE=require``), or Python's (False)."""
        self.lock = threading.Lock()
        self.predictors: list[LivePredictor] = []
        self.not_kept = 0
        self.folded_until = 0
        self.wake = threading.Event()  # set when runs pile up: the writer folds them now
        self.peak_runs = 0
        self.peak_threads = 0
        self.errors: list[str] = []
        self.on_first_predictor: Callable[[], None] | None = None
        self.environment: dict[str, str] | None = None  # the thread variables and FLAGS_* at the first import of paddle
        chosen = ChosenRuns(PythonRuns, Recorder.PYTHON) if native is False else \
            chosen_runs(os.environ if native is None else {NATIVE: REQUIRE})
        self.recorder = chosen.recorder
        self.unmet = chosen.unmet  # the C recorder demanded and not built: said in the errors, and by the writer
        if chosen.unmet is not None:
            self.failed(chosen.unmet)
        self.runs: Runs = chosen.kind(self, self.wake_writer, NO_INPUTS, FOLD_AT, MAX_EVENTS, MAX_PENDING)

    def wake_writer(self) -> None:
        self.wake.set()

    def forked(self) -> None:
        """In the child of a fork: the runs noted so far, and those the parent's other threads were
        running, are the parent's; the child counts its own from none, with locks of its own (a thread
        of the parent's may have held one as it forked, and the child has no such thread to release it)."""
        self.lock = threading.Lock()
        self.wake = threading.Event()
        self.runs.forked()
        self.peak_runs = self.peak_threads = 0
        for live in self.predictors:
            live.count_from_none()

    def recorded_run(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Predictor.run`` that notes each call. Its arguments are Paddle's own (``run()``,
        ``run(inputs)``, ``run(inputs=…)``), and it returns what Paddle's returns."""
        return self.runs.wrap_run(original)

    def recorded_change(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Tensor.reshape``, ``share_external_data`` and the like: each may change an input handle,
        so the next ``run()`` with nothing copied in reads them again."""
        return self.runs.wrap_change(original)

    def recorded_copy(self, original: Callable[..., Any]) -> Callable[..., Any]:
        """``Tensor.copy_from_cpu`` that notes the array's shape and dtype for its thread's next ``run()``."""
        return self.runs.wrap_copy(original)

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
            self.runs.remember(predictor, live)
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

    def asked_output(self, predictor: Any) -> None:
        """``predictor.get_output_handle()`` was called on this thread: noted among its callers."""
        live = self.runs.known(predictor)
        if live is not None:
            live.output_threads.note(self.runs.thread_number())

    def live_of(self, predictor: Any) -> LivePredictor:
        live = self.runs.known(predictor)
        if live is None:
            live = self.add(predictor, BuiltBy.UNSEEN, None, None, build_site(None))
        return live

    def fold(self) -> None:
        """Counts the runs that ended into their predictors, in the order they started, and the
        concurrency since the last fold."""
        until, ended, running = self.runs.take()
        since, self.folded_until = self.folded_until, until
        ended.sort(key=_started)
        points: list[tuple[int, int, LivePredictor]] = []
        for live, start, end, inputs, thread, copied in ended:
            live.count(start, end, inputs, thread, copied)
            _inside(points, live, max(start, since), end)
        for live, start in running:
            _inside(points, live, max(start, since), until)
        self._sweep(points)

    def _sweep(self, points: list[tuple[int, int, LivePredictor]]) -> None:
        """The most runs, and math threads, inside ``run()`` at once, process-wide and per predictor
        (an end and a start at the same nanosecond do not overlap)."""
        points.sort(key=lambda point: (point[0], point[1]))
        runs = threads = 0
        inside: dict[LivePredictor, int] = {}
        for _, starts, live in points:
            if starts:
                runs += 1
                threads += live.threads
                now = inside[live] = inside.get(live, 0) + 1
                live.peak = max(live.peak, now)
                self.peak_runs = max(self.peak_runs, runs)
                self.peak_threads = max(self.peak_threads, threads)
            else:
                runs -= 1
                threads -= live.threads
                inside[live] -= 1


def _started(run: tuple[Any, int, int, Any, int, int]) -> int:
    return run[1]


class Callers:
    """The threads that called one method of a predictor, by number: the first :data:`MAX_THREADS`
    kept, and how many others (each counted once, up to :data:`MAX_COUNTED_THREADS`)."""

    def __init__(self) -> None:
        self.kept: list[int] = []
        self.others: set[int] = set()

    def note(self, number: int) -> None:
        kept = self.kept
        if number in kept:
            return
        if len(kept) < MAX_THREADS:
            kept.append(number)
        elif len(self.others) < MAX_COUNTED_THREADS:
            self.others.add(number)


def _inside(points: list[tuple[int, int, LivePredictor]], live: LivePredictor, begin: int, stop: int) -> None:
    if stop > begin:
        points.append((begin, 1, live))
        points.append((stop, 0, live))


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
        self.read: Any = None  # what a run with nothing copied in last read from the handles (the Python recorder's)
        self.read_at = -1  # python_runs.CHANGED then
        self.input_names: list[str] = []
        self.seen: dict[tuple[Any, ...], tuple[tuple[tuple[int, ...], str], ...]] = {}  # the inputs noted, as counted
        self.handle_dtypes: dict[tuple[Any, ...], tuple[str, ...]] = {}
        self.last_thread = 0  # the thread of the last run() begun (the Python recorder's; the C one keeps it in C)
        self.last_run_at = 0  # python_runs.CHANGED as it began
        self.count_from_none()

    def count_from_none(self) -> None:
        """No run counted: as it is built, and in the child of a fork."""
        self.latency = [0] * BUCKETS
        self.gaps = [0] * BUCKETS
        self.shapes: dict[tuple[tuple[tuple[int, ...], str], ...], int] = {}
        self.shapes_not_kept = 0
        self.first_run_ns: int | None = None
        self.first_start_ns = 0
        self.last_end_ns = 0
        self.busy_ns = 0
        self.peak = 0
        self.run_threads, self.copy_threads, self.output_threads = Callers(), Callers(), Callers()
        self.crossed = 0  # runs whose inputs another thread's run() of this predictor may have taken or overwritten

    def watch(self, predictor: Any) -> None:
        """Its input handles, read once (those of the first predictor folded into it: the inputs a run
        read from them stay true while none changes); and when the service drops it, it is no longer alive."""
        if self.handles is not None:
            self._watch_drop(predictor)
            return
        try:
            self.input_names = [str(name)[:200] for name in predictor.get_input_names()]
            self.handles = [predictor.get_input_handle(name) for name in self.input_names]
        except Exception as exc:  # a predictor with feed/fetch ops, or one that cannot say
            self.process.failed(f"predictor {self.number} input handles: {exc!r}"[:200])
            self.handles = []
        self._watch_drop(predictor)

    def _watch_drop(self, predictor: Any) -> None:
        try:
            weakref.finalize(predictor, self._dropped, id(predictor))
        except TypeError:
            pass

    def _dropped(self, key: int) -> None:
        self.alive = False
        self.process.runs.forget(key, self)

    def inputs_of(self, given: Any) -> Any:
        """The inputs of a ``run()`` that had none copied in on its thread: the tensors it was given
        (``run(inputs)``), else its input handles' shapes (and their dtypes, read on this thread, for
        a shape not seen)."""
        if given is not NO_INPUTS:
            return tuple((tuple(tensor.shape), str(tensor.dtype)) for tensor in given)
        inputs = tuple((tuple(handle.shape()), None) for handle in self.handles or ())
        dtypes = self.handle_dtypes
        if inputs not in dtypes and len(dtypes) < MAX_SHAPES:
            dtypes[inputs] = tuple(str(handle.type()) for handle in self.handles or ())
        return inputs

    def seen_as(self, inputs: Any) -> tuple[tuple[tuple[int, ...], str], ...]:
        """A run's inputs as the record counts them: each shape a tuple of ints, each dtype by its name
        (numpy's ``float32``, Paddle's ``paddle.float32``, a handle's ``PaddleDType.FLOAT32`` and a
        dtype read later from the handles are one ``float32``), kept for the next run of the same."""
        inputs = tuple(inputs)
        seen = self.seen.get(inputs)
        if seen is None:
            from_handles = self.handle_dtypes.get(inputs, ())
            seen = tuple((tuple(int(size) for size in shape),
                          dtype_name(dtype if dtype is not None else (from_handles[index] if index < len(from_handles) else None)))
                         for index, (shape, dtype) in enumerate(inputs))
            if len(self.seen) < MAX_SEEN:
                self.seen[inputs] = seen
        return seen

    def count(self, start: int, end: int, inputs: Any, thread: int = 0, copied: int = 0) -> None:
        if thread:
            self.run_threads.note(thread)
            if copied:
                self.copy_threads.note(thread)
        if copied == CROSSED:
            self.crossed += 1
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
        key = self.seen_as(inputs)
        shapes = self.shapes
        seen = shapes.get(key)
        if seen is not None:
            shapes[key] = seen + 1
        elif len(shapes) < MAX_SHAPES:
            shapes[key] = 1
        else:
            self.shapes_not_kept += 1

