#!/usr/bin/env python3
"""Verification: recommendation quality, cost and calibration, measured side by side in one run.

Targets (issue: prove each fix on the real predictor):
  quality      p50(recommended) / p50(best of an exhaustive sweep)  <= 1.05, per fixture model,
               starting from a misconfigured service (8 threads on this machine, oneDNN off; the
               dynamic-width recogniser: 8 threads, oneDNN at Paddle's default, measured at
               --shape x:1x3x48x320), and the recommended threads within the CPU budget;
               p50(baseline) / p50(recommended) is printed too.
  cost         verifying all fixes for one model with the default budget            <= 60 s
  calibration  20 A/A runs (the fix is a no-op)  ->  at most 1 verdict other than "no measurable effect"

The exhaustive sweep (threads 1..CPU budget x oneDNN on/off x IR optim on/off x fp32/bf16 where
the CPU has bf16) runs as one interleaved race that also holds the baseline and the
recommended configuration, so all p50s come from the same minutes of the same machine. A bf16
configuration whose outputs drift beyond --max-drift from FP32 is measured but is no candidate
for "best": the doctor never recommends it.

The figures are written to benchmarks/results/verification.json (``benchmarks/results.py`` renders the table).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from paddle_doctor.base.interpreter import Interpreter
from paddle_doctor.base.vocabulary import Effect, Precision
from paddle_doctor.facts import ServiceConfig
from paddle_doctor.facts.budget import cpu_budget
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.probes import collect_facts
from paddle_doctor.probes.context import ProbeContext
from paddle_doctor.verify.experiments import BF16_FLAGS, changes_outputs, drift_of
from paddle_doctor.verify.measure import Measurer
from paddle_doctor.verify.model import ModelRun, worker_samples
from paddle_doctor.verify.modelzoo import build_model
from paddle_doctor.verify.protocol import DriftOf, Feeds
from paddle_doctor.verify.run import VerifyOptions, run_verification
from paddle_doctor.verify.session import WorkerSession

TARGET_QUALITY, TARGET_COST_S, TARGET_AA_OTHERS = 1.05, 60.0, 1
MISCONFIGURED = {"threads": 8, "onednn": False}
# kind, format, the service's settings, --shape
MODELS = {
    "cnn": ("cnn", "pir", MISCONFIGURED, []),
    "encoder": ("encoder", "pir", MISCONFIGURED, []),
    "sequence": ("sequence", "legacy", MISCONFIGURED, []),
    "recognizer": ("recognizer", "pir", {"threads": 8}, ["x:1x3x48x320"]),
}


def open_session(run: ModelRun, verification) -> WorkerSession:
    """A fresh worker of the run, given the inputs verification measured."""
    session = run.start_worker(Interpreter(sys.executable))
    session.request(60, Feeds(worker_samples(verification.model.inputs)))
    return session


def sweep_space(facts, baseline):
    budget = cpu_budget(facts)
    precisions = [Precision.FP32, Precision.BF16] if any(f in facts.cpu.flags for f in BF16_FLAGS) else ["fp32"]
    for threads, onednn, ir, precision in itertools.product(range(1, budget.whole_cpus + 1), (True, False), (True, False), precisions):
        if precision == Precision.BF16 and not onednn:
            continue
        yield baseline.vary(threads=threads, onednn=onednn, ir_optim=ir, precision=precision)


def changes_outputs_of(session: WorkerSession, config: PredictorConfig, max_drift: float) -> bool:
    """A bf16 configuration whose outputs drift from its FP32 twin beyond --max-drift is never
    recommended (the doctor's own rule), so it is no candidate for "best" either."""
    if config.precision != Precision.BF16:
        return False
    drift = session.request(60, DriftOf(config.vary(precision=Precision.FP32).key(), config.key()))
    return changes_outputs(drift_of(drift), max_drift)


def quality(kind: str, fmt: str, service_settings: dict, shapes: list[str], workdir: Path, budget: float) -> dict[str, Any]:
    """The model's recommendation against the sweep's best, and what its verification cost: the figures printed."""
    model = build_model(kind, fmt, workdir / f"{kind}-{fmt}")
    service = ServiceConfig(model=str(model), **service_settings)
    facts = collect_facts(ProbeContext("/"), service, Interpreter(sys.executable), 120)
    with ModelRun(model) as run:
        started = time.monotonic()
        verification = run_verification(facts, run, VerifyOptions(shapes=shapes, budget_s=budget))
        cost = time.monotonic() - started
        recommended = verification.recommendation.config
        baseline = verification.baseline
        arms = {c.key(): c for c in [baseline, recommended, *sweep_space(facts, baseline)]}
        session = open_session(run, verification)
        measurer = Measurer(session, 0.03)
        configs = list(arms.values())
        measurer.race(("baseline", configs[0]), [(c.label(configs[0]), c) for c in configs[1:]], budget_s=60, what="sweep")
        p50 = {key: measurer.arm_result("", c).p50 for key, c in arms.items()}
        admissible = [c.key() for c in sweep_space(facts, baseline) if not changes_outputs_of(session, c, verification.max_drift)]
    best_key = min(admissible, key=lambda k: p50[k])
    limit = cpu_budget(facts).threads_per_instance(1)
    fits = recommended.threads <= limit
    shown = {name: model_input.shapes for name, model_input in verification.model.inputs.items()}
    print(f"  {kind:8s} measured at {shown}")
    print(f"  {kind:8s} recommended: {recommended.label()} (threads {'within' if fits else 'OVER'} the budget of {limit})")
    print(f"  {kind:8s} best of sweep: {arms[best_key].label()}")
    q = p50[recommended.key()] / p50[best_key]
    gain = p50[baseline.key()] / p50[recommended.key()]
    print(f"  {kind:8s} p50 recommended/best {q:.3f} (target <= 1.05) {verdict(q <= TARGET_QUALITY)}; "
          f"baseline/recommended {gain:.2f}x; verification took {cost:.1f} s (target <= 60) {verdict(cost <= TARGET_COST_S)}")
    return {"measured_at": shown, "recommended": recommended.label(), "threads_within_budget": fits, "thread_budget": limit,
            "best": arms[best_key].label(), "p50_ms": {"baseline": round(p50[baseline.key()], 4),
                                                      "recommended": round(p50[recommended.key()], 4), "best": round(p50[best_key], 4)},
            "quality": round(q, 4), "gain": round(gain, 3), "cost_s": round(cost, 2)}


def verdict(ok: bool) -> str:
    return "OK" if ok else "OVER"


def calibration(workdir: Path, runs: int, budget: float) -> dict[str, Any]:
    """``runs`` A/A races of the demo CNN: how many verdicts other than "no measurable effect"."""
    model = build_model("cnn", "pir", workdir / "calibration")
    facts = collect_facts(ProbeContext("/"), ServiceConfig(model=str(model)), Interpreter(sys.executable), 120)
    verdicts = []
    with ModelRun(model) as run:
        verification = run_verification(facts, run, VerifyOptions(budget_s=4))
        measurer = Measurer(open_session(run, verification), 0.03)
        base = PredictorConfig.of_service(facts)
        for _ in range(runs):
            (result,) = measurer.race(("baseline", base), [("no-op", base.vary(threads=base.threads))], budget, "A/A")
            verdicts.append(result.verdict)
    others = sum(v != Effect.NO_EFFECT for v in verdicts)
    counts = {str(v): verdicts.count(v) for v in sorted(set(verdicts))}
    print(f"  {runs} A/A runs ({budget:g} s budget each): {counts}; other than 'no measurable effect': {others} "
          f"(target <= 1) {verdict(others <= TARGET_AA_OTHERS)}")
    return {"runs": runs, "budget_s": budget, "verdicts": counts, "other_than_no_effect": others}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--budget", type=float, default=40.0, help="verification budget per model (the CLI default)")
    parser.add_argument("--aa-runs", type=int, default=20)
    parser.add_argument("--aa-budget", type=float, default=4.0)
    parser.add_argument("--models", nargs="+", choices=list(MODELS), default=list(MODELS))
    args = parser.parse_args()
    figures: dict[str, Any] = {"budget_s": args.budget, "target_quality": TARGET_QUALITY, "target_cost_s": TARGET_COST_S,
                               "target_aa_others": TARGET_AA_OTHERS, "models": {}}
    summary = []
    with tempfile.TemporaryDirectory(prefix="paddle-doctor-bench-") as tmp:
        workdir = Path(tmp)
        print("recommendation quality and cost")
        for name in args.models:
            model = figures["models"][name] = quality(*MODELS[name], workdir, args.budget)
            summary.append(f"{name}: p50 recommended / best of the sweep {model['quality']:.3f} (target <= {TARGET_QUALITY:g}) "
                           f"{verdict(model['quality'] <= TARGET_QUALITY)}, {model['gain']:.2f}x faster than the service; "
                           f"verification {model['cost_s']:.1f} s (target <= {TARGET_COST_S:g} s) {verdict(model['cost_s'] <= TARGET_COST_S)}; "
                           f"threads {'within' if model['threads_within_budget'] else 'OVER'} the budget")
        if args.aa_runs:
            print("calibration")
            aa = figures["calibration"] = calibration(workdir, args.aa_runs, args.aa_budget)
            summary.append(f"{aa['runs']} A/A runs: {aa['other_than_no_effect']} verdicts other than 'no measurable effect' "
                           f"(target <= {TARGET_AA_OTHERS}) {verdict(aa['other_than_no_effect'] <= TARGET_AA_OTHERS)}")
    from results import write

    print(f"wrote {write('verification', summary, figures)}")


if __name__ == "__main__":
    main()
