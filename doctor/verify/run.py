"""Verification as a probe: load the model in a worker, run every experiment within the budget,
search the recommended configuration, and return it all as Facts (so it replays with --facts)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..facts import ExperimentResult, Facts, ModelFacts, VerificationFacts
from .arms import baseline_arm, label
from .experiments import EXPERIMENTS, Context
from .layouts import plan_load
from .measure import Measurer, Progress
from .model import ModelError, input_specs, locate_model, plan_inputs, read_model_program, worker_samples
from .recommend import recommend
from .session import WorkerDied, WorkerError, WorkerSession
from .shape_range import find_shape_range_file

RECOMMENDATION_SHARE = 0.35


@dataclass
class VerifyOptions:
    model: str
    shapes: list[str] = field(default_factory=list)
    inputs: str | None = None
    budget_s: float = 40.0
    min_effect: float = 0.03
    max_drift: float = 0.01
    python: str | None = None
    seed: int = 0


def run_verification(facts: Facts, options: VerifyOptions, progress: Progress | None = None) -> VerificationFacts | None:
    """None when the service does not run on the CPU (GPU predictors are not measured here)."""
    if facts.service.device != "cpu":
        return None
    files = locate_model(options.model)
    program = read_model_program(files)
    shape_file = find_shape_range_file(files.directory, facts.service.tensorrt.dynamic_shape_file)
    inputs, npz = plan_inputs(input_specs(program), options.shapes, facts.service.batch_size, shape_file, options.inputs)
    samples = worker_samples(inputs)
    load_plan = plan_load(facts, files)
    verification = VerificationFacts(
        model=ModelFacts(options.model, files.format, files.program, files.params, inputs, npz),
        budget_s=options.budget_s, min_effect=options.min_effect, max_drift=options.max_drift,
        baseline=baseline_arm(facts),
    )
    python = options.python or facts.paddle.python
    if facts.paddle.status != "ok" or not python:
        verification.error = f"Paddle cannot be imported ({facts.paddle.status}); nothing can be measured"
        return verification
    started = time.monotonic()
    sessions: list[WorkerSession] = []

    def new_session() -> WorkerSession:
        session = WorkerSession(python)
        sessions.append(session)
        session.request(60, cmd="model", files={"program": files.program, "params": files.params, "dir": files.directory})
        session.request(120, cmd="feeds", samples=samples, npz=npz, seed=options.seed)
        return session

    try:
        measurer = Measurer(new_session(), options.min_effect, progress, len(samples))
        try:
            measurer.load(verification.baseline)
        except (WorkerError, WorkerDied) as exc:
            version = f" ({files.format} version {program.version})" if program.version is not None else ""
            raise ModelError(f"{files.program}{version}: Paddle {sessions[0].paddle_version} cannot load or run this model "
                             f"with the service's settings: {exc}") from None
        ctx = Context(facts, measurer, verification.baseline, inputs, options.max_drift, new_session, load=load_plan)
        measure_budget = options.budget_s * (1 - RECOMMENDATION_SHARE)
        shares = {name: 0.0 if name == "layouts" and load_plan is None else share for name, (_, share) in EXPERIMENTS.items()}
        shares_left = sum(shares.values())
        for name, (runner, _) in EXPERIMENTS.items():
            share = shares[name]
            spent = time.monotonic() - started
            slice_s = max(0.5, (measure_budget - spent) * share / shares_left) if share else 0.0
            shares_left -= share
            began = time.monotonic()
            try:
                result = runner(ctx, slice_s)
            except (WorkerError, WorkerDied) as exc:
                result = _failed(name, exc, ctx)
                if isinstance(exc, WorkerDied):
                    ctx.measurer = Measurer(new_session(), options.min_effect, progress, len(samples))
            result.seconds = round(time.monotonic() - began, 3)
            verification.experiments.append(result)
        remaining = max(1.0, options.budget_s - (time.monotonic() - started))
        measured = {e.name: e for e in verification.experiments}
        try:
            verification.recommendation = recommend(ctx, measured, remaining, files.program, files.params)
        except (WorkerError, WorkerDied) as exc:
            verification.error = f"the recommendation could not be measured: {exc}"
    finally:
        for session in sessions:
            session.close()
    verification.seconds = round(time.monotonic() - started, 3)
    return verification


def _failed(name: str, exc: Exception, ctx: Context) -> ExperimentResult:
    config = ctx.measurer.last_config
    where = f" (configuration: {label(config)})" if config else ""
    return ExperimentResult(name=name, status="error", reason=f"{exc}{where}")
