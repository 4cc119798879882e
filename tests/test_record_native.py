"""The recorder's C module against its Python fallback: the same calls noted by each fold into the
same record (shapes and dtypes however they change, inputs by position and by name, errors raised
through, predictors unseen, dropped and their address reused); its wrappers bind as Paddle's methods
do; what a thread copied in goes with the thread; both keep the limits Python gives them; the C one
demanded where it is not built is said, and the service goes on; and the module builds, without a
warning, and records on every Python from 3.10 on this machine."""

from __future__ import annotations

import gc
import glob
import os
import subprocess
import sys
import sysconfig
import textwrap
import threading
import weakref
from pathlib import Path

import numpy as np
import pytest
from conftest import REPO
from paddle_doctor.base.vocabulary import BuiltBy, Recorder
from paddle_doctor.recorder.callers import build_site
from paddle_doctor.recorder.live import FOLD_AT, MAX_EVENTS, MAX_PENDING, NO_INPUTS, Process, Runs, chosen_runs
from paddle_doctor.recorder.location import NATIVE, REQUIRE, settings_problems
from paddle_doctor.recorder.python_runs import PythonRuns
from paddle_doctor.recorder.writer import snapshot
from recorders import needs_c_recorder
from test_record import new_process, recorder  # noqa: F401 (a fixture)

SOURCE = REPO / "doctor" / "recorder" / "_native.c"


class Handle:
    def shape(self) -> list[int]:
        return [7, 7]

    def type(self) -> str:
        return "DataType.FLOAT32"

    def copy_from_cpu(self, data) -> None:
        pass

    def reshape(self, shape) -> None:
        pass


class Fake:
    """A predictor: ``run()`` returns what it was given, or raises what it is told to."""

    def __init__(self, names: int = 1) -> None:
        self.names = [f"x{index}" for index in range(names)]
        self.raising: Exception | None = None

    def run(self, inputs=None):
        if self.raising is not None:
            raise self.raising
        return inputs

    def get_input_names(self) -> list[str]:
        return self.names

    def get_input_handle(self, name: str) -> Handle:
        return Handle()


def watched(process: Process, predictor: Fake) -> Fake:
    """The predictor, as the hook adds one that create_predictor() built."""
    process.add(predictor, BuiltBy.CREATE_PREDICTOR, None, None, build_site(None))
    return predictor


class Subclassed(np.ndarray):
    pass


def every_kind_of_call(process: Process) -> list[Fake]:
    """The same calls, whichever recorder notes them: returns the predictors, kept alive."""
    run, copy = process.recorded_run(Fake.run), process.recorded_copy(Handle.copy_from_cpu)
    first, second, unseen = Fake(), Fake(2), Fake()
    for predictor in (first, second):
        watched(process, predictor)
    base = np.zeros((2, 3), "float32")
    arrays = [base, base.copy(), np.zeros((4, 3), "float32"), np.zeros((4, 3), "int64"), np.zeros((4, 3), "int64"),
              np.zeros((4, 3), ">f4"), base[:, ::2], base.T, np.float32(1.0), np.zeros((), "float32"),
              base.view(Subclassed), np.zeros((1, 2, 1, 2, 1, 2, 1, 2, 1, 2), "float16"), np.zeros((0, 3), "float32")]
    for array in arrays * 2:
        copy(first, array)
        run(first)
    copy(first, data=np.zeros((5, 5), "uint8"))  # by name
    run(first)
    for places in (2, 9, 2, 9):  # past the places whose keys are reused
        for place in range(places):
            copy(second, np.zeros((place + 1, 2), "float32"))
        run(second)
    for _ in range(MAX_PENDING + 3):  # more than a thread keeps between two runs: the last ones
        copy(second, np.zeros((3, 1), "float64"))
    run(second)
    for _ in range(MAX_PENDING):
        copy(second, np.zeros((3, 2), "float64"))
    copy(second, ["no", "shape"])  # not noted: the ones before it are kept
    run(second)
    copy(second, np.zeros((1, 1), "int8"))
    with pytest.raises(TypeError):
        run(second, [np.zeros(1)], foo=1)  # not a call Paddle's run() takes: no run, the copied kept
    with pytest.raises(TypeError):
        run(second, [np.zeros(1)], inputs=[np.zeros(1)])
    with pytest.raises(TypeError):
        run(second, [np.zeros(1)], [np.zeros(1)])
    run(second)
    copy(first, ["text", "more"])  # no shape: the run reads its input handles
    run(first)
    run(first)  # nothing copied: the input handles
    given = [np.zeros((6, 2), "float32")]
    assert run(first, given) is given and run(first, inputs=given) is given
    copy(first, np.zeros((8, 8), "float32"))
    assert run(first, given) is given  # given, not the copied: those are forgotten
    run(first)
    with pytest.raises(TypeError):
        run(first, data=given)  # not a keyword Paddle's run() takes: no run
    first.raising = ValueError("the model's own error")
    with pytest.raises(ValueError, match="the model's own error") as raised:
        run(first)
    assert raised.value is first.raising and raised.traceback[-1].name == "run"
    first.raising = None
    run(unseen)
    return [first, second, unseen]


