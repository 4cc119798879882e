"""Verification as a probe: load the model in a worker, run every experiment within the budget,
search the recommended configuration, and return it all as Facts (so it replays with --facts).
The model and its workers are the run's (``ModelRun``): the service's configuration is measured
in the run's shared worker, and the run ends every worker."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ..base import children
from ..base.children import Interrupted
from ..base.interpreter import Interpreter
from ..base.vocabulary import Device, Experiment, ExperimentStatus, PaddleStatus, ProcessStatus
from ..facts import Facts
from ..facts.predictor import PredictorConfig
from ..facts.verification import ExperimentResult, ModelFacts, ModelInput, ModelLoadFailure, VerificationFacts
from .deadline import CREATE_GRACE_S, BudgetExceeded, Deadline
from .experiments import EXPERIMENTS, Context, race, skipped, with_drift
from .known_problems import known_problems, try_known_issues
from .layouts import plan_load
from .measure import Measurer, Progress
from .model import ModelError, ModelRun, worker_samples
from .protocol import Feeds
from .recommend import recommend
from .session import WorkerDied, WorkerError, WorkerSession
from .shape_range import find_shape_range_file

RECOMMENDATION_SHARE = 0.35
# the least of --budget the recommendation, the report's answer, is given when the experiments ran past their part
# (a busy machine's slow predictor creations): its final race needs the rounds a verdict needs
RECOMMENDATION_FLOOR = 0.2
RUN_ON = (Experiment.ONEDNN, Experiment.BF16, Experiment.THREADS)  # the large effects: 4-9x, ~1.45x, 1.25-1.6x under load
# a few percent each, where a busy machine decides nothing in their slices and the search has no time left for them
SMALL_SWITCHES = (Experiment.IR_OPTIM, Experiment.FEED_FETCH)


@dataclass
class VerifyOptions:
    shapes: list[str] = field(default_factory=list)
    inputs: str | None = None
    budget_s: float = 40.0
    min_effect: float = 0.03
    max_drift: float = 0.01
    seed: int = 0


def run_verification(facts: Facts, run: ModelRun, options: VerifyOptions, progress: Progress | None = None,
                     interpreter: Interpreter | None = None) -> VerificationFacts | None:
    """None when the service does not run on the CPU (GPU predictors are not measured here). The
    workers run ``interpreter`` as the user it runs as (None: the probed Python, as the doctor).

    Nothing that happens to a worker loses what was measured: the service's configuration failing
    to load becomes ``load_failure``; an experiment whose worker crashes, overruns the budget or
    is interrupted (SIGTERM, SIGINT) is an ``error`` result, and the ones before it stay."""
    if facts.service.device != Device.CPU:
        return None
    if run.program is None:
        raise ModelError(run.unreadable)
    files, program = run.files, run.program
    prepared = _prepared(facts, run, options, interpreter)
    inputs, npz, samples, deadline, new_session = (prepared.inputs, prepared.npz, prepared.samples, prepared.deadline,
                                                   prepared.new_session)
    load_plan = plan_load(facts, files)
    baseline = PredictorConfig.of_service(facts)
    verification = VerificationFacts(
        model=ModelFacts(run.path, files.format, files.program, files.params, inputs, npz),
        budget_s=options.budget_s, min_effect=options.min_effect, max_drift=options.max_drift, baseline=baseline,
    )
    if prepared.error:
        return replace(verification, error=prepared.error)
    version = f" ({files.format} version {program.version})" if program.version is not None else ""
    model = f"{files.program}{version}: Paddle {facts.paddle.version}"
    service_pid = live_service_pid(facts)
    measurer, verification = _load_baseline(verification, baseline, model, lambda: new_session(shared=True), options.min_effect,
                                            progress, deadline, len(samples), service_pid)
    known = known_problems(facts, program)
    if measurer is not None or verification.load_failure is not None:  # what the known problems predict, as the load showed it
        verification = replace(verification, known_issues=try_known_issues(known, baseline, verification.load_failure, new_session,
                                                                          options.min_effect, deadline))
    if measurer is not None:
        ctx = Context(facts, measurer, baseline, inputs, options.max_drift, new_session, load=load_plan, known=known)
        verification = _run_experiments(verification, ctx, options, deadline)
        if verification.error is None:
            measured = {e.name: e for e in verification.experiments}
            try:
                with children.phase("measuring the recommendation"):
                    recommendation = recommend(ctx, measured, max(options.budget_s * RECOMMENDATION_FLOOR, deadline.left()),
                                               files.program, files.params)
                verification = replace(verification, recommendation=recommendation)
            except (WorkerError, WorkerDied, Interrupted) as exc:
                verification = replace(verification, error=f"the recommendation could not be measured: {_failure(exc)}")
        verification = replace(verification, noise=ctx.measurer.noise())
    seconds = round(deadline.spent(), 3)
    return replace(verification, seconds=seconds, over_budget=over_budget(deadline, seconds))


@dataclass(frozen=True)
class _Prepared:
    """The inputs planned for the model, the deadline of --budget and how to start a worker given them; ``error``:
    why nothing can be measured (Paddle cannot be imported)."""

    inputs: dict[str, ModelInput]
    npz: list[str]
    samples: list[Any]
    deadline: Deadline
    new_session: Callable[..., WorkerSession]
    error: str | None = None


def _prepared(facts: Facts, run: ModelRun, options: VerifyOptions, interpreter: Interpreter | None) -> _Prepared:
    shape_file = find_shape_range_file(run.files.directory, facts.service.tensorrt.dynamic_shape_file)
    inputs, npz = run.planned_inputs(options.shapes, facts.service.batch_size, shape_file, options.inputs)
    samples = worker_samples(inputs)
    python = facts.paddle.python
    deadline = Deadline(options.budget_s)
    workers = interpreter or Interpreter(python or "")

    def new_session(shared: bool = False) -> WorkerSession:
        """A worker given the inputs: the run's shared one, or a fresh one (after a crash, or for an
        experiment that needs a process of its own)."""
        began = time.monotonic()
        start = run.worker if shared else run.start_worker
        session = start(workers, start_timeout=deadline.timeout(CREATE_GRACE_S))
        deadline.creating_s += time.monotonic() - began
        deadline.request(session, "preparing the inputs", Feeds(samples, npz, options.seed), creates=True)
        return session

    error = None if facts.paddle.status == PaddleStatus.OK and python else \
        f"Paddle cannot be imported ({facts.paddle.status}); nothing can be measured"
    return _Prepared(inputs, npz, samples, deadline, new_session, error)


def race_configs(facts: Facts, run: ModelRun, before: PredictorConfig, after: PredictorConfig, options: VerifyOptions,
                 progress: Progress | None = None, interpreter: Interpreter | None = None) -> ExperimentResult:
    """``after`` raced against ``before`` on the model, in one worker, with the statistics of every experiment:
    what ``fix --verify`` measures of the configuration the patched files give."""
    if run.program is None:
        raise ModelError(run.unreadable)
    prepared = _prepared(facts, run, options, interpreter)
    if prepared.error:
        return skipped("fix", prepared.error)
    deadline = prepared.deadline
    try:
        with run:
            measurer = Measurer(prepared.new_session(shared=True), options.min_effect, progress, deadline, len(prepared.samples),
                                live_service_pid(facts))
            measurer.load(before)
            ctx = Context(facts, measurer, before, prepared.inputs, options.max_drift, prepared.new_session)
            result = with_drift(ctx, race(ctx, "fix", [after], options.budget_s, settle_by=deadline.started + options.budget_s),
                                before, after)
    except (WorkerError, WorkerDied, Interrupted, BudgetExceeded) as exc:
        return ExperimentResult(name="fix", status=ExperimentStatus.ERROR, reason=_failure(exc))
    return result


def live_service_pid(facts: Facts) -> int | None:
    """The service's process where it runs beside the doctor (the live root, its /proc read): its CPU
    time is told apart in the machine's noise."""
    process = facts.service_process
    live = os.path.realpath(facts.root) == "/"
    readable = process.status in (ProcessStatus.PROBED, ProcessStatus.NO_PERMISSION)  # /proc/PID/stat is world-readable
    return process.pid if live and readable and process.pid is not None else None


