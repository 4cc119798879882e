"""One comparison in words, the same in every format: what was measured against what, the ratio,
its confidence interval in the ratio's direction and words, and the p50s of the same paired blocks.

``threads=2 vs baseline: 1.31x faster (95% CI 1.20-1.43x faster; p50 1.21 vs 1.58 ms)``,
``IR optim off vs baseline: 1.06x slower (95% CI 1.02-1.10x slower; ...)``,
``threads=1 vs baseline: undecided (1.01x slower, 95% CI 1.10x slower to 1.05x faster; ...)``,
``... cut short after 4 of the 6 rounds a verdict needs on a machine 41% busy (2.67x slower, 95% CI 1.93-3.69x slower; ...)``,
``... no measurable difference (1.01x faster, 95% CI ...)``. A ratio faster than 1 reads "faster"
even when it rounds to 1.00x. An interval that reaches further than a factor WIDEST from its estimate
says nothing, and no number of it is printed: ``... not enough rounds (2) on a machine 75% busy``.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from ..base.vocabulary import Effect
from ..facts.verification import BUSY_SHARE, MIN_ROUNDS

if TYPE_CHECKING:
    from ..facts.verification import ComparisonResult, MachineNoise

WIDEST = 10.0  # an interval reaching further than this factor from its estimate, either way, says nothing


def speed_words(ratio: float) -> str:
    """A speed ratio (candidate over baseline) for people: ``1.31x faster``, ``1.25x slower``."""
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


def interval_words(comparison: ComparisonResult) -> str:
    """The confidence interval in the words of the ratio: ``95% CI 1.39-1.52x slower``."""
    level = f"{comparison.confidence:.0%} CI"
    low, high = comparison.ci_low, comparison.ci_high
    if not (low > 0 and math.isfinite(high)):
        return f"no {level}: {comparison.rounds} round{'s' if comparison.rounds != 1 else ''}"
    if low >= 1:
        return f"{level} {low:.2f}-{high:.2f}x faster"
    if high < 1:
        return f"{level} {1 / high:.2f}-{1 / low:.2f}x slower"
    return f"{level} {1 / low:.2f}x slower to {high:.2f}x faster"


def p50_words(comparison: ComparisonResult) -> str:
    """The p50s of the paired blocks the ratio comes from, candidate first; empty when not kept."""
    if comparison.candidate_p50 is None or comparison.baseline_p50 is None:
        return ""
    return f"; p50 {comparison.candidate_p50:.2f} vs {comparison.baseline_p50:.2f} ms"


def says_something(comparison: ComparisonResult) -> bool:
    """Whether the comparison's interval is one to print: it has one (two rounds at least), and it reaches
    no further than a factor WIDEST from the estimate either way."""
    c = comparison
    return c.ci_low > 0 and math.isfinite(c.ci_high) and c.ci_high <= c.ratio * WIDEST and c.ci_low >= c.ratio / WIDEST


def on_busy_machine(comparison: ComparisonResult) -> str:
    """`` on a machine 75% busy`` where other processes took at least BUSY_SHARE of the CPU time while it was measured."""
    share = comparison.others_share
    return f" on a machine {share:.0%} busy" if share is not None and share >= BUSY_SHARE else ""


def effect_words(comparison: ComparisonResult) -> str:
    """What the comparison measured, without naming its arms: ``1.31x faster (95% CI 1.20-1.43x faster; p50 ...)``."""
    c = comparison
    numbers = f"{interval_words(c)}{p50_words(c)}"
    if c.verdict in (Effect.IMPROVED, Effect.REGRESSED):
        outputs = " but it changes the outputs beyond --max-drift" if c.changes_outputs else ""
        return f"{speed_words(c.ratio)} ({numbers}){outputs}"
    if c.verdict == Effect.NO_EFFECT:
        words = "no measurable difference"
    elif c.rounds < MIN_ROUNDS:  # its time ran out before the rounds a verdict needs
        words = f"cut short after {c.rounds} of the {MIN_ROUNDS} rounds a verdict needs{on_busy_machine(c)}"
    elif not says_something(c):
        return f"not enough rounds ({c.rounds}){on_busy_machine(c)}"
    else:
        words = "undecided"
    return f"{words} ({speed_words(c.ratio)}, {numbers})" if says_something(c) else words


def describe(comparison: ComparisonResult) -> str:
    """The comparison in one phrase, for any verdict: ``threads=2 vs baseline: 1.31x faster (...)``."""
    return f"{comparison.candidate} vs {comparison.baseline}: {effect_words(comparison)}"


def noise_words(noise: MachineNoise, min_effect: float) -> str:
    """``the machine was busy: 41% of the CPU time went to other processes; ...``, for the report;
    the baseline's A/A difference only where it raised the least effect decided above ``min_effect``."""
    parts = []
    if noise.others_share is not None:
        state = "busy" if noise.others_share >= BUSY_SHARE else "quiet"
        service = f", {noise.service_share:.0%} of it to the service itself" if noise.service_share is not None else ""
        parts.append(f"the machine was {state}: {noise.others_share:.0%} of the CPU time went to other processes{service}")
    if noise.steal_share and noise.steal_share >= 0.005:
        parts.append(f"{noise.steal_share:.0%} was stolen by the hypervisor")
    if noise.throttled_s:
        parts.append(f"the CPU quota throttled the container for {noise.throttled_s:.2f} s")
    if noise.aa is not None and noise.floor > min_effect:
        parts.append(f"the baseline differed from itself by {noise.floor:.1%} (A/A over {noise.aa.rounds} rounds), "
                     f"so no smaller effect is decided")
    return "; ".join(parts) or "how busy the machine was could not be read"
