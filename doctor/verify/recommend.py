"""The recommended configuration, found by measuring, not assumed from the parts.

Fixes interact (IR optimisation with oneDNN off was measured 2.3x slower on a real GRU model),
so the search moves one setting at a time from the service's configuration (brought within the
CPU budget first: a recommendation never breaks a rule the doctor enforces), adopting a change
only when it measured decisively faster (``decisive``: a setting within noise keeps its value, so
repeated runs under the same conditions recommend the same) in the context of the settings already
adopted (the experiments' own measurement where it was made there; in up to two passes, so a
setting adopted early is revisited once the others have moved; a setting left with no time to
measure in context keeps its value, whatever another configuration measured; one worker process
can measure a small switch differently from another, so a change decisive by less than
WORKER_SPREAD is adopted only when a worker started for it measures it decisively faster too).
Changes that each measured faster in context can measure slower together: they are offered only
when, together, they measure decisively faster than the start they grew from (else the
recommendation is the start), and what is recommended is finally measured against the service's
configuration.
"""

from __future__ import annotations

import math
import time

from ..base.vocabulary import Effect, Experiment, Precision
from ..facts.predictor import PredictorConfig
from ..facts.verification import BASELINE, MIN_ROUNDS, ComparisonResult, ExperimentResult, KeptSetting, Recommendation
from ..judge.verdict_words import describe, effect_words, says_something
from .experiments import (
    BF16_FLAGS,
    Context,
    bounded_cache,
    race,
    spare_s,
    thread_counts,
    thread_limit,
    with_drift,
    within_budget,
)
from .known_problems import avoiding_known

# the settings measured to matter most first, when the search runs out of time it is the small ones it leaves as
# they are; oneDNN and bf16 first, measured by their experiments where the search starts, oneDNN off and on
SEARCH_ORDER = (Experiment.ONEDNN, Experiment.BF16, Experiment.THREADS, Experiment.IR_OPTIM, Experiment.FEED_FETCH)
FINAL_SHARE = 0.3  # of the recommendation's time, kept for the whole against the service: its effect is large, decided in a few rounds
UNBOUNDED = 1 << 16  # no CPU budget is known: no thread count is enforced
MAX_PASSES = 2  # a second pass revisits settings adopted early, now in the context of the later ones
# The demo CNN's IR optim off, raced against IR optim on in context (threads=2, oneDNN on, bf16) in several
# workers: 1.01x (99% CI 0.98-1.03x) in one, 1.14x (1.10-1.18x) in another, 1.12x on two pairs of predictors in a third.
WORKER_SPREAD = 0.15
MAX_BUDGET_FACTOR = 10  # the most a suggested --budget multiplies the one given
SETTING_OF = {Experiment.BF16: "precision"}  # the PredictorConfig field an experiment moves, where not its own name


def candidates_for(name: Experiment, ctx: Context, current: PredictorConfig) -> list[PredictorConfig]:
    """Variations of ``current`` in one setting, each within the rules the doctor enforces; a switch
    experiment is named as the setting it switches."""
    if name == Experiment.THREADS:
        limit = thread_limit(ctx.facts) or UNBOUNDED
        return [current.vary(threads=n) for n in thread_counts(ctx.facts, current) if n != current.threads and n <= limit]
    if name == Experiment.ONEDNN:  # turned on with its shape cache bounded, as PD-CPU-004's fix does
        return [bounded_cache(current.vary(onednn=not current.onednn, precision=Precision.FP32))]
    if name == Experiment.BF16:
        return [current.vary(precision=Precision.BF16)] if current.precision != Precision.BF16 else []
    return [current.vary(**{name.value: not getattr(current, name.value)})]


def decisive(comparison: ComparisonResult, min_effect: float) -> bool:
    """Faster beyond doubt: decided faster (past the machine's noise floor) at the look that ended its
    race, the whole interval of that look (99% at an interim one, 95% at the final one) at least
    ``min_effect`` faster, and the outputs unchanged. Anything less keeps the setting as it is."""
    return comparison.verdict == Effect.IMPROVED and not comparison.changes_outputs and comparison.ci_low >= 1.0 + min_effect


