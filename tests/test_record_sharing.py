"""The threads that use each predictor, as the recorder notes them: the threads that call its
``run()``, whose inputs copied in (``copy_from_cpu``) a run of it took, and that ask for its outputs
(``get_output_handle``), a bounded set of thread numbers with a count of more; and the runs whose
thread copied its inputs in while another thread's ``run()`` of the same predictor began (crossed).
Each holds for the runs noted in C and in Python (the ``recorder`` fixture)."""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np
from paddle_doctor.base.vocabulary import BuiltBy, Device, Recorder
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.recorded import BuildSite, RecordedConfig, Sharing
from paddle_doctor.recorder.live import MAX_THREADS, Process
from paddle_doctor.recorder.writer import snapshot
from test_record import new_process, recorder  # noqa: F401 (a fixture)
from test_record_folding import Gate  # a do-nothing predictor


class Worker:
    """A thread of its own that does what it is handed, one thing at a time, each done before :meth:`do` returns."""

    def __init__(self) -> None:
        self.work: queue.Queue[Callable[[], Any] | None] = queue.Queue()
        self.done: queue.Queue[BaseException | None] = queue.Queue()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        while (job := self.work.get()) is not None:
            try:
                job()
                self.done.put(None)
            except BaseException as exc:  # handed back to the test
                self.done.put(exc)

    def do(self, job: Callable[[], Any]) -> None:
        self.work.put(job)
        failed = self.done.get(timeout=30)
        if failed is not None:
            raise failed

    def stop(self) -> None:
        self.work.put(None)
        self.thread.join(timeout=30)


class Recording:
    def __init__(self, recorder: Recorder, predictors: int = 1) -> None:
        self.process: Process = new_process(recorder)
        self.predictors = [Gate() for _ in range(predictors)]
        config = RecordedConfig(PredictorConfig(threads=1, onednn=False), Device.CPU)
        for predictor in self.predictors:
            self.process.add(predictor, BuiltBy.CREATE_PREDICTOR, config, None, BuildSite(None, None))
        self.run = self.process.recorded_run(Gate.run)
        self.copy = self.process.recorded_copy(Gate.copy_from_cpu)

    def copy_in(self, predictor: int = 0) -> Callable[[], None]:
        return lambda: self.copy(self.predictors[predictor], np.ones((1, 3), "float32"))

    def run_it(self, predictor: int = 0) -> Callable[[], None]:
        return lambda: self.run(self.predictors[predictor])

    def request(self, predictor: int = 0) -> Callable[[], None]:
        """What a request does: its inputs copied in, a run, and its output asked for."""
        def one() -> None:
            self.copy_in(predictor)()
            self.run_it(predictor)()
            self.process.asked_output(self.predictors[predictor])
        return one

    def sharing(self) -> list[Sharing]:
        return [predictor.sharing for predictor in snapshot(self.process).predictors]  # type: ignore[misc]


def workers(count: int) -> list[Worker]:
    return [Worker() for _ in range(count)]


def test_two_threads_whose_copies_and_runs_of_one_predictor_interleave_are_seen_crossing(recorder):
    recording, (first, second) = Recording(recorder), workers(2)
    first.do(recording.copy_in())
    second.do(recording.copy_in())  # overwrites the first thread's inputs: its run() runs the second's
    first.do(recording.run_it())
    second.do(recording.run_it())   # begins after the first's run began, which began after this thread's copy
    (sharing,) = recording.sharing()
    assert (sharing.run.count(), sharing.copy_from_cpu.count(), sharing.crossed) == (2, 2, 1)
    assert len(set(sharing.run.threads)) == 2 and sharing.run.more == 0


def test_one_predictor_used_in_turn_by_four_threads_is_four_threads_that_never_cross(recorder):
    recording, threads = Recording(recorder), workers(4)
    for _ in range(3):
        for worker in threads:
            worker.do(recording.request())  # as behind a lock: each request whole before the next
    (sharing,) = recording.sharing()
    assert (sharing.run.count(), sharing.copy_from_cpu.count(), sharing.get_output_handle.count(), sharing.crossed) == (4, 4, 4, 0)


def test_a_clone_per_thread_is_one_thread_each_however_their_calls_interleave(recorder):
    recording, (first, second) = Recording(recorder, predictors=2), workers(2)
    for _ in range(3):
        first.do(recording.copy_in(0))
        second.do(recording.copy_in(1))
        first.do(recording.run_it(0))
        second.do(recording.run_it(1))
    shared = recording.sharing()
    assert [(s.run.count(), s.copy_from_cpu.count(), s.crossed) for s in shared] == [(1, 1, 0), (1, 1, 0)]
    assert shared[0].run.threads != shared[1].run.threads


def test_one_thread_that_runs_again_on_inputs_another_copied_in_is_not_a_crossing_of_its_own(recorder):
    recording, (first,) = Recording(recorder), workers(1)
    for _ in range(5):
        first.do(recording.request())
    recording.run_it()()  # the test's own thread runs it once, with nothing copied in on it
    (sharing,) = recording.sharing()
    assert (sharing.run.count(), sharing.copy_from_cpu.count(), sharing.get_output_handle.count(), sharing.crossed) == (2, 1, 1, 0)


def test_past_sixteen_threads_the_others_are_counted_not_kept(recorder):
    recording, threads = Recording(recorder), workers(MAX_THREADS + 3)
    for worker in threads:
        worker.do(recording.request())
    (sharing,) = recording.sharing()
    assert (len(sharing.run.threads), sharing.run.more, sharing.run.count()) == (MAX_THREADS, 3, MAX_THREADS + 3)
    assert len(set(sharing.run.threads)) == MAX_THREADS
    for worker in threads:
        worker.stop()