def counted(process: Process) -> list[tuple]:
    record = snapshot(process)
    assert record.errors == []
    return [(p.id, p.built_by, p.runs.runs, p.runs.peak_concurrency,
             [([(t.shape, t.dtype) for t in seen.inputs], seen.runs) for seen in p.runs.shapes], p.runs.shapes_not_kept)
            for p in record.predictors]


def test_the_c_recorder_and_the_python_one_count_the_same_calls_the_same():
    needs_c_recorder()
    native, python = Process(native=True), Process(native=False)
    assert (native.recorder, python.recorder) == (Recorder.NATIVE, Recorder.PYTHON)
    kept = every_kind_of_call(native), every_kind_of_call(python)
    assert counted(native) == counted(python)
    second = {str(inputs): runs for inputs, runs in counted(native)[1][4]}
    assert counted(native)[1][2] == 4 + 1 + 1 + 1  # the calls Paddle refuses are no runs
    assert second[str([([3, 2], "float64")] * MAX_PENDING)] == 1 and second[str([([1, 1], "int8")])] == 1
    first = counted(native)[0]
    assert first[2] == 2 * 13 + 1 + 2 + 4 + 1 and first[1] == "create_predictor"
    shapes = {str(inputs): runs for inputs, runs in first[4]}
    assert shapes[str([([2, 3], "float32")])] == 6 and shapes[str([([4, 3], "int64")])] == 4  # a subclass's too
    assert shapes[str([([4, 3], ">f4")])] == 2 and shapes[str([([3, 2], "float32")])] == 2  # base.T
    assert shapes[str([([7, 7], "float32")])] == 4  # nothing copied: from the input handle
    assert counted(native)[2][1] == "unseen" and counted(native)[2][2] == 1
    assert kept


def test_a_predictor_dropped_is_forgotten_and_a_new_one_at_its_address_counts_as_its_own(recorder):
    process = new_process(recorder)
    run = process.recorded_run(Fake.run)
    addresses = set()
    for _ in range(50):  # each dropped before the next is made: addresses are reused
        predictor = Fake()
        addresses.add(id(predictor))
        watched(process, predictor)
        run(predictor)
        del predictor
        gc.collect()
    stranger = Fake()
    run(stranger)  # never built through the recorder, maybe at an address of one that was
    record = snapshot(process)
    assert len(addresses) < 50  # the test saw what it tests
    assert [p.runs.runs for p in record.predictors] == [1] * 50 + [1]
    assert record.predictors[-1].built_by == "unseen" and not any(p.alive for p in record.predictors[:50])


