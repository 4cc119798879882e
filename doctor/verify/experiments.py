"""The experiments named in rules.yaml, each measuring one kind of fix against the baseline.

Every experiment returns an ExperimentResult: ``measured`` with arms and comparisons,
``skipped`` with the reason it cannot run here, or ``error`` with what failed (a worker killed
by a signal names the signal and the configuration that caused it).
"""

from __future__ import annotations

import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..base.vocabulary import Effect, Experiment, ExperimentStatus, Precision
from ..facts import Facts
from ..facts.budget import cpu_budget
from ..facts.predictor import ONEDNN_CACHE_DEFAULT, PredictorConfig
from ..facts.verification import (
    BASELINE,
    ColdStartResult,
    ExperimentResult,
    MemoryGrowth,
    ModelInput,
    OutputDrift,
    ShapeCacheResult,
    WarmupResult,
)
from . import stats
from .layouts import LoadPlan, skip_reason
from .load import LayoutFailed, LoadRunner, close_hosts, measure_layouts, start_hosts
from .measure import Measurer
from .protocol import Drift, DriftOf, Drop, Load, Rss, Shapes
from .session import WorkerDied, WorkerSession

if TYPE_CHECKING:
    from .known_problems import KnownProblems

COLD_START_ROUNDS = 6
VARYING_SHAPES = 12
BF16_FLAGS = ("avx512_bf16", "amx_bf16")
MAX_THREADS_TRIED = 8
# with the default budget for a service with a concurrency (90 s) the other experiments keep about
# the time they have at 40 s, and the layouts, measured last, get what is left of the measuring part
LAYOUTS_SHARE = 7.0


@dataclass
class Context:
    facts: Facts
    measurer: Measurer
    baseline: PredictorConfig
    inputs: dict[str, ModelInput]
    max_drift: float
    new_session: Callable[[], WorkerSession]
    notes: list[str] = field(default_factory=list)
    load: LoadPlan | None = None
    spare_until: float | None = None  # (monotonic) until when a busy machine's undecided race of the search may run on
    settle_by: float | None = None  # (monotonic) until when an experiment's race short of a verdict's rounds may run on
    known: KnownProblems | None = None  # the known problems of this Paddle and model (known_issues.yaml)


def spare_s(ctx: Context, budget_s: float) -> float:
    """How long a race given ``budget_s`` may run on when the machine is busy: what is left of the
    part of --budget its caller set aside (``spare_until``; none where it set none)."""
    if ctx.spare_until is None:
        return 0.0
    return max(0.0, ctx.spare_until - time.monotonic() - budget_s)


def skipped(name: str, reason: str) -> ExperimentResult:
    return ExperimentResult(name=name, status=ExperimentStatus.SKIPPED, reason=reason)


def known_problem(ctx: Context, name: str, config: PredictorConfig, relative_to: PredictorConfig,
                  what: str | None = None) -> ExperimentResult | None:
    """The experiment not measured, naming the known problem, where ``config`` (``what``, in words) would hit
    one (Paddle's own message would say less); None where none is known."""
    why = ctx.known.why_not(config, relative_to, what) if ctx.known is not None else None
    if why is None:
        return None
    return ExperimentResult(name=name, status=ExperimentStatus.SKIPPED, reason=why[1], known_issue=why[0])


