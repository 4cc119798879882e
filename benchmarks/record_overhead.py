#!/usr/bin/env python3
"""Cost of the recording hook, measured side by side in one run.

Targets (issues #22 and #33):
  request p50 with recording - without           <= max(1% of p50, 3 us)   on the demo CNN
                                                                          and on models under 1 ms
  run() repeated with nothing copied in since     <= the same bound        on a model under 0.1 ms
  start-up with the .pth and PADDLE_DOCTOR_RECORD unset = start-up without it (no measurable difference)

run(): one process, one predictor per case, a request (Tensor.copy_from_cpu, then Predictor.run),
or a run() alone (the inputs copied in before the first, the recorder reading what its last run had),
made through the original methods and through the recorder's wrappers: its C module's (what a
service records with) and, beside it, its Python fallback's (where the C module was not built),
each into its own recorder (both remember the same predictors, so every side runs the same ones),
and a wrapper that only calls through (what wrapping at all measures as on this machine). The
sides alternate call by call in an order that rotates (each side as often first, second and last,
both ways round), so drift on a noisy machine and the place in the round hit every side alike;
each request is timed alone and the medians compared, and so are the medians of the differences
within a turn and the calling thread's CPU times of the same requests (with one math thread,
Paddle computes on the calling thread; time taken by other work on the machine is not in them).
The recorders' runs are folded every few hundred turns, outside the timed requests, as the
writer's thread does in a service; what a fold costs per run is printed too (the writer's CPU,
not the request's). Last, the wrappers alone around a run() that does nothing: the cost itself.
Start-up: `python -c pass` in fresh venvs without a .pth, with an empty one, and with the recorder's.

The figures are written to benchmarks/results/record_overhead.json (``benchmarks/results.py`` renders the table).
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
PTH = REPO / "doctor" / "recorder" / "paddle_doctor_record.pth"

RUN_SIDE_BY_SIDE = r'''
import sys, time, json
import numpy as np
import paddle.inference as inference
from paddle_doctor.recorder.callers import build_site
from paddle_doctor.recorder.live import Process
from paddle_doctor.base.vocabulary import BuiltBy

models = json.loads(sys.argv[1])
calls = json.loads(sys.argv[2])
native, python = Process(native=True), Process(native=False)
assert native.errors == [], native.errors  # the C recorder demanded: built with the package where a compiler was at hand
recorders = {"native": native, "python": python}
original = inference.Predictor.run, inference.Tensor.copy_from_cpu
built = []
for name, folder, shape, copied in models:
    config = inference.Config(folder + "/inference.json", folder + "/inference.pdiparams")
    config.disable_gpu()
    config.set_cpu_math_library_num_threads(1)
    config.disable_mkldnn()  # the detector's upsampling has no oneDNN kernel in Paddle 3.3
    predictor = inference.create_predictor(config)
    for process in recorders.values():
        process.add(predictor, BuiltBy.CREATE_PREDICTOR, None, None, build_site(None))
    handle = predictor.get_input_handle(predictor.get_input_names()[0])
    built.append((name, predictor, handle, np.ones(shape, "float32"), copied))
clock, thread_clock = time.perf_counter_ns, time.thread_time_ns


def passing_run(predictor):  # the control: a wrapper that does nothing but call through, as the hook's call Paddle's
    return original[0](predictor)  # (no **kwargs: an empty one sends pybind11's overloaded run() a slower way, ~10 us)


def passing_copy(tensor, data):
    return original[1](tensor, data)


sides = [("without", original), ("pass-through", (passing_run, passing_copy))]
sides += [(kind, (process.recorded_run(original[0]), process.recorded_copy(original[1]))) for kind, process in recorders.items()]
folds = {kind: [0, 0] for kind in recorders}  # ns folding, runs folded


def fold_all():
    for kind, process in recorders.items():
        runs = process.runs.waiting
        start = thread_clock()
        process.fold()
        folds[kind][0] += thread_clock() - start
        folds[kind][1] += runs


for (name, predictor, handle, data, copied), count in zip(built, calls):
    for _ in range(20):
        for _, (run, copy) in sides:
            copy(handle, data); run(predictor)
    for _, (run, copy) in sides:
        run(predictor)  # what each recorder's copy noted is taken: from here on, a run() alone reads no copy
    fold_all()
    times = {side: [] for side, _ in sides}
    cpu = {side: [] for side in times}
    for turn in range(count):  # each side in each place of the round equally often, both ways round
        order = sides[turn % len(sides):] + sides[:turn % len(sides)]
        for side, (run, copy) in order if (turn // len(sides)) % 2 == 0 else order[::-1]:
            start, start_cpu = clock(), thread_clock()
            if copied:
                copy(handle, data)
            run(predictor)
            cpu[side].append(thread_clock() - start_cpu); times[side].append(clock() - start)
        if turn % 500 == 499:
            fold_all()
    fold_all()
    print(json.dumps({"model": name, **times, "cpu": cpu}))
print(json.dumps({"folds": {kind: spent / max(1, runs) for kind, (spent, runs) in folds.items()},
                  "shapes": {kind: [list(map(str, live.shapes)) for live in process.predictors] for kind, process in recorders.items()}}))

# the wrappers alone, around a run() and a copy that do nothing: what recording adds to a request
class Nothing:
    def run(self): pass
    def copy_from_cpu(self, data): pass
nothing, data = Nothing(), np.ones((1, 3, 32, 32), "float32")
bare = [("without", (Nothing.run, Nothing.copy_from_cpu))]
for kind, process in recorders.items():
    process.live_of(nothing)
    bare.append((kind, (process.recorded_run(Nothing.run), process.recorded_copy(Nothing.copy_from_cpu))))
times = {side: [] for side, _ in bare}
for turn in range(calls[-1]):
    for side, (run, copy) in bare if turn % 2 == 0 else bare[::-1]:
        start = clock(); copy(nothing, data); run(nothing); times[side].append(clock() - start)
    if turn % 500 == 499:
        fold_all()
print(json.dumps({"model": "a run() that does nothing", **times}))
'''


def side_by_side(models: list[tuple[str, str, list[int], bool]], calls: list[int]) -> list[dict]:
    import json

    env = dict(os.environ, GLOG_minloglevel="3", OMP_NUM_THREADS="1")
    env.pop("PADDLE_DOCTOR_RECORD", None)
    env["PADDLE_DOCTOR_RECORD_DIR"] = tempfile.mkdtemp(prefix="paddle-doctor-bench-record-")
    done = subprocess.run([sys.executable, "-c", RUN_SIDE_BY_SIDE, json.dumps(models), json.dumps(calls)],
                          capture_output=True, text=True, env=env, timeout=3600)
    if done.returncode:
        raise SystemExit(done.stderr[-3000:])
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


START_SIDES = ("without", "an empty .pth", "the .pth")


def start_up(rounds: int) -> dict[str, list[float]]:
    """``python -c pass`` in three fresh venvs: without a .pth, with an empty one (what ``site`` pays
    to read any .pth: the floor of a hook that starts this way), and with the recorder's, taking turns
    in every order (each as often first, second and last)."""
    with tempfile.TemporaryDirectory(prefix="paddle-doctor-bench-venv-") as folder:
        pythons = []
        for index, side in enumerate(START_SIDES):
            where = Path(folder) / str(index)
            venv.create(where, with_pip=False)
            (site,) = where.glob("lib/python*/site-packages")
            if side == "an empty .pth":
                (site / "empty.pth").write_text("\n")
            elif side == "the .pth":
                (site / PTH.name).write_text(PTH.read_text())
            pythons.append(str(where / "bin" / "python"))
        env = {key: value for key, value in os.environ.items() if not key.startswith("PADDLE_DOCTOR_RECORD")}
        orders = list(itertools.permutations(range(len(START_SIDES))))
        times: dict[str, list[float]] = {side: [] for side in START_SIDES}
        for turn in range(rounds):
            for which in orders[turn % len(orders)]:
                start = time.perf_counter()
                subprocess.run([pythons[which], "-c", "pass"], check=True, env=env)
                times[START_SIDES[which]].append(time.perf_counter() - start)
        return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=2000, help="requests per side on the demo CNN")
    parser.add_argument("--small-calls", type=int, default=20000, help="requests per side on the model under 1 ms")
    parser.add_argument("--tiny-calls", type=int, default=40000, help="requests, and run()s alone, per side on the model under 0.1 ms")
    parser.add_argument("--start-rounds", type=int, default=300)
    args = parser.parse_args()
    from paddle_doctor.verify.modelzoo import build_model

    with tempfile.TemporaryDirectory(prefix="paddle-doctor-bench-models-") as folder:
        cnn = build_model("cnn", "pir", Path(folder) / "cnn")
        small = build_model("detector", "pir", Path(folder) / "detector")
        results = side_by_side([("demo CNN 1x3x224x224", str(cnn), [1, 3, 224, 224], True),
                                ("detector 1x3x32x32", str(small), [1, 3, 32, 32], True),
                                ("detector 1x3x16x16", str(small), [1, 3, 16, 16], True),
                                ("detector 16x16, no copy", str(small), [1, 3, 16, 16], False)],
                               [args.calls, args.small_calls, args.tiny_calls, args.tiny_calls])
    print(f"request (copy_from_cpu + run): {args.calls} per side on the CNN, {args.small_calls} on the detector at 32x32, "
          f"{args.tiny_calls} at 16x16, and as many run()s alone (nothing copied in since the last run); "
          "the sides alternating, 1 math thread, oneDNN off")
    every_bound_met = True
    figures: dict[str, Any] = {"calls": args.calls, "small_calls": args.small_calls, "tiny_calls": args.tiny_calls,
                               "start_rounds": args.start_rounds, "run": {}}
    summary = []
    for result in results:
        if "folds" in result:
            folded = ", ".join(f"{kind} {ns / 1e3:.2f} us" for kind, ns in result["folds"].items())
            print(f"  folding the runs, on the writer's thread, per run: {folded}")
            same = result["shapes"]["native"] == result["shapes"]["python"]
            print(f"  the shapes each recorder counted: {'the same' if same else 'NOT the same: ' + repr(result['shapes'])}")
            every_bound_met &= same
            figures["fold_us_per_run"] = {kind: round(ns / 1e3, 3) for kind, ns in result["folds"].items()}
            figures["same_shapes"] = same
            continue
        without = statistics.median(result["without"]) / 1e3
        bound = max(0.01 * without, 3.0)
        print(f"  {result['model']:<26} p50 without {without:9.1f} us   bound {bound:.2f} us")
        model: dict[str, Any] = {"p50_without_us": round(without, 3), "bound_us": round(bound, 3), "sides": {}}
        for side in [side for side in result if side not in ("model", "without", "cpu")]:
            median = statistics.median(result[side]) / 1e3
            paired = statistics.median(b - a for a, b in zip(result["without"], result[side])) / 1e3
            cpu = ""
            measured = {"p50_us": round(median, 3), "added_us": round(median - without, 3),
                        "added_share": round((median - without) / without, 5), "within_a_turn_us": round(paired, 3)}
            if "cpu" in result:
                extra = (statistics.median(result["cpu"][side]) - statistics.median(result["cpu"]["without"])) / 1e3
                cpu = f"  CPU {extra:+7.2f} us"
                measured["cpu_added_us"] = round(extra, 3)
            judged = ""
            if side == "native":  # what a service records with: the bound is its
                met = median - without <= bound
                every_bound_met &= met
                judged = "  OK" if met else "  OVER"
                measured["within_bound"] = met
                summary.append(f"{result['model']}: the C recorder {median - without:+.2f} us on a p50 of {without:.1f} us "
                               f"(target <= {bound:.2f} us) {'OK' if met else 'OVER'}; within a turn {paired:+.2f} us")
            model["sides"][side] = measured
            print(f"    {side:<13} p50 {median:9.1f} us  {median - without:+7.2f} us ({(median - without) / without:+.2%})"
                  f"  within a turn {paired:+7.2f} us{cpu}{judged}")
        figures["run"][result["model"]] = model
    times = start_up(args.start_rounds)
    without = times["without"]
    spread = statistics.quantiles(without, n=4)
    print(f"start-up `python -c pass`, {args.start_rounds} turns, PADDLE_DOCTOR_RECORD unset "
          f"(without: median {statistics.median(without) * 1e3:.2f} ms, quartiles {spread[0] * 1e3:.2f}-{spread[2] * 1e3:.2f}):")
    start: dict[str, Any] = {"without_median_ms": round(statistics.median(without) * 1e3, 3),
                             "without_quartiles_ms": [round(spread[0] * 1e3, 3), round(spread[2] * 1e3, 3)]}
    for side in START_SIDES[1:]:
        added = statistics.median(times[side]) - statistics.median(without)
        paired = statistics.median(b - a for a, b in zip(without, times[side]))
        print(f"  {side:<13} median {added * 1e3:+.3f} ms, within a turn {paired * 1e3:+.3f} ms")
        start[side] = {"added_ms": round(added * 1e3, 3), "within_a_turn_ms": round(paired * 1e3, 3)}
    print(f"run() bounds (the C recorder's): {'all met' if every_bound_met else 'NOT met'}")
    figures.update(start_up=start, every_bound_met=every_bound_met)
    summary.append(f"start-up `python -c pass` with the .pth and PADDLE_DOCTOR_RECORD unset {start['the .pth']['added_ms']:+.3f} ms "
                   f"(an empty .pth {start['an empty .pth']['added_ms']:+.3f} ms) on {start['without_median_ms']:.2f} ms; "
                   f"run() bounds (the C recorder's): {'all met' if every_bound_met else 'NOT met'}")
    from results import write

    print(f"wrote {write('record_overhead', summary, figures)}")


if __name__ == "__main__":
    main()