def best_improvement(result: ExperimentResult, limit: int, min_effect: float) -> tuple[ComparisonResult, PredictorConfig] | None:
    """The decisively faster candidate (``decisive``) not moving threads above the limit: of those
    the measurement cannot tell from the fastest (their intervals overlap its), the one nearest the
    configuration measured against (the fewest threads moved, then the fastest), so that candidates
    within noise of each other never trade places from run to run."""
    configs = {arm.label: arm.config for arm in result.arms}
    base_threads = configs[BASELINE].threads
    winners = [c for c in result.comparisons if decisive(c, min_effect)
               and (configs[c.candidate].threads <= limit or configs[c.candidate].threads == base_threads)]
    if not winners:
        return None
    fastest = max(winners, key=lambda c: c.ratio)
    tied = [c for c in winners if c.ci_high >= fastest.ci_low]
    best = min(tied, key=lambda c: (abs(configs[c.candidate].threads - base_threads), -c.ratio))
    return best, configs[best.candidate]


def search_slice(search_until: float, settings_left: int) -> float:
    """A race's share of what is left of the search: an equal part for each setting still to measure, at least 0.5 s."""
    return max(0.5, (search_until - time.monotonic()) / settings_left)


def within_worker_spread(comparison: ComparisonResult) -> bool:
    """An effect whose interval reaches within WORKER_SPREAD of no effect: one worker's predictors may
    measure a switch that much faster than another's, so it is measured again in a worker of its own
    before it moves a setting."""
    return comparison.ci_low < 1.0 + WORKER_SPREAD


def adoption(ctx: Context, name: Experiment, current: PredictorConfig, config: PredictorConfig, comparison: ComparisonResult,
             search_until: float, settings_left: int) -> tuple[str, bool]:
    """Whether ``config`` (``current`` with the setting ``name`` moved, measured decisively faster in
    ``comparison``) is adopted, and the step that says why: at once where the effect is past what one
    worker's predictors differ from another's (WORKER_SPREAD); else only if a second worker, started
    for it, measures it decisively faster too (neither its process nor its predictors are the first's)."""
    if not within_worker_spread(comparison):
        return f"{config.label(current)}: {describe(comparison)}", True
    within = f"{describe(comparison)}, within what two workers measure apart"
    no_time = kept_because(name, current, f"{within}, and no time was left to measure it in a second worker"), False
    if time.monotonic() >= search_until:
        return no_time
    session = ctx.new_session()
    try:
        if time.monotonic() >= search_until:  # the worker's start took what was left
            return no_time
        slice_s = search_slice(search_until, settings_left)
        (again,) = ctx.measurer.beside(session).race((BASELINE, current), [(config.label(current), config)], slice_s,
                                                     f"recommend:{name} again", extend_s=spare_s(ctx, slice_s),
                                                     settle_by=search_until)
    finally:
        session.close()
    if not decisive(again, ctx.measurer.min_effect):
        return kept_because(name, current, f"{within}; in a second worker {effect_words(again)}"), False
    return f"{config.label(current)}: {describe(comparison)}; in a second worker {effect_words(again)}", True


def admissible_start(ctx: Context, measured: dict[str, ExperimentResult]) -> tuple[PredictorConfig, list[str], list[str]]:
    """The service's configuration within the rules the doctor enforces, with the steps that moved it
    there and their rules: its threads brought within the CPU budget where they exceed it (PD-CPU-010:
    the count that rule's fix sets, and the one the switches were measured at), and oneDNN's shape
    cache bounded where the service leaves it unbounded (PD-MEM-001). The search never starts from,
    and so never recommends, a setting the doctor fails, and it moves to fewer threads only when they
    measure decisively faster in context."""
    baseline = ctx.baseline
    start, steps, enforced = within_budget(ctx.facts, baseline), [], []
    if start != baseline:
        experiment = measured.get(Experiment.THREADS)
        measured_start = next((c for c in experiment.comparisons if c.candidate == start.label(baseline)), None) if experiment else None
        found = f"measured: {describe(measured_start)}" if measured_start else "not measured: the threads experiment did not run"
        steps.append(f"{start.label(baseline)}: the service's {baseline.threads} threads exceed the CPU budget (PD-CPU-010), "
                     f"so the search starts at the budget, as that rule's fix says ({found})")
        enforced.append("PD-CPU-010")
    bounded = bounded_cache(start)
    if bounded != start:
        steps.append(f"{bounded.label(start)}: the service leaves oneDNN's shape cache unbounded "
                     f"({start.onednn_cache_capacity}: PD-MEM-001), so the search starts with it bounded, as that rule's fix says")
        enforced.append("PD-MEM-001")
    return bounded, steps, enforced