def race(ctx: Context, name: str, candidates: list[PredictorConfig], budget_s: float,
         base: PredictorConfig | None = None, named: str = BASELINE, extend_s: float = 0.0,
         settle_by: float | None = None) -> ExperimentResult:
    """The candidates against ``base`` (the service's configuration by default), which the comparisons
    call ``named``; on a busy machine, undecided, for up to ``extend_s`` past ``budget_s``; short of the
    rounds a verdict needs, until ``settle_by`` (``ctx.settle_by`` by default)."""
    base = base or ctx.baseline
    labelled = [(c.label(base), c) for c in candidates]
    comparisons = ctx.measurer.race((named, base), labelled, budget_s, name, extend_s,
                                    settle_by=settle_by if settle_by is not None else ctx.settle_by)
    arms = [ctx.measurer.arm_result(BASELINE, base)] + [ctx.measurer.arm_result(label, c) for label, c in labelled]
    noisy = any(c.verdict == Effect.UNDECIDED for c in comparisons) and any((a.cv or 0) > stats.NOISY_CV for a in arms)
    return ExperimentResult(name=name, status=ExperimentStatus.MEASURED, arms=arms, comparisons=comparisons, noisy=noisy)


def thread_limit(facts: Facts) -> int | None:
    """The most math threads per predictor that PD-CPU-010 accepts; None when the budget is unknown
    (PD-CPU-010 is then an error, and nothing is enforced in its name)."""
    budget = cpu_budget(facts)
    return budget.threads_per_instance(facts.service.instances) if budget else None


def bounded_cache(config: PredictorConfig) -> PredictorConfig:
    """``config`` with oneDNN's shape cache bounded (the capacity PD-MEM-001's fix sets) where oneDNN is
    on and its cache unbounded (0 or less), else ``config`` itself."""
    capacity = config.onednn_cache_capacity
    return config.vary(onednn_cache_capacity=ONEDNN_CACHE_DEFAULT) if config.onednn and capacity is not None and capacity <= 0 else config


def within_budget(facts: Facts, config: PredictorConfig) -> PredictorConfig:
    """``config`` with its threads brought within the CPU budget (the count PD-CPU-010's fix sets)
    where they exceed it, else ``config`` itself."""
    limit = thread_limit(facts)
    return config.vary(threads=limit) if limit and config.threads > limit else config


def switch_race(ctx: Context, name: str, candidate: Callable[[PredictorConfig], PredictorConfig], budget_s: float,
                onednn: bool | None = None) -> ExperimentResult:
    """One switch (``candidate`` of the configuration it is measured at) against the service's
    configuration within the CPU budget (with oneDNN set to ``onednn`` where given): measured in an
    over-subscribed one (8 threads on 2 CPUs) it would measure the over-subscription instead
    (oneDNN's threads waiting at every barrier for those a busy neighbour holds off the CPU: 1.06x,
    undecided, where the switch gives 7x). There the search starts, so it takes the measurement as
    made in context. The comparisons name that configuration: ``oneDNN on vs baseline at threads=2``."""
    base = within_budget(ctx.facts, ctx.baseline)
    base = base if onednn is None else base.vary(onednn=onednn)
    named = BASELINE if base == ctx.baseline else f"{BASELINE} at {base.label(ctx.baseline)}"
    return race(ctx, name, [candidate(base)], budget_s, base=base, named=named)


def thread_counts(facts: Facts, baseline: PredictorConfig) -> list[int]:
    """Thread counts within the budget, and the service's own (measured against them even when over it)."""
    counts = set(range(1, min(thread_limit(facts) or 1, MAX_THREADS_TRIED) + 1)) | {baseline.threads}
    return sorted(counts)


def threads(ctx: Context, budget_s: float) -> ExperimentResult:
    candidates = [ctx.baseline.vary(threads=n) for n in thread_counts(ctx.facts, ctx.baseline) if n != ctx.baseline.threads]
    if not candidates:
        return skipped(Experiment.THREADS, "the CPU budget is 1 CPU and the service already uses 1 thread")
    return race(ctx, Experiment.THREADS, candidates, budget_s)


def onednn(ctx: Context, budget_s: float) -> ExperimentResult:
    reason = onednn_unavailable(ctx.facts)
    if reason:
        return skipped(Experiment.ONEDNN, reason)
    switched = ctx.baseline.vary(onednn=not ctx.baseline.onednn, precision=Precision.FP32)
    return known_problem(ctx, Experiment.ONEDNN, switched, ctx.baseline) or \
        switch_race(ctx, Experiment.ONEDNN, lambda base: base.vary(onednn=not base.onednn, precision=Precision.FP32), budget_s)