def _load_baseline(verification: VerificationFacts, baseline: PredictorConfig, model: str, new_session: Callable[[], WorkerSession],
                   min_effect: float, progress: Progress | None, deadline: Deadline, sample_count: int,
                   service_pid: int | None) -> tuple[Measurer | None, VerificationFacts]:
    """A Measurer with the service's configuration loaded; None, and ``verification`` saying why, when it cannot be.
    ``model`` names the program and the Paddle that failed to load it."""
    try:
        with children.phase("loading the service's configuration to measure it"):
            measurer = Measurer(new_session(), min_effect, progress, deadline, sample_count, service_pid)
            measurer.load(baseline)
        return measurer, verification
    except Interrupted as exc:
        return None, replace(verification, error=f"interrupted by {exc.signal_name} while the service's configuration was loaded; "
                                                 "nothing was measured")
    except BudgetExceeded as exc:
        return None, replace(verification, error=f"{exc}; nothing was measured (raise --budget)")
    except (WorkerError, WorkerDied) as exc:
        return None, replace(verification, load_failure=ModelLoadFailure(
            baseline.label(), f"{model} cannot load or run this model with the service's settings: {exc}",
            getattr(exc, "signal_name", None)))


def _run_experiments(verification: VerificationFacts, ctx: Context, options: VerifyOptions, deadline: Deadline) -> VerificationFacts:
    """``verification`` with every experiment run in its share of the budget; with an ``error`` when measuring had to
    stop (budget exceeded, interrupted): the interrupted experiment is an error, the rest are not run."""
    done: list[ExperimentResult] = []
    measure_budget = options.budget_s * (1 - RECOMMENDATION_SHARE)
    measured_by = deadline.started + measure_budget
    shares = {name: 0.0 if name == Experiment.LAYOUTS and ctx.load is None else share for name, (_, share) in EXPERIMENTS.items()}
    shares_left = sum(shares.values())
    for name, (runner, _) in EXPERIMENTS.items():
        share = shares[name]
        slice_s = max(0.5, (measure_budget - deadline.spent()) * share / shares_left) if share else 0.0
        shares_left -= share
        began = time.monotonic()
        # a race of the large effects short of a verdict's rounds runs on within the measuring part; a small switch's
        # ends with its slice (the search measures it again in context, where time is left)
        ctx.settle_by = measured_by if name in RUN_ON else began + slice_s
        busy = ctx.measurer.cpu
        try:
            with children.phase(f"measuring {name}"):
                if name in SMALL_SWITCHES and busy.busy:
                    result = skipped(name, f"not measured: the machine was busy ({busy.others_share:.0%} of the CPU time to other "
                                           "processes), so its share of --budget went to the larger effects and the recommendation")
                else:
                    result = runner(ctx, slice_s)
        except (WorkerError, WorkerDied, Interrupted) as exc:
            result = _failed(name, exc, ctx)
        done.append(replace(result, seconds=round(time.monotonic() - began, 3)))
        stopped = children.received() or deadline.exceeded
        if stopped:
            not_run = list(EXPERIMENTS)[len(done):]
            return replace(verification, experiments=done, error=f"{_stop_reason(deadline)}: measuring stopped during {name}"
                           + (f"; not run: {', '.join(not_run)} and the recommendation" if not_run else ""))
        if result.status == ExperimentStatus.ERROR and ctx.measurer.session.proc.poll() is not None:
            try:
                ctx.measurer = Measurer(ctx.new_session(), options.min_effect, ctx.measurer.progress, deadline, ctx.measurer.sample_count,
                                        ctx.measurer.service_pid)
            except (WorkerError, WorkerDied, Interrupted) as exc:
                return replace(verification, experiments=done,
                               error=f"the predictor worker could not be restarted after {name}: {_failure(exc)}")
    return replace(verification, experiments=done)


def _stop_reason(deadline: Deadline) -> str:
    signal_name = children.received()
    return f"interrupted by {signal_name}" if signal_name else f"the budget was exceeded ({deadline.exceeded})"


def _failure(exc: BaseException) -> str:
    """What failed, in words: the worker's error or signal, the budget, or the stop signal."""
    if isinstance(exc, Interrupted):
        return f"interrupted by {exc.signal_name}"
    return str(exc)


def _failed(name: str, exc: BaseException, ctx: Context) -> ExperimentResult:
    config = ctx.measurer.last_config
    where = f" (configuration: {config.label()})" if config else ""
    return ExperimentResult(name=name, status=ExperimentStatus.ERROR, reason=f"{_failure(exc)}{where}")


def over_budget(deadline: Deadline, seconds: float) -> str | None:
    """Why measuring took longer than --budget, or None when it did not."""
    if deadline.exceeded:
        return deadline.exceeded
    if seconds <= deadline.budget_s:
        return None
    return (f"starting workers, creating predictors and their first runs took {deadline.creating_s:.1f} s, every experiment "
            f"measures at least two rounds, and the recommendation keeps at least {RECOMMENDATION_FLOOR:.0%} of --budget")
