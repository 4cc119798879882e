"""Runs in a child interpreter and holds Paddle predictors; the parent drives it line by line.

Besides single predictors it holds serving layouts: predictors arranged as a service would
serve them (one behind a lock, clones, a PredictorPool), loaded by persistent client threads
that send requests back to back during a window that starts at an agreed moment, so that
several worker processes can be loaded at once.

Self-contained (stdlib, numpy, paddle, and the doctor's modules that ``session.worker_program``
installs first: the protocol and the PredictorConfig it carries): its text is passed with
``python -c`` so that it runs in the service's own interpreter. Requests and replies are the
JSON lines of ``protocol``; the reply channel is a private copy of the original stdout, and fd 1
is pointed at stderr so that nothing Paddle prints can corrupt the protocol. A crash in native
code kills only this process.
"""

from __future__ import annotations

import itertools
import os
import queue
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any

REPLY = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)

import numpy as np  # noqa: E402
import paddle.inference as inference  # noqa: E402

from ..base.vocabulary import Layout  # noqa: E402
from ..facts.knobs import knob  # noqa: E402
from ..facts.predictor import Call  # noqa: E402
from .protocol import (  # noqa: E402
    Crash,
    Create,
    Created,
    Done,
    Drift,
    DriftOf,
    Drop,
    Exit,
    Feeds,
    FeedShapes,
    Hello,
    LayoutReady,
    Load,
    Loaded,
    LoadWindow,
    Memory,
    MemoryAfterShapes,
    Model,
    Rejection,
    Rss,
    Run,
    Runs,
    ServeLayout,
    Shapes,
    Window,
    failure_line,
    hello_line,
    read_request,
    reply_line,
)

Arrays = dict[str, np.ndarray]  # input name: array

PREDICTORS: dict[str, Any] = {}
FEEDS: list[Arrays] = []  # one per sample
LODS: list[dict[str, list[list[int]]]] = []  # one {input name: LoD} per sample
OUTPUTS: dict[str, list[np.ndarray]] = {}  # the first run's outputs of each loaded predictor
MODEL: list[Model] = []  # the files every predictor is created from
LAYOUTS: dict[str, Serving] = {}


