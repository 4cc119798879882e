#!/usr/bin/env python3
"""Fusion coverage: reading and diffing a program against creating its predictor, in one run.

Target (issue: graph-fusion coverage): reading the ERNIE-Tiny-shaped encoder's program and its
optimised program and diffing them (patterns, alignment, reasons, coverage) takes at most 3x the
time of creating its predictor once (CPU, oneDNN on).

Both are medians of --repeat runs. The predictor is created in the doctor's worker (Paddle
already imported, the model given), exactly as the graph probe does; reading and diffing run in
this process. The whole probe (worker start and Paddle import included) is printed for context.

The figures are written to benchmarks/results/fusion_read.json (``benchmarks/results.py`` renders the table).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from paddle_doctor.base.interpreter import Interpreter
from paddle_doctor.facts import ServiceConfig
from paddle_doctor.facts.graph import GraphFacts, OptimisedProgram
from paddle_doctor.graph.coverage import analyse
from paddle_doctor.graph.program import read_program
from paddle_doctor.verify.graph_probe import OPTIMISED_FILES, probe_graph, service_calls
from paddle_doctor.verify.model import ModelRun
from paddle_doctor.verify.modelzoo import build_model
from paddle_doctor.verify.protocol import Create

TARGET = 3.0


def facts_for(model: str):
    from paddle_doctor.facts import Facts, PaddleFacts

    return Facts(service=ServiceConfig(model=model, onednn=True),
                 paddle=PaddleFacts(status="ok", python=sys.executable, mkldnn_default_on=True))


def create_times(facts, model: str, repeat: int, optimised_dir: str) -> list[float]:
    """Predictor creation in the worker; the first creation also writes the optimised program."""
    with ModelRun(model) as run:
        session = run.start_worker(Interpreter(sys.executable))
        session.request(300, Create(service_calls(facts, optim_cache_dir=optimised_dir, save_optim_model=True)))
        return [session.request(300, Create(service_calls(facts))).create_ms for _ in range(repeat)]


def read_and_diff_ms(program: str, optimised: str) -> float:
    start = time.perf_counter()
    analyse(read_program(program), OptimisedProgram("read", pipeline="PIR program, CPU with oneDNN"), read_program(optimised))
    return (time.perf_counter() - start) * 1000.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="model directory [default: build the ERNIE-Tiny-shaped encoder]")
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="fusion-bench-"))
    try:
        model = args.model or str(build_model("encoder", "pir", workdir / "encoder"))
        facts = facts_for(model)
        optimised_dir = workdir / "optimised"
        optimised_dir.mkdir()
        create = create_times(facts, model, args.repeat, str(optimised_dir))
        optimised = next(str(optimised_dir / n) for n in OPTIMISED_FILES if (optimised_dir / n).is_file())
        start = time.perf_counter()
        with ModelRun(model) as run:
            files = run.files
            graph = probe_graph(facts, run)
        probe_s = time.perf_counter() - start
        diff = [read_and_diff_ms(files.program, optimised) for _ in range(args.repeat)]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    read_diff, created = statistics.median(diff), statistics.median(create)
    ratio = read_diff / created
    print(f"model                  {files.program} ({graph.ops} ops; optimised {graph.optimised.ops} ops)")
    print(f"coverage               {graph.total.fused}/{graph.total.fusible} fused ({graph.total.coverage:.0%})")
    print(f"read + diff            {read_diff:8.1f} ms  (median of {len(diff)}: {', '.join(f'{d:.1f}' for d in diff)})")
    print(f"create predictor once  {created:8.1f} ms  (median of {len(create)}: {', '.join(f'{c:.1f}' for c in create)})")
    print(f"ratio                  {ratio:8.2f}     target <= {TARGET:g}  {'ok' if ratio <= TARGET else 'MISSED'}")
    print(f"whole graph probe      {probe_s * 1000:8.1f} ms  (worker start, Paddle import, create with log, read, diff)")
    print(f"wrote {written(files.program, graph, diff, create, probe_s)}")


def written(program: str, graph: GraphFacts, diff: list[float], create: list[float], probe_s: float) -> Path:
    """The figures printed, in benchmarks/results/fusion_read.json (``benchmarks/results.py`` renders the table)."""
    from results import write

    read_diff, created = statistics.median(diff), statistics.median(create)
    ratio = read_diff / created
    summary = [(f"read + diff {read_diff:.1f} ms / create the predictor once {created:.1f} ms: {ratio:.2f} (target <= {TARGET:g}) "
               f"{'OK' if ratio <= TARGET else 'OVER'}; coverage {graph.total.fused}/{graph.total.fusible} fused "
               f"({graph.total.coverage:.0%}); the whole graph probe {probe_s * 1000:.0f} ms")]
    figures = {"program": program, "ops": graph.ops, "optimised_ops": graph.optimised.ops, "fused": graph.total.fused,
               "fusible": graph.total.fusible, "coverage": round(graph.total.coverage, 4), "target_ratio": TARGET,
               "ratio": round(ratio, 4), "read_diff_ms_median": round(read_diff, 2), "read_diff_ms": [round(d, 2) for d in diff],
               "create_ms_median": round(created, 2), "create_ms": [round(c, 2) for c in create],
               "graph_probe_ms": round(probe_s * 1000, 1)}
    return write("fusion_read", summary, figures)


if __name__ == "__main__":
    main()