def test_the_wrappers_bind_as_paddles_methods_do(recorder):
    process = new_process(recorder)

    class Predictor(Fake):
        """A predictor class whose methods the recorder replaces, as the hook does Paddle's."""

    original_run = Predictor.run
    Predictor.run = process.recorded_run(Predictor.run)
    Handle.copy_from_cpu, original_copy = process.recorded_copy(Handle.copy_from_cpu), Handle.copy_from_cpu
    try:
        predictor = Predictor()
        watched(process, predictor)
        predictor.get_input_handle("x0").copy_from_cpu(np.zeros((1, 4), "float32"))
    finally:
        Handle.copy_from_cpu = original_copy
    one, two = [np.zeros((2,), "int64")], [np.zeros((3,), "int64")]
    assert predictor.run() is None and predictor.run(one) is one and Predictor.run(predictor, inputs=two) is two
    assert Predictor.run.__name__ == "run" and Predictor.run.__doc__ == original_run.__doc__
    if recorder is Recorder.NATIVE:
        assert Predictor.run.__wrapped__ is original_run
    record = snapshot(process)
    assert record.errors == [] and record.predictors[0].runs.runs == 3
    assert [seen.inputs[0].shape for seen in record.predictors[0].runs.shapes] == [[1, 4], [2], [3]]


def test_what_a_thread_copied_in_goes_with_the_thread(recorder):
    process = new_process(recorder)
    copy, run = process.recorded_copy(Handle.copy_from_cpu), process.recorded_run(Fake.run)
    predictor = watched(process, Fake())

    class DType:
        def __str__(self) -> str:
            return "float32"

    class Data:
        def __init__(self) -> None:
            self.shape, self.dtype = (1, 2), DType()

    dtypes = []

    def copies_and_never_runs():
        data = Data()
        dtypes.append(weakref.ref(data.dtype))
        copy(predictor, data)

    for _ in range(5):
        thread = threading.Thread(target=copies_and_never_runs)
        thread.start()
        thread.join()
    gc.collect()
    assert len(dtypes) == 5 and all(dtype() is None for dtype in dtypes)  # nothing of a thread gone is kept
    copy(predictor, np.zeros((3, 3), "float32"))  # this thread's own copies are its own
    run(predictor)
    assert snapshot(process).predictors[0].runs.shapes[0].inputs[0].shape == [3, 3]


class Counted(Handle):
    """An input handle that counts how often its shape is read; ``reshape`` changes it."""

    def __init__(self) -> None:
        self.dims, self.reads = [1, 4], 0

    def shape(self) -> list[int]:
        self.reads += 1
        return list(self.dims)

    def reshape(self, shape) -> None:
        self.dims = list(shape)


class OneInput(Fake):
    def __init__(self) -> None:
        super().__init__()
        self.handle = Counted()

    def get_input_handle(self, name: str) -> Counted:
        return self.handle


def test_a_run_with_nothing_copied_in_reads_the_input_handles_only_after_one_may_have_changed(recorder):
    process = new_process(recorder)
    run, copy = process.recorded_run(Fake.run), process.recorded_copy(Handle.copy_from_cpu)
    reshape = process.recorded_change(Counted.reshape)
    predictor = watched(process, OneInput())
    handle, reads = predictor.handle, []
    copy(handle, np.zeros((1, 4), "float32"))
    run(predictor)  # copied in: no handle read
    for _ in range(6):
        run(predictor)  # the same inputs run again: read once, then what that run read
    reads.append(handle.reads)
    reshape(handle, [2, 4])
    run(predictor)
    run(predictor)
    reads.append(handle.reads)
    assert run(predictor, [np.zeros((3, 4), "float32")]) is not None  # given: they are in the handle now
    handle.dims = [3, 4]
    run(predictor)
    reads.append(handle.reads)
    copy(OneInput().handle, np.zeros((5, 5), "float32"))  # a copy into any handle: the next run of every predictor reads its own
    run(OneInput())
    run(predictor)
    reads.append(handle.reads)
    shapes = {str([(t.shape, t.dtype) for t in seen.inputs]): seen.runs for seen in snapshot(process).predictors[0].runs.shapes}
    assert reads == [1, 2, 3, 4]
    assert shapes == {str([([1, 4], "float32")]): 7, str([([2, 4], "float32")]): 2, str([([3, 4], "float32")]): 3}


def test_runs_ended_are_bounded_between_two_folds_in_c_as_in_python():
    """The C recorder keeps the runs that ended for the next fold in one growing array: past
    ``MAX_EVENTS`` a run is not counted, and a fold empties it."""
    needs_c_recorder()
    process = Process(native=True)
    run = process.recorded_run(Fake.run)
    predictor = watched(process, Fake())
    for _ in range(MAX_EVENTS + 5):
        run(predictor)
    assert process.runs.waiting == MAX_EVENTS and process.runs.not_counted == 5 and process.wake.is_set()
    process.fold()
    assert process.runs.waiting == 0 and process.predictors[0].first_run_ns is not None
    assert FOLD_AT < MAX_EVENTS