def measured_at(result: ExperimentResult) -> PredictorConfig:
    """The configuration an experiment's candidates were measured against."""
    return next(arm.config for arm in result.arms if arm.label == BASELINE)


def where_measured(ctx: Context, result: ExperimentResult) -> str:
    """The configuration an experiment was measured at, in words: the service's, or it within the CPU budget."""
    at = measured_at(result)
    return "the service's configuration" if at == ctx.baseline else f"the service's configuration at {at.label(ctx.baseline)}"


def adopt(current: PredictorConfig, winner: PredictorConfig, measured_from: PredictorConfig) -> PredictorConfig:
    """``current`` with the settings in which ``winner`` differs from the configuration it was measured against."""
    return current.vary(**winner.changes_from(measured_from))


def recommend(ctx: Context, measured: dict[str, ExperimentResult], budget_s: float, program: str, params: str | None) -> Recommendation:
    started = time.monotonic()
    baseline = ctx.baseline
    limit = thread_limit(ctx.facts) or UNBOUNDED
    start, steps, enforced = admissible_start(ctx, {k: v for k, v in measured.items() if v.measured})
    current = start
    dimensions = [name for name in SEARCH_ORDER if name in measured and measured[name].measured]
    search_until = started + budget_s * (1 - FINAL_SHARE)
    ctx.spare_until = search_until
    tried: set[tuple[str, str]] = set()
    judged: set[str] = set()  # the settings judged in some context already
    kept_out: dict[Experiment, str] = {}  # why each setting the search measured is as the service has it
    for _ in range(MAX_PASSES):
        changed = False
        for index, name in enumerate(dimensions):
            context = (name, current.key())
            if context in tried:
                continue
            tried.add(context)
            if measured_at(measured[name]) == current:
                result = measured[name]  # the experiment measured it here already
            elif time.monotonic() >= search_until:
                # evidence from another configuration (a busy machine's, or oneDNN's kernels for native ones) moves nothing
                if name not in judged:
                    kept_out[name] = kept(name, current, measured[name], f"no time was left to measure it in context "
                                                                       f"(measured at {where_measured(ctx, measured[name])})")
                    steps.append(kept_out[name])
                    judged.add(name)
                continue
            else:
                candidates = avoiding_known(ctx.known, candidates_for(name, ctx, current))  # never one a known problem makes fail
                if not candidates:
                    continue
                slice_s = search_slice(search_until, len(dimensions) - index)
                # on a busy machine, undecided, it may take what is left of the search: the settings after it matter less
                result = race(ctx, f"recommend:{name}", candidates, slice_s, base=current, extend_s=spare_s(ctx, slice_s),
                              settle_by=search_until)
                if name == Experiment.BF16 and any(flag in ctx.facts.cpu.flags for flag in BF16_FLAGS):
                    result = with_drift(ctx, result, current, candidates[0])
            judged.add(name)
            found = best_improvement(result, limit, ctx.measurer.min_effect)
            if not found:
                kept_out[name] = kept(name, current, result)
                steps.append(kept_out[name])
                continue
            comparison, winner = found
            config = adopt(current, winner, measured_at(result))
            if config == current:
                kept_out.pop(name, None)
                continue
            step, adopted = adoption(ctx, name, current, config, comparison, search_until, len(dimensions) - index)
            steps.append(step)
            if not adopted:
                kept_out[name] = step
                continue
            kept_out.pop(name, None)
            current, changed = config, True
        if not changed:
            break
    if current == baseline:
        steps.append("no change measured decisively faster than the service's configuration")
    remaining = max(budget_s * FINAL_SHARE, budget_s - (time.monotonic() - started))
    searched = current
    current, whole, not_confirmed = measure_whole(ctx, start, current, remaining, steps)
    if current != searched:  # the changes adopted one at a time measured slower together: each says so
        for name in dimensions:
            setting = SETTING_OF.get(name, name)
            if getattr(searched, setting) != getattr(current, setting):
                kept_out[name] = steps[-1]
    return Recommendation(
        config=current,
        snippet=current.snippet(program, params),
        steps=steps,
        baseline=ctx.measurer.arm_result(BASELINE, baseline),
        recommended=ctx.measurer.arm_result("recommended", current),
        comparison=whole,
        enforced=enforced,
        kept=[KeptSetting(name, why) for name, why in kept_out.items()],
        unconfirmed=not_confirmed,
    )


