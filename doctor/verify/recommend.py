"""The recommended configuration, found by measuring, not assumed from the parts.

Fixes interact (IR optimisation with oneDNN off was measured 2.3x slower on a real GRU model),
so the search moves one setting at a time from the service's configuration, re-measuring each
setting in the context of the settings already adopted (in up to two passes, so a setting adopted
early is revisited once the others have moved), and finally measures the whole recommendation
against the baseline.
"""

from __future__ import annotations

import time

from ..budget import cpu_budget
from ..facts import ComparisonResult, ExperimentResult, Recommendation
from . import stats
from .arms import Arm, label, snippet, vary
from .experiments import BF16_FLAGS, Context, attach_drift, race, thread_counts
from .measure import config_key

SEARCH_ORDER = ("onednn", "threads", "ir_optim", "feed_fetch", "bf16")
FINAL_SHARE = 0.5
MAX_PASSES = 2  # a second pass revisits settings adopted early, now in the context of the later ones


def candidates_for(name: str, ctx: Context, current: Arm) -> list[Arm]:
    if name == "threads":
        return [vary(current, threads=n) for n in thread_counts(ctx.facts, current) if n != current["threads"]]
    if name == "onednn":
        return [vary(current, onednn=not current["onednn"], precision="fp32")]
    if name == "bf16":
        return [vary(current, precision="bf16")] if current["precision"] != "bf16" else []
    return [vary(current, **{name: not current[name]})]


def best_improvement(result: ExperimentResult, max_threads: float | None = None) -> tuple[ComparisonResult, Arm] | None:
    """The fastest candidate measured faster (and not changing outputs).

    Threads above the CPU budget are a failing rule (PD-CPU-010), so when the current setting
    is above the budget and no candidate measured faster, the fastest candidate within the
    budget that did not measure slower is taken: oversubscription is kept only when measuring
    shows that leaving it costs speed. (On an oversubscribed machine the measurements are
    noisy, and "undecided" must not keep the known failure.)
    """
    configs = {arm.label: arm.config for arm in result.arms}
    winners = [c for c in result.comparisons if c.verdict == stats.IMPROVED and not c.changes_outputs]
    if not winners and max_threads is not None and configs["baseline"]["threads"] > max_threads:
        winners = [c for c in result.comparisons
                   if c.verdict != stats.REGRESSED and configs[c.candidate]["threads"] <= max_threads]
    if not winners:
        return None
    best = max(winners, key=lambda c: c.ratio)
    return best, configs[best.candidate]


def recommend(ctx: Context, measured: dict[str, ExperimentResult], budget_s: float, program: str, params: str | None) -> Recommendation:
    started = time.monotonic()
    baseline = current = ctx.baseline
    steps: list[str] = []
    dimensions = [name for name in SEARCH_ORDER if name in measured and measured[name].status == "measured"]
    search_until = started + budget_s * (1 - FINAL_SHARE)
    tried: set[tuple[str, str]] = set()
    for _ in range(MAX_PASSES):
        changed = False
        for index, name in enumerate(dimensions):
            context = (name, config_key(current))
            if context in tried or time.monotonic() >= search_until:
                continue
            tried.add(context)
            if current == baseline:
                result = measured[name]
            else:
                candidates = candidates_for(name, ctx, current)
                if not candidates:
                    continue
                slice_s = max(0.5, (search_until - time.monotonic()) / (len(dimensions) - index))
                result = race(ctx, f"recommend:{name}", candidates, slice_s, base=current)
                if name == "bf16" and any(flag in ctx.facts.cpu.flags for flag in BF16_FLAGS):
                    attach_drift(ctx, result, current, candidates[0])
            budget = cpu_budget(ctx.facts)
            found = best_improvement(result, budget.cpus if budget and name == "threads" else None)
            if found:
                comparison, config = found
                steps.append(f"{label(config, current)}: {_speed(comparison)} "
                             f"[{comparison.confidence:.0%} CI {comparison.ci_low:.2f}-{comparison.ci_high:.2f}]")
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
        snippet=snippet(current, program, params),
        steps=steps,
        baseline=ctx.measurer.arm_result("baseline", baseline),
        recommended=ctx.measurer.arm_result("recommended", current),
        comparison=comparison,
    )


def _speed(comparison: ComparisonResult) -> str:
    if comparison.verdict != stats.IMPROVED:
        return f"within the CPU budget and not measured slower ({comparison.ratio:.2f}x, {comparison.verdict})"
    return f"{comparison.ratio:.2f}x faster"