def test_a_copy_whose_shape_runs_a_copy_and_a_run_on_the_same_thread_leaves_both_runs_whole(recorder):
    process = new_process(recorder)
    run, copy = process.recorded_run(Fake.run), process.recorded_copy(Handle.copy_from_cpu)
    predictor = watched(process, Fake())

    class Plain:
        shape, dtype = (1,), "f"

    class Nested:  # a lazy array, or a finalizer, doing its own inference while its shape is asked
        dtype = "f"

        @property
        def shape(self):
            copy(predictor, Plain())
            run(predictor)
            return (2,)

    copy(predictor, Plain())
    copy(predictor, Nested())
    run(predictor)
    shapes = {str([(t.shape, t.dtype) for t in seen.inputs]): seen.runs for seen in snapshot(process).predictors[0].runs.shapes}
    assert shapes == {str([([1], "f"), ([1], "f")]): 1, str([([2], "f")]): 1}


def test_a_keyboard_interrupt_while_the_recorder_asks_goes_on_to_the_service(recorder):
    """The recorder keeps its own failures (an ``Exception``) from the service; a Ctrl-C is the service's."""
    process = new_process(recorder)
    run, copy = process.recorded_run(Fake.run), process.recorded_copy(Handle.copy_from_cpu)
    predictor = watched(process, Fake())

    class Interrupting:
        dtype = "f"

        @property
        def shape(self):
            raise KeyboardInterrupt

    class Failing:
        dtype = "f"

        @property
        def shape(self):
            raise ValueError("no shape here")

    with pytest.raises(KeyboardInterrupt):
        copy(predictor, Interrupting())
    copy(predictor, Failing())  # the recorder's own failure: not noted, not raised
    run(predictor)
    class InterruptedHandle:
        def shape(self):
            raise KeyboardInterrupt

    process.live_of(predictor).handles = [InterruptedHandle()]
    process.recorded_change(Handle.reshape)(Handle(), [1])  # a handle changed: the next run reads them
    predictor.raising = AssertionError("Paddle's run() is not reached")
    with pytest.raises(KeyboardInterrupt):
        run(predictor)  # nothing copied: its handles are asked, and one is interrupted
    record = snapshot(process)
    assert record.predictors[0].runs.runs == 1 and record.errors == []


def test_runs_that_end_while_the_writer_takes_them_wait_for_the_next_take(recorder):
    """Taking the runs makes Python objects, which may collect garbage, whose finalizers may run
    Python code that ends runs (on 3.10 and 3.11 at once): they are never lost nor written past."""
    process = new_process(recorder)
    run = process.recorded_run(Fake.run)
    predictor = watched(process, Fake())
    for _ in range(4):
        run(predictor)

    class Bomb:
        def __init__(self) -> None:
            self.me = self

        def __del__(self) -> None:
            for _ in range(300):
                run(predictor)

    gc.collect()
    threshold = gc.get_threshold()
    gc.disable()
    Bomb()
    gc.set_threshold(1)
    gc.enable()
    try:
        process.fold()
    finally:
        gc.set_threshold(*threshold)
    assert snapshot(process).predictors[0].runs.runs == 304


def test_a_python_class_named_numpy_ndarray_is_never_read_as_numpys(tmp_path):
    """Its head is not an array's: the recorder asks it for its shape and dtype, as it asks any other object."""
    needs_c_recorder()
    script = textwrap.dedent('''
        import numpy as np
        from paddle_doctor.recorder.callers import build_site
        from paddle_doctor.recorder.live import Process
        from paddle_doctor.recorder.writer import snapshot
        from paddle_doctor.base.vocabulary import BuiltBy

        class Impostor:
            shape, dtype = (9, 9), "f"
        Impostor.__name__ = Impostor.__qualname__ = "numpy.ndarray"

        class Fake:
            def run(self): pass
            def get_input_names(self): return []
            def copy_from_cpu(self, data): pass
        process = Process(native=True)
        assert process.recorder == "native", process.errors
        run, copy = process.recorded_run(Fake.run), process.recorded_copy(Fake.copy_from_cpu)
        predictor = Fake()
        process.add(predictor, BuiltBy.CREATE_PREDICTOR, None, None, build_site(None))
        for data in [Impostor(), np.zeros((2, 2), "float32"), np.zeros((2, 2), "float32"), np.zeros((3, 2), "float32")]:
            copy(predictor, data)
            run(predictor)
        print(sorted(str([(t.shape, t.dtype) for t in s.inputs]) + str(s.runs) for s in snapshot(process).predictors[0].runs.shapes))
    ''')
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == str(sorted(["[([2, 2], 'float32')]2", "[([3, 2], 'float32')]1", "[([9, 9], 'f')]1"]))