def onednn_unavailable(facts: Facts) -> str | None:
    if facts.cpu.arch == "x86_64" and facts.cpu.flags and "avx2" not in facts.cpu.flags:
        return "the CPU lacks AVX2, so Paddle keeps oneDNN off whatever the Config says"
    if facts.paddle.compiled_with_mkldnn is False:
        return "this Paddle build has no oneDNN"
    return None


def ir_optim(ctx: Context, budget_s: float) -> ExperimentResult:
    return switch_race(ctx, Experiment.IR_OPTIM, lambda base: base.vary(ir_optim=not base.ir_optim), budget_s)


def feed_fetch(ctx: Context, budget_s: float) -> ExperimentResult:
    return switch_race(ctx, Experiment.FEED_FETCH, lambda base: base.vary(feed_fetch=not base.feed_fetch), budget_s)


def bf16(ctx: Context, budget_s: float) -> ExperimentResult:
    reason = bf16_unavailable(ctx.facts)
    if reason:
        return skipped(Experiment.BF16, reason)
    if ctx.baseline.precision == Precision.BF16:
        return skipped(Experiment.BF16, "the service already runs bf16")
    known = known_problem(ctx, Experiment.BF16, ctx.baseline.vary(precision=Precision.BF16), ctx.baseline)
    if known is not None:
        return known
    # bf16 runs on oneDNN: measured with it on, where the search has adopted it (oneDNN's own gain is PD-CPU-004's)
    result = switch_race(ctx, Experiment.BF16, lambda base: base.vary(precision=Precision.BF16), budget_s, onednn=True)
    base, candidate = (arm.config for arm in result.arms)
    return with_drift(ctx, result, base, candidate)


def bf16_unavailable(facts: Facts) -> str | None:
    if not any(flag in facts.cpu.flags for flag in BF16_FLAGS):
        return "the CPU has no bfloat16 units (avx512_bf16 or amx_bf16)"
    return onednn_unavailable(facts)


def with_drift(ctx: Context, result: ExperimentResult, reference: PredictorConfig, candidate: PredictorConfig) -> ExperimentResult:
    """The result with the output drift of a precision change against FP32 on the same inputs in each comparison."""
    reply = ctx.measurer.deadline.request(ctx.measurer.session, f"the output drift of {candidate.label()}",
                                          DriftOf(reference.key(), candidate.key()))
    drift = drift_of(reply)
    comparisons = [replace(comparison, drift=drift, changes_outputs=changes_outputs(drift, ctx.max_drift)) for comparison in result.comparisons]
    return replace(result, comparisons=comparisons)


def drift_of(reply: Drift) -> OutputDrift:
    """The worker's answer to ``DriftOf``, as a fact."""
    return OutputDrift(reply.max_abs_diff, reply.cosine, reply.top1_agreement)


def changes_outputs(drift: OutputDrift, max_drift: float) -> bool:
    return drift.max_abs_diff > max_drift or (drift.top1_agreement is not None and drift.top1_agreement < 1.0)


def warmup(ctx: Context, budget_s: float) -> ExperimentResult:
    """First request after the predictor is created (no warm-up) against a warmed-up request.

    The baseline is loaded (again, in a fresh worker after a crash) if no measurement of it is kept."""
    loaded = ctx.measurer.load(ctx.baseline)
    measured = ctx.measurer.arm_result(BASELINE, ctx.baseline)
    steady, first = measured.p50 or loaded.warm_ms, loaded.first_ms
    return ExperimentResult(name=Experiment.WARMUP, status=ExperimentStatus.MEASURED, arms=[measured],
                            warmup=WarmupResult(first, steady, first / steady if steady else None))


