"""The recommended configuration, found by measuring, not assumed from the parts.

Fixes interact (IR optimisation with oneDNN off was measured 2.3x slower on a real GRU model),
so the search moves one setting at a time from the service's configuration (brought within the
CPU budget first: a recommendation never breaks a rule the doctor enforces), re-measuring each
setting in the context of the settings already adopted (in up to two passes, so a setting adopted
early is revisited once the others have moved), and finally measures the whole recommendation
against the baseline.
"""

from __future__ import annotations

import time

from ..facts import ComparisonResult, ExperimentResult, Recommendation
from ..facts.predictor import PredictorConfig
from ..vocabulary import Effect, Precision
from .words import describe
from .experiments import BF16_FLAGS, Context, attach_drift, race, thread_counts, thread_limit

SEARCH_ORDER = ("onednn", "threads", "ir_optim", "feed_fetch", "bf16")
FINAL_SHARE = 0.5
UNBOUNDED = 1 << 16  # no CPU budget is known: no thread count is enforced
MAX_PASSES = 2  # a second pass revisits settings adopted early, now in the context of the later ones


def candidates_for(name: str, ctx: Context, current: PredictorConfig) -> list[PredictorConfig]:
    """Variations of ``current`` in one setting, each within the rules the doctor enforces."""
    if name == "threads":
        limit = thread_limit(ctx.facts) or UNBOUNDED
        return [current.vary(threads=n) for n in thread_counts(ctx.facts, current) if n != current.threads and n <= limit]
    if name == "onednn":
        return [current.vary(onednn=not current.onednn, precision=Precision.FP32)]
    if name == "bf16":
        return [current.vary(precision=Precision.BF16)] if current.precision != Precision.BF16 else []
    return [current.vary(**{name: not getattr(current, name)})]


def best_improvement(result: ExperimentResult, limit: int) -> tuple[ComparisonResult, PredictorConfig] | None:
    """The fastest candidate measured faster, not changing outputs, and not moving threads above the limit."""
    configs = {arm.label: arm.config for arm in result.arms}
    base_threads = configs["baseline"].threads
    winners = [c for c in result.comparisons if c.verdict == Effect.IMPROVED and not c.changes_outputs
               and (configs[c.candidate].threads <= limit or configs[c.candidate].threads == base_threads)]
    if not winners:
        return None
    best = max(winners, key=lambda c: c.ratio)
    return best, configs[best.candidate]


def admissible_start(ctx: Context, measured: dict[str, ExperimentResult], limit: int) -> tuple[PredictorConfig, str | None]:
    """The service's configuration, or, when its threads exceed the CPU budget (PD-CPU-010), the same
    with the thread count within the budget that measured fastest against it: the search never
    starts from, and so never recommends, a setting the doctor fails."""
    baseline = ctx.baseline
    if baseline.threads <= limit:
        return baseline, None
    experiment = measured.get("threads")
    configs = {arm.label: arm.config for arm in experiment.arms} if experiment else {}
    within = [c for c in experiment.comparisons if configs[c.candidate].threads <= limit] if experiment else []
    if not within:
        start = baseline.vary(threads=limit)
        return start, (f"{start.label(baseline)}: the service's {baseline.threads} threads exceed the CPU budget "
                       f"(PD-CPU-010), so the search starts within it (not measured: the threads experiment did not run)")
    fastest = max(within, key=lambda c: c.ratio)
    start = configs[fastest.candidate]
    return start, (f"{start.label(baseline)}: the service's {baseline.threads} threads exceed the CPU budget (PD-CPU-010); "
                   f"of the counts within it this one measured fastest: {describe(fastest)}")


def adopt(current: PredictorConfig, winner: PredictorConfig, measured_from: PredictorConfig) -> PredictorConfig:
    """``current`` with the settings in which ``winner`` differs from the configuration it was measured against."""
    return current.vary(**winner.changes_from(measured_from))


def recommend(ctx: Context, measured: dict[str, ExperimentResult], budget_s: float, program: str, params: str | None) -> Recommendation:
    started = time.monotonic()
    baseline = ctx.baseline
    limit = thread_limit(ctx.facts) or UNBOUNDED
    current, forced = admissible_start(ctx, {k: v for k, v in measured.items() if v.measured}, limit)
    steps: list[str] = [forced] if forced else []
    dimensions = [name for name in SEARCH_ORDER if name in measured and measured[name].measured]
    search_until = started + budget_s * (1 - FINAL_SHARE)
    tried: set[tuple[str, str]] = set()
    decided: set[str] = set()  # dimensions already judged, in context or (out of time) at the service's configuration
    for _ in range(MAX_PASSES):
        changed = False
        for index, name in enumerate(dimensions):
            context = (name, current.key())
            if context in tried:
                continue
            tried.add(context)
            out_of_time = time.monotonic() >= search_until
            if out_of_time and name in decided:
                continue  # never let a measurement at the service's configuration undo one made in context
            decided.add(name)
            if current == baseline or out_of_time:
                result = measured[name]  # at the service's configuration; the final race measures the whole
            else:
                candidates = candidates_for(name, ctx, current)
                if not candidates:
                    continue
                slice_s = max(0.5, (search_until - time.monotonic()) / (len(dimensions) - index))
                result = race(ctx, f"recommend:{name}", candidates, slice_s, base=current)
                if name == "bf16" and any(flag in ctx.facts.cpu.flags for flag in BF16_FLAGS):
                    attach_drift(ctx, result, current, candidates[0])
            found = best_improvement(result, limit)
            if found:
                comparison, winner = found
                config = adopt(current, winner, next(arm.config for arm in result.arms if arm.label == "baseline"))
                if config == current:
                    continue
                where = (" (measured at the service's configuration: no time was left to measure it in context)"
                         if current != baseline and result is measured[name] else "")
                steps.append(f"{config.label(current)}: {describe(comparison)}{where}")
                current, changed = config, True
        if not changed:
            break
    comparison = None
    if current != baseline:
        remaining = max(budget_s * FINAL_SHARE, budget_s - (time.monotonic() - started))
        (comparison,) = ctx.measurer.race(("baseline", baseline), [("recommended", current)], remaining, "recommended")
    else:
        steps.append("no change measured faster than the service's configuration")
    return Recommendation(
        config=current,
        snippet=current.snippet(program, params),
        steps=steps,
        baseline=ctx.measurer.arm_result("baseline", baseline),
        recommended=ctx.measurer.arm_result("recommended", current),
        comparison=comparison,
        enforced=["PD-CPU-010"] if forced else [],
    )

