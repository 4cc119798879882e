#!/usr/bin/env python3
"""Cost of the recording hook, measured side by side in one run.

Targets (issue #22):
  request p50 with recording - without           <= max(1% of p50, 3 us)   on the demo CNN
                                                                          and on a model under 1 ms
  start-up with the .pth and PADDLE_DOCTOR_RECORD unset = start-up without it (no measurable difference)

run(): one process, one predictor per model, a request (Tensor.copy_from_cpu, then Predictor.run)
made through the original methods and through the hook's wrappers (installed in the same process,
the predictors built before it, so both sides run the same predictors), the sides alternating call
by call in an order that rotates (each side as often first, second and last), so drift on a
noisy machine and the place in the round hit every side alike; each request is timed alone and the medians
compared, and so are the calling thread's CPU times of the same requests (with one math thread,
Paddle computes on the calling thread; time taken by other work on the machine is not in them); a
third side, a wrapper that only calls through, shows what wrapping at all measures as on this
machine. Last, the wrappers alone around a run() that does nothing: the cost itself, in µs.
Start-up: `python -c pass` in two fresh venvs, one with the .pth in its site-packages, interleaved.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PTH = REPO / "doctor" / "record" / "paddle_doctor_record.pth"

RUN_SIDE_BY_SIDE = r'''
import sys, time, json
import numpy as np
import paddle.inference as inference
from paddle_doctor.record import hook

models = json.loads(sys.argv[1])
calls = int(sys.argv[2])
built = []
for name, folder, shape in models:
    config = inference.Config(folder + "/inference.json", folder + "/inference.pdiparams")
    config.disable_gpu()
    config.set_cpu_math_library_num_threads(1)
    config.disable_mkldnn()  # the detector's upsampling has no oneDNN kernel in Paddle 3.3
    predictor = inference.create_predictor(config)
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    built.append((name, predictor, handle, np.ones(shape, "float32")))
original = inference.Predictor.run, inference.Tensor.copy_from_cpu
hook.wrap_inference(inference)
wrapped = inference.Predictor.run, inference.Tensor.copy_from_cpu
assert wrapped[0] is not original[0] and wrapped[1] is not original[1]
clock, thread_clock = time.perf_counter_ns, time.thread_time_ns


def passing_run(predictor):  # the control: a wrapper that does nothing but call through, as the hook's call Paddle's
    return original[0](predictor)  # (no **kwargs: an empty one sends pybind11's overloaded run() a slower way, ~10 us)


def passing_copy(tensor, data):
    return original[1](tensor, data)


passing = (passing_run, passing_copy)
for name, predictor, handle, data in built:
    for _ in range(20):
        for run, copy in (original, wrapped):
            copy(handle, data); run(predictor)
    times = {"without": [], "with": [], "pass-through": []}
    cpu = {side: [] for side in times}
    sides = [("without", original), ("with", wrapped), ("pass-through", passing)]
    for turn in range(calls):  # each side in each place of the round equally often, both ways round
        order = sides[turn % 3:] + sides[:turn % 3]
        for side, (run, copy) in order if (turn // 3) % 2 == 0 else order[::-1]:
            start, start_cpu = clock(), thread_clock()
            copy(handle, data); run(predictor)
            cpu[side].append(thread_clock() - start_cpu); times[side].append(clock() - start)
    print(json.dumps({"model": name, **times, "cpu": cpu}))

# the wrappers alone, around a run() and a copy that do nothing: what recording adds to a request
class Nothing:
    def run(self): pass
    def copy_from_cpu(self, data): pass
nothing, data = Nothing(), np.ones((1, 3, 32, 32), "float32")
hook.PROCESS.live_of(nothing)
bare = (Nothing.run, Nothing.copy_from_cpu)
from paddle_doctor.record.live import recorded_copy, recorded_run
dressed = (recorded_run(hook.PROCESS, Nothing.run), recorded_copy(Nothing.copy_from_cpu))
times = {"without": [], "with": []}
for pair in range(calls * 10):
    for side, (run, copy) in (("without", bare), ("with", dressed)) if pair % 2 == 0 else (("with", dressed), ("without", bare)):
        start = clock(); copy(nothing, data); run(nothing); times[side].append(clock() - start)
print(json.dumps({"model": "a run() that does nothing", **times}))
'''


def side_by_side(models: list[tuple[str, str, list[int]]], calls: int) -> list[dict]:
    import json

    env = dict(os.environ, GLOG_minloglevel="3", OMP_NUM_THREADS="1")
    env.pop("PADDLE_DOCTOR_RECORD", None)
    env["PADDLE_DOCTOR_RECORD_DIR"] = tempfile.mkdtemp(prefix="paddle-doctor-bench-record-")
    done = subprocess.run([sys.executable, "-c", RUN_SIDE_BY_SIDE, json.dumps(models), str(calls)],
                          capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def start_up(rounds: int) -> tuple[list[float], list[float]]:
    with tempfile.TemporaryDirectory(prefix="paddle-doctor-bench-venv-") as folder:
        plain, hooked = Path(folder) / "plain", Path(folder) / "hooked"
        for where in (plain, hooked):
            venv.create(where, with_pip=False)
        (site,) = hooked.glob("lib/python*/site-packages")
        (site / PTH.name).write_text(PTH.read_text())
        env = {key: value for key, value in os.environ.items() if not key.startswith("PADDLE_DOCTOR_RECORD")}
        times: tuple[list[float], list[float]] = ([], [])
        for index in range(rounds * 2):
            which = (index + index // 2) % 2  # ABBA order
            python = str((plain, hooked)[which] / "bin" / "python")
            start = time.perf_counter()
            subprocess.run([python, "-c", "pass"], check=True, env=env)
            times[which].append(time.perf_counter() - start)
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="requests per side and model")
    parser.add_argument("--start-rounds", type=int, default=60)
    args = parser.parse_args()
    from paddle_doctor.modelzoo import build_model

    with tempfile.TemporaryDirectory(prefix="paddle-doctor-bench-models-") as folder:
        cnn = build_model("cnn", "pir", Path(folder) / "cnn")
        small = build_model("detector", "pir", Path(folder) / "detector")
        results = side_by_side([("demo CNN 1x3x224x224", str(cnn), [1, 3, 224, 224]),
                                ("detector 1x3x32x32", str(small), [1, 3, 32, 32])], args.calls)
    print(f"request (copy_from_cpu + run): {args.calls} per side and model, alternating, 1 math thread, oneDNN off")
    every_bound_met = True
    for result in results:
        without, with_ = statistics.median(result["without"]) / 1e3, statistics.median(result["with"]) / 1e3
        overhead = with_ - without
        bound = max(0.01 * without, 3.0)
        met = overhead <= bound
        every_bound_met &= met
        print(f"  {result['model']:<26} p50 without {without:9.1f} us  with {with_:9.1f} us  "
              f"overhead {overhead:+7.2f} us ({overhead / without:+.2%})  bound {bound:.2f} us  {'OK' if met else 'OVER'}")
        if "pass-through" in result:
            control = statistics.median(result["pass-through"]) / 1e3
            print(f"  {'':<26} a pass-through wrapper (the noise floor of wrapping at all): {control - without:+7.2f} us; "
                  f"recording beyond it: {with_ - control:+7.2f} us")
            paired = {side: statistics.median(b - a for a, b in zip(result["without"], result[side])) / 1e3
                      for side in ("with", "pass-through")}
            print(f"  {'':<26} the median of the differences within a turn (the machine at the same moment): "
                  f"with {paired['with']:+.2f} us, pass-through {paired['pass-through']:+.2f} us")
            cpu = {side: statistics.median(values) / 1e3 for side, values in result["cpu"].items()}
            print(f"  {'':<26} the calling thread's CPU time (what other work on the machine does not add to): "
                  f"without {cpu['without']:.1f} us, with {cpu['with'] - cpu['without']:+.2f} us, "
                  f"pass-through {cpu['pass-through'] - cpu['without']:+.2f} us")
    plain, hooked = start_up(args.start_rounds)
    p, h = statistics.median(plain) * 1e3, statistics.median(hooked) * 1e3
    spread = statistics.quantiles(plain, n=4)
    print(f"start-up `python -c pass`, {args.start_rounds} rounds each, ABBA order, PADDLE_DOCTOR_RECORD unset:")
    print(f"  without the .pth  median {p:.2f} ms (quartiles {spread[0] * 1e3:.2f}-{spread[2] * 1e3:.2f})")
    print(f"  with the .pth     median {h:.2f} ms   difference {h - p:+.2f} ms ({(h - p) / p:+.1%})")
    print(f"run() bounds: {'all met' if every_bound_met else 'NOT met'}")


if __name__ == "__main__":
    main()