def pythons() -> list[str]:
    """Every Python from 3.10 on this machine that runs (pyenv's among them), this one first."""
    found = [sys.executable]
    for pattern in ("/usr/bin/python3.1[0-9]", os.path.expanduser("~/.pyenv/versions/3.1[0-9].*/bin/python3.1[0-9]")):
        for candidate in sorted(glob.glob(pattern)):
            if subprocess.run([candidate, "-c", "import sys; assert sys.version_info >= (3, 10)"],
                              capture_output=True, timeout=60).returncode == 0:
                found.append(candidate)
    return found


SMOKE = '''
import importlib.util, sys, threading
spec = importlib.util.spec_from_file_location("paddle_doctor.recorder._native", sys.argv[1])
native = importlib.util.module_from_spec(spec)
spec.loader.exec_module(native)

class Process:
    errors = []
    def failed(self, message): self.errors.append(message)
    def live_of(self, predictor): raise LookupError("not built here")

class Live:
    def inputs_of(self, given): return ((tuple(len(x) for x in given), "list"),) if given is not NO_INPUTS else ()

class Data:
    shape, dtype = (2, 3), "float32"

NO_INPUTS = object()
woken = threading.Event()
runs = native.Runs(Process(), woken.set, NO_INPUTS, 2, 4, 8)
run = runs.wrap_run(lambda predictor, inputs=None: inputs)
copy = runs.wrap_copy(lambda tensor, data: None)
predictor, live = object(), Live()
runs.remember(predictor, live)
copy(predictor, Data())
run(predictor)
run(predictor, [[1, 2]])
run(predictor, inputs=[[1]])
until, ended, running = runs.take()
assert [(r[0] is live, r[1] <= r[2] <= until, r[3]) for r in ended] == [
    (True, True, ((( 2, 3), "float32"),)), (True, True, (((2,), "list"),)), (True, True, (((1,), "list"),))], ended
assert running == [] and woken.is_set()
stranger = object()
assert run(stranger, [1]) == [1] and Process.errors == ["before run(): LookupError('not built here')"]
print("recorded on", sys.version.split()[0])
'''


@pytest.mark.slow  # compiles the module once for each Python found
def test_the_c_module_builds_without_a_warning_and_records_on_every_python_from_3_10(tmp_path):
    found = pythons()
    for python in found:
        paths = subprocess.run([python, "-c", "import sysconfig, json; print(json.dumps(sysconfig.get_paths()))"],
                               capture_output=True, text=True, timeout=60, check=True).stdout
        include = __import__("json").loads(paths)["include"]
        suffix = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))"],
                                capture_output=True, text=True, timeout=60, check=True).stdout.strip()
        if not Path(include, "Python.h").is_file():
            continue  # no headers for this one: pip would install it without the module
        built = tmp_path / f"{Path(python).name}-{len(os.listdir(tmp_path))}" / f"_native{suffix}"
        built.parent.mkdir()
        compiled = subprocess.run([sysconfig.get_config_var("CC").split()[0] or "cc", "-shared", "-fPIC", "-O2", "-Wall",
                                   "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers", "-Werror",
                                   f"-I{include}", str(SOURCE), "-o", str(built)],
                                  capture_output=True, text=True, timeout=300)
        assert compiled.returncode == 0, f"{python}: {compiled.stderr[-3000:]}"
        ran = subprocess.run([python, "-c", textwrap.dedent(SMOKE), str(built)], capture_output=True, text=True, timeout=60)
        assert ran.returncode == 0 and ran.stdout.startswith("recorded on"), f"{python}: {ran.stderr[-3000:]}"
    assert len(found) >= 1


