"""Runs in a child interpreter and holds Paddle predictors; the parent drives it line by line.

Besides single predictors it holds serving layouts: predictors arranged as a service would
serve them (one behind a lock, clones, a PredictorPool), loaded by persistent client threads
that send requests back to back during a window that starts at an agreed moment, so that
several worker processes can be loaded at once.

Self-contained (stdlib, numpy, paddle): its text is passed with ``python -c`` so that it runs in
the service's own interpreter. Requests and replies are JSON lines; the reply channel is a
private copy of the original stdout, and fd 1 is pointed at stderr so that nothing Paddle prints
can corrupt the protocol. A crash in native code kills only this process.
"""

import itertools
import json
import os
import queue
import re
import sys
import tempfile
import threading
import time

sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]
REPLY = os.fdopen(os.dup(1), "w", buffering=1)
os.dup2(2, 1)

import numpy as np  # noqa: E402
import paddle.inference as inference  # noqa: E402

PREDICTORS = {}
FEEDS = []  # one {input name: array} per sample
LODS = []  # one {input name: LoD} per sample
OUTPUTS = {}
MODEL = {}
LAYOUTS = {}


def reply(**payload):
    REPLY.write(json.dumps(payload) + "\n")


def thread_headroom():
    """How many more threads this process may start, and what limits it; None where it cannot be read.
    Every thread takes a process id of the whole machine (or of the container's pids.max) and maps a
    stack and a guard page; when they run out, every process on the machine fails to start one."""
    def number(path):
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


def refuse_thread_storms(threads):
    """Starting more than half of the threads the machine has left would take them from every other
    process (the service's too): Paddle would fail to start them, or the machine would."""
    headroom = thread_headroom()
    if headroom is not None and threads > headroom[0] // 2:
        raise RuntimeError(f"Paddle would start {threads} threads, more than half of the {max(headroom[0], 0)} this "
                           f"machine can still start ({headroom[1]}); not started, so as not to exhaust them for every "
                           f"process on it")


def threads_of(calls):
    return next((int(args[0]) for method, args in calls if method == "set_cpu_math_library_num_threads"), 1)


def make_config(calls, quiet=True, instances=1):
    refuse_thread_storms(threads_of(calls) * instances)
    files = MODEL
    config = inference.Config(files["program"], files["params"]) if files.get("params") else inference.Config(files["dir"])
    if quiet:
        config.disable_glog_info()
    for method, args in calls:
        if method == "enable_tensorrt_engine":  # precision travels by name
            args = [*args[:3], getattr(inference.PrecisionType, args[3]), *args[4:]]
        getattr(config, method)(*args)
    return config


def create_logged(config):
    """Create a predictor with Paddle's log (fds 1 and 2) going to a file; returns the time it took,
    the passes that ran, and the ops passes refused ("Check the Attr(axis) of Op(...) in pass(...) failed")."""
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
    return created * 1000.0, passes, [{"check": c, "op": o, "pass_name": p} for c, o, p in refused]


def make_feeds(samples, npz, seed):
    """One feed dict per sample: synthetic arrays as each sample's spec says, or the arrays of the
    .npz files (checked against the model by the parent before it gets here)."""
    rng = np.random.default_rng(seed)
    FEEDS.clear()
    LODS.clear()
    for index, spec in enumerate(samples):
        arrays = {}
        if npz:
            with np.load(npz[index]) as data:
                for name in spec:
                    arrays[name] = np.ascontiguousarray(data[name])
        for name, want in spec.items():
            shape, dtype = want["shape"], want["dtype"]
            if name in arrays:
                pass
            elif dtype.startswith("int"):
                arrays[name] = rng.integers(want.get("low", 0), want.get("high", 10), size=shape).astype(dtype)
            elif dtype == "bool":
                arrays[name] = rng.integers(0, 2, size=shape).astype(bool)
            else:
                arrays[name] = rng.standard_normal(shape).astype(dtype)
        FEEDS.append(arrays)
        LODS.append({name: want["lod"] for name, want in spec.items() if want.get("lod")})


def feed(predictor, sample=0, feeds=None):
    """Copy sample number ``sample`` (or the arrays ``feeds``, without LoD) into the predictor's inputs."""
    arrays, lods = (feeds, {}) if feeds is not None else (FEEDS[sample], LODS[sample])
    for name in predictor.get_input_names():
        handle = predictor.get_input_handle(name)
        array = arrays[name]
        handle.reshape(list(array.shape))
        handle.copy_from_cpu(array)
        if name in lods:
            handle.set_lod(lods[name])


def fetch(predictor):
    return [predictor.get_output_handle(name).copy_to_cpu() for name in predictor.get_output_names()]


def infer(predictor, sample=0, feeds=None):
    start = time.perf_counter()
    feed(predictor, sample, feeds)
    predictor.run()
    outputs = fetch(predictor)
    return (time.perf_counter() - start) * 1000.0, outputs


