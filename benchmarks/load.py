#!/usr/bin/env python3
"""Load experiment: recommendation quality and cost, measured side by side in one run.

Targets (issue: under load), for the ERNIE-Tiny-shaped encoder at concurrency 4 on this machine,
starting from a service that runs 2 worker processes x 8 threads:
  quality  throughput(recommended layout) / throughput(best of an exhaustive sweep)   >= 0.95
  cost     the load experiment's wall time, within its default budget                 <= 90 s

The doctor runs as a user runs it (every experiment, the default budget for a service with a
concurrency); the sweep then measures every layout (lock, clones, PredictorPool, processes) at
every split (instances 1..concurrency x threads 1..CPU budget, so most splits oversubscribe the
budget, plus the service's own 2 x 8) as one interleaved race, so all throughputs come from the same minutes of the same machine.
The machine's load average is printed: other processes on it change every figure. On a shared
machine, layouts with more runnable threads than the budget (4 processes x 1 thread on 2 CPUs)
can win throughput by taking CPU time from the other processes, which a container's CPU quota
would not give them; on a quiet machine they matched 2 processes x 1 thread in throughput with
about 3x its p99. So the quality is printed against the best of every split and against the
best of the splits within the CPU budget, which is what the doctor recommends from.

The figures are written to benchmarks/results/load.json (``benchmarks/results.py`` renders the table).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from paddle_doctor.base.interpreter import Interpreter
from paddle_doctor.base.vocabulary import Layout
from paddle_doctor.cli import DEFAULT_LOAD_BUDGET_S
from paddle_doctor.facts import ServiceConfig
from paddle_doctor.facts.budget import cpu_budget
from paddle_doctor.probes import collect_facts
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.verify.layouts import KINDS, Arrangement, LoadPlan, service_layout
from paddle_doctor.verify.load import LoadRunner, close_hosts, measure_layouts, start_hosts
from paddle_doctor.verify.model import ModelRun, worker_samples
from paddle_doctor.verify.modelzoo import build_model
from paddle_doctor.verify.protocol import Feeds, Model
from paddle_doctor.verify.run import VerifyOptions, run_verification
from paddle_doctor.verify.session import WorkerSession

CONCURRENCY = 4
TARGET_QUALITY, TARGET_COST_S = 0.95, 90.0


def load_average(values: tuple[float, float, float]) -> str:
    return "load average " + " ".join(f"{value:.2f}" for value in values) + f" on {os.cpu_count()} CPUs"


def sweep_layouts(whole_cpus: int, service: Arrangement) -> list[Arrangement]:
    threads = range(1, whole_cpus + 1)
    layouts = [Arrangement(Layout.LOCK, 1, t) for t in threads]
    layouts += [Arrangement(kind, n, t) for kind in KINDS if kind != Layout.LOCK for n in range(2, CONCURRENCY + 1) for t in threads]
    return layouts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sweep-budget", type=float, default=150.0, help="seconds for the exhaustive sweep")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="paddle-doctor-load-") as tmp:
        model = build_model("encoder", "pir", Path(tmp) / "encoder")
        service = ServiceConfig(model=str(model), instances=2, threads=8, concurrency=CONCURRENCY)
        facts = collect_facts(ProbeContext("/"), service, Interpreter(sys.executable), 120)
        before = os.getloadavg()
        print(f"before: {load_average(before)}")
        started = time.monotonic()
        with ModelRun(model) as run:
            verification = run_verification(facts, run, VerifyOptions(budget_s=DEFAULT_LOAD_BUDGET_S))
        whole = time.monotonic() - started
        layouts = verification.experiment("layouts")
        if not layouts.measured:
            sys.exit(f"the load experiment did not measure: {layouts.status}: {layouts.reason}")
        chosen = next(arm.layout for arm in layouts.arms if arm.label == layouts.layouts.recommended)
        chosen = Arrangement(chosen.layout, chosen.instances, chosen.threads)
        print(f"doctor: recommended {chosen.label()} ({layouts.layouts.why}); {layouts.layouts.rounds} rounds")

        service_arm, _ = service_layout(facts)
        sweep = [layout for layout in sweep_layouts(cpu_budget(facts).whole_cpus, service_arm) if layout.key != service_arm.key]
        plan = LoadPlan(CONCURRENCY, cpu_budget(facts).cpus, service_arm, f"service: {service_arm.label()}", sweep)
        sessions: list[WorkerSession] = []

        def new_session() -> WorkerSession:
            session = WorkerSession(Interpreter(sys.executable))
            sessions.append(session)
            model_facts = verification.model
            session.request(60, Model(model_facts.program, model_facts.params, str(Path(model_facts.program).parent)))
            session.request(60, Feeds(worker_samples(model_facts.inputs)))
            return session

        try:
            hosts = start_hosts(new_session, plan.hosts)
            result = measure_layouts(LoadRunner(hosts, plan, verification.baseline), time.monotonic(), args.sweep_budget,
                                     0.03, lambda what, done: None)
        finally:
            close_hosts(sessions)
        arms = {layout.key: arm for layout, arm in zip(plan.arms, result.arms)}
        after = os.getloadavg()
        print(f"sweep: {len(plan.arms)} layouts x splits, {result.layouts.rounds} interleaved rounds; after: {load_average(after)}")
        figures: dict[str, Any] = {"concurrency": CONCURRENCY, "sweep_budget_s": args.sweep_budget,
                                   "load_average_before": [round(v, 2) for v in before], "load_average_after": [round(v, 2) for v in after],
                                   "recommended": chosen.label(), "why": layouts.layouts.why, "doctor_rounds": layouts.layouts.rounds,
                                   "sweep_layouts": len(plan.arms), "sweep_rounds": result.layouts.rounds, "fastest": [], "quality": {}}
        for layout in sorted(plan.arms, key=lambda layout: -arms[layout.key].throughput_rps)[:8]:
            arm = arms[layout.key]
            print(f"  {arm.throughput_rps:7.1f} req/s  p50 {arm.p50:6.1f}  p99 {arm.p99:6.1f} ms  "
                  f"{layout.label()}{'' if plan.fits(layout) else ' (over budget)'}")
            figures["fastest"].append({"layout": layout.label(), "throughput_rps": round(arm.throughput_rps, 2), "p50_ms": round(arm.p50, 2),
                                       "p99_ms": round(arm.p99, 2), "within_budget": plan.fits(layout)})
        summary = []
        for what, pool in (("every split", plan.arms), ("splits within the CPU budget", [a for a in plan.arms if plan.fits(a)])):
            best = max(pool, key=lambda layout: arms[layout.key].throughput_rps)
            quality = arms[chosen.key].throughput_rps / arms[best.key].throughput_rps
            print(f"quality  throughput recommended/best of {what}: {quality:.3f} ({chosen.label()} "
                  f"{arms[chosen.key].throughput_rps:.1f} vs {best.label()} {arms[best.key].throughput_rps:.1f} req/s) "
                  f"(target >= 0.95) {'OK' if quality >= TARGET_QUALITY else 'UNDER'}")
            summary.append(f"throughput recommended / best of {what} {quality:.3f} (target >= {TARGET_QUALITY:g}) "
                           f"{'OK' if quality >= TARGET_QUALITY else 'UNDER'}: {chosen.label()} {arms[chosen.key].throughput_rps:.1f} "
                           f"vs {best.label()} {arms[best.key].throughput_rps:.1f} req/s")
            figures["quality"][what] = {"quality": round(quality, 4), "best": best.label(),
                                        "best_throughput_rps": round(arms[best.key].throughput_rps, 2),
                                        "recommended_throughput_rps": round(arms[chosen.key].throughput_rps, 2)}
        cost, budget = layouts.seconds, layouts.layouts.budget_s
        print(f"cost     load experiment {cost:.1f} s of its {budget:.1f} s share of the default budget (target <= 90) "
              f"{'OK' if cost <= budget <= TARGET_COST_S else 'OVER'}; the whole verification {whole:.1f} s of the default "
              f"{DEFAULT_LOAD_BUDGET_S:g} s budget")
        summary.append(f"load experiment {cost:.1f} s of its {budget:.1f} s share (target <= {TARGET_COST_S:g} s) "
                       f"{'OK' if cost <= budget <= TARGET_COST_S else 'OVER'}; the whole verification {whole:.1f} s of the default "
                       f"{DEFAULT_LOAD_BUDGET_S:g} s; load average {before[0]:.2f} before, {after[0]:.2f} after")
        figures.update(cost_s=round(cost, 2), cost_budget_s=budget, target_cost_s=TARGET_COST_S, target_quality=TARGET_QUALITY,
                       verification_s=round(whole, 2), default_budget_s=DEFAULT_LOAD_BUDGET_S)
    from results import write

    print(f"wrote {write('load', summary, figures)}")


if __name__ == "__main__":
    main()