def test_both_recorders_offer_every_method_of_the_runs_protocol():
    needs_c_recorder()
    named = {name for name in vars(Runs) if not name.startswith("_")}
    assert {"take", "wrap_run", "wrap_copy", "wrap_change", "not_counted"} <= named
    for kind in (chosen_runs({NATIVE: REQUIRE}).kind, PythonRuns):
        runs = kind(Process(native=False), lambda: None, NO_INPUTS, FOLD_AT, MAX_EVENTS, MAX_PENDING)
        assert sorted(name for name in named if not hasattr(runs, name)) == [], kind


def test_each_recorder_keeps_the_limits_python_gives_it(recorder):
    """The limits are live.py's, given to the recorder as it is made (none is compiled into the C one):
    the inputs a thread keeps between two runs, the runs waiting before the writer is woken, and
    those past which a run is not counted."""
    process = new_process(recorder)
    process.runs = type(process.runs)(process, process.wake_writer, NO_INPUTS, 2, 3, 2)
    run, copy = process.runs.wrap_run(Fake.run), process.runs.wrap_copy(Handle.copy_from_cpu)
    predictor = watched(process, Fake())
    for size in (1, 2, 3):
        copy(predictor, np.zeros((size,), "float32"))
    run(predictor)
    assert not process.wake.is_set()
    for _ in range(4):
        run(predictor)
    assert process.wake.is_set() and (process.runs.waiting, process.runs.not_counted) == (3, 2)
    shapes = {str([t.shape for t in seen.inputs]): seen.runs for seen in snapshot(process).predictors[0].runs.shapes}
    assert shapes == {str([[3]]): 1, str([[7, 7]]): 2}  # past two copied in, from the third on; then the handles, 2 runs of 4 kept


DEMANDED_WHERE_NOT_BUILT = '''
import sys
sys.modules["paddle_doctor.recorder._native"] = None  # as where the install built no C module: its import fails
from paddle_doctor.recorder.live import Process
from paddle_doctor.recorder.writer import Writer

class Nothing:
    def run(self): pass
    def get_input_names(self): return []

process = Process()
writer = Writer(process)
run = process.recorded_run(Nothing.run)
run(Nothing())
writer.write()
print(process.recorder.value, flush=True)
'''


def test_the_c_recorder_demanded_where_it_is_not_built_is_said_and_the_service_goes_on(tmp_path):
    env = {key: value for key, value in os.environ.items() if not key.startswith("PADDLE_DOCTOR_RECORD")}
    env.update(PADDLE_DOCTOR_RECORD_DIR=str(tmp_path), PADDLE_DOCTOR_RECORD_NATIVE=" Require ")
    done = subprocess.run([sys.executable, "-c", DEMANDED_WHERE_NOT_BUILT], capture_output=True, text=True, timeout=120, env=env)
    said = ("PADDLE_DOCTOR_RECORD_NATIVE=require and the recorder's C module is not built here (import of "
            "paddle_doctor.recorder._native halted; None in sys.modules): the runs are noted in Python")
    assert done.returncode == 0 and done.stdout == "python\n" and done.stderr == f"paddle-doctor record: {said}\n"
    record = __import__("json").loads(next(tmp_path.glob("*.json")).read_text())
    assert record["errors"] == [said] and record["recorder"] == "python"
    assert record["predictors"][0]["runs"]["runs"] == 1  # the runs are still recorded, in Python


def test_the_c_recorder_demanded_where_it_is_built_is_the_one_chosen_and_nothing_is_said():
    needs_c_recorder()
    for word in (REQUIRE, " Require "):
        chosen = chosen_runs({NATIVE: word})
        assert (chosen.recorder, chosen.unmet) == (Recorder.NATIVE, None) and settings_problems({NATIVE: word}) == []
    assert settings_problems({NATIVE: "requires"}) == [
        f"{NATIVE}='requires': expected 1, true, yes, on or 0, false, no, off or require; read as on"]
    assert Process(native=True).errors == []