def thread_headroom() -> tuple[int, str] | None:
    """How many more threads this process may start, and what limits it; None where it cannot be read.
    Every thread takes a process id of the whole machine (or of the container's pids.max) and maps a
    stack and a guard page; when they run out, every process on the machine fails to start one."""
    def number(path: str) -> list[str]:
        with open(path) as handle:
            return handle.read().split()
    try:
        in_use = int(number("/proc/loadavg")[3].split("/")[1])
        with open("/proc/self/maps") as handle:
            maps = sum(1 for _ in handle)
        maps_max = int(number("/proc/sys/vm/max_map_count")[0])
        limits = [((maps_max - maps) // 2, f"vm.max_map_count {maps_max}, two maps per thread")]
        for path, name in (("/proc/sys/kernel/pid_max", "kernel.pid_max"), ("/proc/sys/kernel/threads-max", "kernel.threads-max")):
            limit = int(number(path)[0])
            limits.append((limit - in_use, f"{name} {limit} with {in_use} threads running"))
    except (OSError, ValueError, IndexError):
        return None
    try:
        pids_max, pids_now = number("/sys/fs/cgroup/pids.max")[0], int(number("/sys/fs/cgroup/pids.current")[0])
        if pids_max != "max":
            limits.append((int(pids_max) - pids_now, f"the container's pids.max {pids_max} with {pids_now} in use"))
    except (OSError, ValueError, IndexError):
        pass
    return min(limits)


def refuse_thread_storms(threads: int) -> None:
    """Starting more than half of the threads the machine has left would take them from every other
    process (the service's too): Paddle would fail to start them, or the machine would."""
    headroom = thread_headroom()
    if headroom is not None and threads > headroom[0] // 2:
        raise RuntimeError(f"Paddle would start {threads} threads, more than half of the {max(headroom[0], 0)} this "
                           f"machine can still start ({headroom[1]}); not started, so as not to exhaust them for every "
                           f"process on it")


def threads_of(calls: list[Call]) -> int:
    """The math threads the service's Config calls start (on the GPU: none but Paddle's one)."""
    return next((int(args[0]) for method, args in calls if method == knob("threads").setter), 1)


def paddle_config(calls: list[Call], threads: int, quiet: bool = True) -> Any:
    """Paddle's Config for the model, built by ``calls`` in order (a PredictorConfig's, or the service's
    on its device), once ``threads`` threads in all are known to leave the machine enough."""
    refuse_thread_storms(threads)
    model = MODEL[0]
    config = inference.Config(model.program, model.params) if model.params else inference.Config(model.directory)
    if quiet:
        config.disable_glog_info()
    for method, args in calls:
        if method == "enable_tensorrt_engine":  # precision travels by name
            args = [*args[:3], getattr(inference.PrecisionType, args[3]), *args[4:]]
        getattr(config, method)(*args)
    return config


def create_logged(config: Any) -> Created:
    """Create a predictor with Paddle's log (fds 1 and 2) going to a file: the time it took, the passes
    that ran, and the ops passes refused ("Check the Attr(axis) of Op(...) in pass(...) failed")."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile() as log:
        os.dup2(log.fileno(), 1)
        os.dup2(log.fileno(), 2)
        try:
            start = time.perf_counter()
            inference.create_predictor(config)
            created = time.perf_counter() - start
        finally:
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
        log.seek(0)
        text = log.read().decode("utf-8", "replace")
    passes = re.findall(r"Running (?:PIR |IR )?pass \[(\w+)\]", text)
    refused = re.findall(r"Check the (\w+\(\w+\)) of Op\((\w+)\) in pass\((\w+)\) failed", text)
    return Created(created * 1000.0, passes, [Rejection(check, op, pass_name) for check, op, pass_name in refused])


def make_feeds(request: Feeds) -> FeedShapes:
    """One feed dict per sample: synthetic arrays as each sample's spec says, or the arrays of the
    .npz files (checked against the model by the parent before it gets here)."""
    rng = np.random.default_rng(request.seed)
    FEEDS.clear()
    LODS.clear()
    for index, spec in enumerate(request.samples):
        arrays: Arrays = {}
        if request.npz:
            with np.load(request.npz[index]) as data:
                for name in spec:
                    arrays[name] = np.ascontiguousarray(data[name])
        for name, want in spec.items():
            if name in arrays:
                pass
            elif want.dtype.startswith("int"):
                low = want.low if want.low is not None else 0
                high = want.high if want.high is not None else 10
                arrays[name] = rng.integers(low, high, size=want.shape).astype(want.dtype)
            elif want.dtype == "bool":
                arrays[name] = rng.integers(0, 2, size=want.shape).astype(bool)
            else:
                arrays[name] = rng.standard_normal(want.shape).astype(want.dtype)
        FEEDS.append(arrays)
        LODS.append({name: want.lod for name, want in spec.items() if want.lod})
    return FeedShapes([{name: list(array.shape) for name, array in sample.items()} for sample in FEEDS])


def feed(predictor: Any, sample: int = 0, feeds: Arrays | None = None) -> None:
    """Copy sample number ``sample`` (or the arrays ``feeds``, without LoD) into the predictor's inputs."""
    arrays, lods = (feeds, {}) if feeds is not None else (FEEDS[sample], LODS[sample])
    for name in predictor.get_input_names():
        handle = predictor.get_input_handle(name)
        array = arrays[name]
        handle.reshape(list(array.shape))
        handle.copy_from_cpu(array)
        if name in lods:
            handle.set_lod(lods[name])


def fetch(predictor: Any) -> list[np.ndarray]:
    return [predictor.get_output_handle(name).copy_to_cpu() for name in predictor.get_output_names()]


def infer(predictor: Any, sample: int = 0, feeds: Arrays | None = None) -> tuple[float, list[np.ndarray]]:
    start = time.perf_counter()
    feed(predictor, sample, feeds)
    predictor.run()
    outputs = fetch(predictor)
    return (time.perf_counter() - start) * 1000.0, outputs


class Serving:
    """``instances`` predictors, each owned by a worker thread that serves requests in arrival
    order (one instance is one predictor behind a lock), and ``clients`` threads that send
    requests back to back. All threads live as long as the layout, like a server's."""

    def __init__(self, request: ServeLayout):
        kind, instances, clients = request.kind, request.instances, request.clients
        config = paddle_config(request.config.config_calls(), request.config.threads * instances)
        if kind == Layout.POOL:
            self.pool = inference.PredictorPool(config, instances)
            retrieve = getattr(self.pool, "retrieve" if hasattr(self.pool, "retrieve") else "retrive")  # older releases
            predictors = [retrieve(i) for i in range(instances)]
        else:
            main = inference.create_predictor(config)
            predictors = [main] + [main.clone() for _ in range(instances - 1)]
        self.requests: queue.Queue[tuple[threading.Event, list[str]]] = queue.Queue()
        self.served = itertools.count()  # requests cycle through the samples, as the service's would
        for predictor in predictors:
            infer(predictor)
            threading.Thread(target=self.serve, args=(predictor,), daemon=True).start()
        self.jobs: list[queue.Queue[tuple[float, float, int]]] = [queue.Queue() for _ in range(clients)]
        self.results: queue.Queue[tuple[list[float], float, str | None]] = queue.Queue()
        for jobs in self.jobs:
            threading.Thread(target=self.client, args=(jobs,), daemon=True).start()

    def serve(self, predictor: Any) -> None:
        while True:
            done, outcome = self.requests.get()
            try:
                infer(predictor, next(self.served) % len(FEEDS))
            except Exception as exc:
                outcome.append(f"{type(exc).__name__}: {str(exc).strip()[:300]}")
            done.set()

    def client(self, jobs: queue.Queue[tuple[float, float, int]]) -> None:
        done = threading.Event()
        while True:
            start_at, end_at, min_requests = jobs.get()
            times: list[float] = []
            outcome: list[str] = []
            time.sleep(max(0.0, start_at - time.monotonic()))
            while not outcome and (time.monotonic() < end_at or len(times) < min_requests):
                began = time.monotonic()
                done.clear()
                self.requests.put((done, outcome))
                done.wait()
                times.append((time.monotonic() - began) * 1000.0)
            self.results.put((times, time.monotonic(), outcome[0] if outcome else None))

    def window(self, start_at: float, seconds: float, min_requests: int) -> Window:
        for jobs in self.jobs:
            jobs.put((start_at, start_at + seconds, min_requests))
        latencies: list[float] = []
        last = start_at
        for _ in self.jobs:
            times, finished, error = self.results.get()
            if error:
                raise RuntimeError(error)
            latencies.extend(times)
            last = max(last, finished)
        return Window(latencies, last - start_at)


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    raise RuntimeError("/proc/self/status says nothing of the resident memory (no VmRSS line)")


def drift(a: str, b: str) -> Drift:
    x = np.concatenate([o.astype(np.float64).ravel() for o in OUTPUTS[a]])
    y = np.concatenate([o.astype(np.float64).ravel() for o in OUTPUTS[b]])
    denominator = float(np.linalg.norm(x) * np.linalg.norm(y)) or 1.0
    first_a, first_b = OUTPUTS[a][0], OUTPUTS[b][0]
    top1 = None
    if first_a.ndim >= 2 and first_a.shape[-1] > 1:
        top1 = float(np.mean(np.argmax(first_a, axis=-1) == np.argmax(first_b, axis=-1)))
    return Drift(float(np.max(np.abs(x - y))) if x.size else 0.0, float(np.dot(x, y) / denominator), top1)


def load(request: Load) -> Loaded:
    config = request.config
    start = time.perf_counter()
    predictor = inference.create_predictor(paddle_config(config.config_calls(), config.threads))
    created = time.perf_counter() - start
    PREDICTORS[request.arm] = predictor
    first_ms, outputs = infer(predictor)
    OUTPUTS[request.arm] = outputs
    return Loaded(created * 1000.0, first_ms)


def run(request: Run) -> Runs:
    """``request.n`` runs over the samples in turn, from sample number ``request.start``."""
    predictor = PREDICTORS[request.arm]
    times: list[float] = []
    samples: list[int] = []
    for index in range(request.n):
        sample = (request.start + index) % len(FEEDS)
        ms, _ = infer(predictor, sample)
        times.append(ms)
        samples.append(sample)
    return Runs(times, samples)


def run_shapes(request: Shapes) -> MemoryAfterShapes:
    predictor = PREDICTORS[request.arm]
    rng = np.random.default_rng(1)
    growth: list[float] = []
    for shapes in request.shapes:
        feeds: Arrays = {}
        for name, shape in shapes.items():
            dtype = FEEDS[0][name].dtype
            feeds[name] = (rng.integers(0, request.high, size=shape) if dtype.kind in "iu"
                           else rng.standard_normal(shape)).astype(dtype)
        infer(predictor, feeds=feeds)
        growth.append(rss_mb())
    return MemoryAfterShapes(growth)


def drop(request: Drop) -> Done:
    PREDICTORS.pop(request.arm, None)
    OUTPUTS.pop(request.arm, None)
    return Done()


def set_model(request: Model) -> Done:
    MODEL[:] = [request]
    return Done()


def serve_layout(request: ServeLayout) -> LayoutReady:
    start = time.perf_counter()
    LAYOUTS[request.name] = Serving(request)
    return LayoutReady((time.perf_counter() - start) * 1000.0)


def crash(request: Crash) -> Done:
    import signal

    os.kill(os.getpid(), getattr(signal, request.signal))
    return Done()


HANDLERS: dict[type, Callable[[Any], Any]] = {
    Model: set_model,
    Feeds: make_feeds,
    Load: load,
    Create: lambda request: create_logged(paddle_config(request.calls, threads_of(request.calls), quiet=False)),
    Run: run,
    DriftOf: lambda request: drift(request.a, request.b),
    Shapes: run_shapes,
    Drop: drop,
    ServeLayout: serve_layout,
    LoadWindow: lambda request: LAYOUTS[request.name].window(request.start_at, request.seconds, request.min_requests),
    Rss: lambda request: Memory(rss_mb()),
    Crash: crash,
}


def main() -> None:
    REPLY.write(hello_line(Hello(__import__("paddle").__version__)))
    for line in sys.stdin:
        try:
            request = read_request(line)
            if isinstance(request, Exit):
                REPLY.write(reply_line(Done()))
                return
            REPLY.write(reply_line(HANDLERS[type(request)](request)))
        except Exception as exc:  # reported to the parent, which names the config that failed
            message = str(exc).strip().splitlines()
            REPLY.write(failure_line(f"{type(exc).__name__}: {message[0] if message else ''}"[:500]))


main()