def optim_cache(ctx: Context, budget_s: float) -> ExperimentResult:
    """Cold start (create + first run) rebuilding the optimised graph vs loading it from a cache."""
    session, deadline = ctx.measurer.session, ctx.measurer.deadline
    base = ctx.baseline.vary(ir_optim=True)
    known = known_problem(ctx, Experiment.OPTIM_CACHE, base.vary(use_optimized_model=True), ctx.baseline,
                          f"loading the optimised model back ({base.label()})")
    if known is not None:  # with oneDNN on, the cache Paddle 3.3.1 writes cannot be loaded back (KI-014)
        return known
    cache = session.interpreter.scratch_folder("paddle-doctor-optim-")  # the worker writes the optimised model there
    try:
        deadline.request(session, "saving the optimised model", Load("save", base.vary(optim_cache_dir=cache, save_optim_model=True)),
                         creates=True)
        deadline.request(session, "dropping a predictor", Drop("save"))
        arms = {"rebuild graph": base, "optimised model cache": base.vary(optim_cache_dir=cache, use_optimized_model=True)}
        samples: dict[str, list[list[float]]] = {name: [] for name in arms}
        for index in range(COLD_START_ROUNDS):
            order = list(arms.items()) if index % 2 == 0 else list(reversed(arms.items()))
            for name, arm in order:
                reply = deadline.request(session, f"a cold start ({name})", Load(f"cold-{name}", arm), creates=True)
                samples[name].append([reply.create_ms + reply.first_ms])
                deadline.request(session, "dropping a predictor", Drop(f"cold-{name}"))
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    rebuild, cached = samples["rebuild graph"], samples["optimised model cache"]
    comparison = stats.compare(rebuild, cached, ctx.measurer.min_effect, names=("rebuild graph", "optimised model cache"))
    medians = ColdStartResult(*(statistics.median(block[0] for block in blocks) for blocks in (rebuild, cached)))
    return ExperimentResult(name=Experiment.OPTIM_CACHE, status=ExperimentStatus.MEASURED, comparisons=[comparison], optim_cache=medians)


def onednn_cache(ctx: Context, budget_s: float) -> ExperimentResult:
    """Memory with varying input shapes: the service's unbounded oneDNN cache vs a bounded one."""
    capacity = ctx.facts.service.onednn_cache_capacity
    if capacity is None or capacity > 0:
        return skipped(Experiment.ONEDNN_CACHE, "the service keeps oneDNN's shape cache bounded (default 10)")
    if not ctx.baseline.onednn:
        return skipped(Experiment.ONEDNN_CACHE, "oneDNN is off, so it keeps no shape cache")
    shapes = varying_shapes(ctx.inputs)
    if not shapes:
        return skipped(Experiment.ONEDNN_CACHE, "the model's inputs have no dynamic dimension to vary")
    growth, deadline = {}, ctx.measurer.deadline
    for name, arm in (("service", ctx.baseline), ("bounded", ctx.baseline.vary(onednn_cache_capacity=ONEDNN_CACHE_DEFAULT))):
        session = ctx.new_session()
        try:
            deadline.request(session, f"creating the predictor for {arm.label()}", Load(name, arm), creates=True)
            before = deadline.request(session, "reading the memory in use", Rss()).rss_mb
            # every new shape creates oneDNN primitives: creation, with its grace
            after = deadline.request(session, f"{len(shapes)} input shapes on {arm.label()}", Shapes(name, shapes), creates=True).rss_mb
        finally:
            session.close()
        growth[name] = MemoryGrowth(before, after, after[-1] - before)
    return ExperimentResult(name=Experiment.ONEDNN_CACHE, status=ExperimentStatus.MEASURED,
                            onednn_cache=ShapeCacheResult(len(shapes), growth["service"], growth["bounded"]))