class Layout:
    """``instances`` predictors, each owned by a worker thread that serves requests in arrival
    order (one instance is one predictor behind a lock), and ``clients`` threads that send
    requests back to back. All threads live as long as the layout, like a server's."""

    def __init__(self, kind, instances, calls, clients):
        config = make_config(calls, instances=instances)
        if kind == "pool":
            self.pool = inference.PredictorPool(config, instances)
            retrieve = getattr(self.pool, "retrieve", None) or self.pool.retrive
            predictors = [retrieve(i) for i in range(instances)]
        else:
            main = inference.create_predictor(config)
            predictors = [main] + [main.clone() for _ in range(instances - 1)]
        self.requests = queue.Queue()
        self.served = itertools.count()  # requests cycle through the samples, as the service's would
        for predictor in predictors:
            infer(predictor)
            threading.Thread(target=self.serve, args=(predictor,), daemon=True).start()
        self.jobs = [queue.Queue() for _ in range(clients)]
        self.results = queue.Queue()
        for jobs in self.jobs:
            threading.Thread(target=self.client, args=(jobs,), daemon=True).start()

    def serve(self, predictor):
        while True:
            done, outcome = self.requests.get()
            try:
                infer(predictor, next(self.served) % len(FEEDS))
            except Exception as exc:
                outcome.append(f"{type(exc).__name__}: {str(exc).strip()[:300]}")
            done.set()

    def client(self, jobs):
        done = threading.Event()
        while True:
            start_at, end_at, min_requests = jobs.get()
            times, outcome = [], []
            time.sleep(max(0.0, start_at - time.monotonic()))
            while not outcome and (time.monotonic() < end_at or len(times) < min_requests):
                began = time.monotonic()
                done.clear()
                self.requests.put((done, outcome))
                done.wait()
                times.append((time.monotonic() - began) * 1000.0)
            self.results.put((times, time.monotonic(), outcome[0] if outcome else None))

    def window(self, start_at, seconds, min_requests):
        for jobs in self.jobs:
            jobs.put((start_at, start_at + seconds, min_requests))
        latencies, last = [], start_at
        for _ in self.jobs:
            times, finished, error = self.results.get()
            if error:
                raise RuntimeError(error)
            latencies.extend(times)
            last = max(last, finished)
        return {"ms": latencies, "seconds": last - start_at}


def rss_mb():
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    return None


def drift(a, b):
    x = np.concatenate([o.astype(np.float64).ravel() for o in OUTPUTS[a]])
    y = np.concatenate([o.astype(np.float64).ravel() for o in OUTPUTS[b]])
    denominator = float(np.linalg.norm(x) * np.linalg.norm(y)) or 1.0
    first_a, first_b = OUTPUTS[a][0], OUTPUTS[b][0]
    top1 = None
    if first_a.ndim >= 2 and first_a.shape[-1] > 1:
        top1 = float(np.mean(np.argmax(first_a, axis=-1) == np.argmax(first_b, axis=-1)))
    return {"max_abs_diff": float(np.max(np.abs(x - y))) if x.size else 0.0,
            "cosine": float(np.dot(x, y) / denominator), "top1_agreement": top1}


def handle(request):
    command = request["cmd"]
    if command == "model":
        MODEL.update(request["files"])
        return {}
    if command == "feeds":
        make_feeds(request["samples"], request.get("npz"), request.get("seed", 0))
        return {"shapes": [{name: list(array.shape) for name, array in sample.items()} for sample in FEEDS]}
    if command == "load":
        start = time.perf_counter()
        predictor = inference.create_predictor(make_config(request["calls"]))
        created = time.perf_counter() - start
        PREDICTORS[request["arm"]] = predictor
        first_ms, outputs = infer(predictor)
        OUTPUTS[request["arm"]] = outputs
        return {"create_ms": created * 1000.0, "first_ms": first_ms}
    if command == "create":
        created_ms, passes, refused = create_logged(make_config(request["calls"], quiet=False))
        return {"create_ms": created_ms, "passes": passes, "rejections": refused}
    if command == "run":  # n runs over the samples in turn, from sample number `start`
        predictor = PREDICTORS[request["arm"]]
        times, samples = [], []
        start = int(request.get("start", 0))
        for index in range(int(request["n"])):
            sample = (start + index) % len(FEEDS)
            ms, _ = infer(predictor, sample)
            times.append(ms)
            samples.append(sample)
        return {"ms": times, "samples": samples}
    if command == "drift":
        return drift(request["a"], request["b"])
    if command == "shapes":
        predictor = PREDICTORS[request["arm"]]
        rng = np.random.default_rng(1)
        growth = []
        for shapes in request["shapes"]:
            feeds = {}
            for name, shape in shapes.items():
                dtype = FEEDS[0][name].dtype
                feeds[name] = (rng.integers(0, request.get("high", 10), size=shape) if dtype.kind in "iu"
                               else rng.standard_normal(shape)).astype(dtype)
            infer(predictor, feeds=feeds)
            growth.append(rss_mb())
        return {"rss_mb": growth}
    if command == "drop":
        PREDICTORS.pop(request["arm"], None)
        OUTPUTS.pop(request["arm"], None)
        return {}
    if command == "layout":
        start = time.perf_counter()
        LAYOUTS[request["name"]] = Layout(request["kind"], int(request["instances"]), request["calls"], int(request["clients"]))
        return {"create_ms": (time.perf_counter() - start) * 1000.0}
    if command == "window":
        return LAYOUTS[request["name"]].window(float(request["start_at"]), float(request["seconds"]), int(request["min_requests"]))
    if command == "rss":
        return {"rss_mb": rss_mb()}
    if command == "crash":
        import signal

        os.kill(os.getpid(), getattr(signal, request["signal"]))
    raise ValueError(f"unknown command {command!r}")


def main():
    reply(ready=True, paddle=__import__("paddle").__version__)
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "exit":
            reply(ok=True)
            return
        try:
            reply(ok=True, **handle(request))
        except Exception as exc:  # reported to the parent, which names the config that failed
            message = str(exc).strip().splitlines()
            reply(ok=False, error=f"{type(exc).__name__}: {message[0] if message else ''}"[:500])


main()