def measured_not_faster(comparison: ComparisonResult) -> bool:
    """Measured slower, or no faster, or faster only by changing the outputs: evidence against, not the lack of it."""
    return comparison.verdict in (Effect.REGRESSED, Effect.NO_EFFECT) or bool(comparison.changes_outputs)


def measure_whole(ctx: Context, start: PredictorConfig, current: PredictorConfig, budget_s: float,
                  steps: list[str]) -> tuple[PredictorConfig, ComparisonResult | None, str | None]:
    """The recommendation and its comparison with the service's configuration, both measured as a whole,
    and why the changes it adopted are not confirmed as a whole (None where they are, or where it adopted none).

    The changes beyond the start (the service's configuration, or it within the CPU budget) were adopted one
    at a time, each on a decisive measurement; together they are measured against the start alone. Measured
    slower or no faster together, they are not offered and the recommendation is the start; undecided (too few
    rounds, too much noise), they stay, and the recommendation says it is not confirmed as a whole, and what
    would settle it. Then what is recommended races the service's configuration: the report's one comparison
    (the first race is that one where the start is the service's)."""
    baseline = ctx.baseline
    until = time.monotonic() + budget_s
    together = None
    if current != start:
        alone = BASELINE if start == baseline else start.label(baseline)
        share = budget_s if start == baseline else budget_s / 2
        what = "recommended" if start == baseline else "recommend:together"
        (together,) = ctx.measurer.race((alone, start), [("recommended", current)], share, what,
                                        settle_by=time.monotonic() + share)
        against = "the service's configuration" if start == baseline else f"{alone} alone"
        verdict = ("offered" if decisive(together, ctx.measurer.min_effect)
                   else "the changes adopted one at a time are not offered" if measured_not_faster(together)
                   else "offered, each change measured faster where it was adopted, the whole not confirmed")
        steps.append(f"{current.label(baseline)} measured together against {against}: {effect_words(together)}: {verdict}")
        if measured_not_faster(together):
            current = start
        if start == baseline:
            return (current, None, None) if current == start else (current, together, unconfirmed(ctx, together))
    if current == baseline:
        return current, None, None
    # at least half the time, even where the first race ran past its own half on a busy machine: two rounds decide nothing;
    # short of a verdict's rounds, on to the end of the recommendation's time
    (whole,) = ctx.measurer.race((BASELINE, baseline), [("recommended", current)], max(budget_s / 2, until - time.monotonic()),
                                 "recommended", settle_by=until)
    return current, whole, unconfirmed(ctx, whole) if current != start else None


def unconfirmed(ctx: Context, whole: ComparisonResult) -> str | None:
    """Why the recommendation is not confirmed faster as a whole than the service's configuration, and what
    would settle it; None where it is (or where it measured slower: then it says so itself)."""
    if decisive(whole, ctx.measurer.min_effect) or measured_not_faster(whole):
        return None
    return f"not confirmed as a whole: {describe(whole)}; {settling_budget(ctx, whole)}"


def settling_budget(ctx: Context, comparison: ComparisonResult) -> str:
    """What would settle an undecided comparison: a --budget that gives its race the rounds its interval needs
    to clear the least effect decided (rounds grow with the square of the interval's width), at least twice this one."""
    budget = ctx.measurer.deadline.budget_s
    factor = 2.0
    gain = math.log(max(comparison.ratio, 1 / comparison.ratio)) - math.log(1 + ctx.measurer.min_effect)
    if says_something(comparison) and gain > 0 and comparison.rounds >= 2:
        half = (math.log(comparison.ci_high) - math.log(comparison.ci_low)) / 2
        rounds = max(MIN_ROUNDS, comparison.rounds * (half / gain) ** 2)
        factor = max(factor, rounds / comparison.rounds)
    return f"--budget {math.ceil(budget * min(factor, MAX_BUDGET_FACTOR)):g} would settle it"
def kept(name: str, current: PredictorConfig, result: ExperimentResult, why: str = "nothing measured decisively faster") -> str:
    """Why the setting ``name`` stays as it is (by default: its fastest candidate was not decisively faster)."""
    best = max(result.comparisons, key=lambda c: c.ratio, default=None)
    return kept_because(name, current, why + (f": {describe(best)}" if best else ""))


def kept_because(name: str, current: PredictorConfig, why: str) -> str:
    return f"{name} kept as it is ({current.label()}): {why}"