def varying_shapes(inputs: dict[str, ModelInput]) -> list[dict[str, list[int]]]:
    """The shapes measured (the service's set), then more, up to VARYING_SHAPES distinct ones: where
    an input has a dynamic dimension past the batch, the last such dimension of each such input grows
    by 8 a step (the batch stays, the same for every input); else the batch of every input grows by 1."""
    if any(model_input.lod for model_input in inputs.values()):
        return []
    count = max(len(model_input.shapes) for model_input in inputs.values())
    shapes: list[dict[str, list[int]]] = []
    for index in range(count):
        sample = {name: model_input.shapes[index % len(model_input.shapes)] for name, model_input in inputs.items()}
        if sample not in shapes:
            shapes.append(sample)
    base = shapes[0]
    beyond_batch = any(axis > 0 for model_input in inputs.values() for axis in model_input.dynamic_axes)
    for step in range(1, 4 * VARYING_SHAPES):
        if len(shapes) >= VARYING_SHAPES:
            break
        grown = {name: _grown(model_input, base[name], step, beyond_batch) for name, model_input in inputs.items()}
        if grown == base:
            return []
        if grown not in shapes:
            shapes.append(grown)
    return shapes


def _grown(model_input: ModelInput, shape: list[int], step: int, beyond_batch: bool) -> list[int]:
    axes = [axis for axis in model_input.dynamic_axes if (axis > 0) == beyond_batch]
    if not axes:
        return shape
    grown = list(shape)
    grown[axes[-1]] += step * (8 if beyond_batch else 1)
    return grown


def layouts(ctx: Context, budget_s: float) -> ExperimentResult:
    """Serving layouts and splits of the CPU budget under the service's concurrency."""
    if ctx.load is None:
        return skipped(Experiment.LAYOUTS, skip_reason(ctx.facts) or "no load plan was made")
    started = time.monotonic()
    try:
        hosts = start_hosts(ctx.new_session, ctx.load.hosts)
    except WorkerDied as exc:
        return ExperimentResult(name=Experiment.LAYOUTS, status=ExperimentStatus.ERROR, reason=f"the load workers could not start: {exc}")
    try:
        return measure_layouts(LoadRunner(hosts, ctx.load, ctx.baseline, ctx.measurer.deadline), started, budget_s,
                               ctx.measurer.min_effect, ctx.measurer.progress)
    except LayoutFailed as exc:
        return ExperimentResult(name=Experiment.LAYOUTS, status=ExperimentStatus.ERROR, reason=str(exc))
    finally:
        close_hosts(hosts)


def gpu_only(name: Experiment) -> Callable[[Context, float], ExperimentResult]:
    def run(ctx: Context, budget_s: float) -> ExperimentResult:
        return skipped(name, "needs a GPU with paddlepaddle-gpu; this verification runs on the CPU")
    return run


# name -> (runner, share of the measuring budget), the largest effects first (oneDNN 4-9x, bf16 ~1.45x, threads under
# load 1.25-1.6x): where a busy machine leaves the later ones their floor, it is the small switches that get it
EXPERIMENTS: dict[Experiment, tuple[Callable[[Context, float], ExperimentResult], float]] = {
    Experiment.ONEDNN: (onednn, 1.0),
    Experiment.BF16: (bf16, 1.0),
    Experiment.THREADS: (threads, 2.0),
    Experiment.IR_OPTIM: (ir_optim, 1.0),
    Experiment.FEED_FETCH: (feed_fetch, 0.7),
    Experiment.WARMUP: (warmup, 0.0),
    Experiment.OPTIM_CACHE: (optim_cache, 0.0),
    Experiment.ONEDNN_CACHE: (onednn_cache, 0.0),
    Experiment.TRT_CACHE: (gpu_only(Experiment.TRT_CACHE), 0.0),
    Experiment.FP16: (gpu_only(Experiment.FP16), 0.0),
    Experiment.LAYOUTS: (layouts, LAYOUTS_SHARE),
}
