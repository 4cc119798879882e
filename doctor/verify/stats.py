"""Statistics for A/B latency measurements that a performance engineer would sign.

Baseline and candidate run in rounds of blocks, each round in the order A B B A, so drift and
order effects hit both. Each round gives one paired ratio of block medians. The speed-up estimate
is the 20%-trimmed mean of the log ratios, with the Tukey-McLaughlin 95% confidence interval
(Student t on the winsorized variance): robust to the odd round hit by another process, which
a plain mean is not.
While a race is still running it looks at the data after every round; those interim looks
decide only on a 99% interval, so peeking does not inflate false verdicts. The final look, when
the budget ends, uses the 95% interval. A verdict needs both statistical and practical
significance (the minimum effect, default 3%):

- improved: the whole interval lies above 1 and the estimate is at least 1 + min_effect (or, on a
  noisy machine, 1 + the noise floor the baseline's A/A spread sets: see noise.py);
- regressed: the whole interval lies below 1 and the estimate is at most 1 / (1 + that same bound);
- no measurable effect: the whole interval lies within [1 / (1 + min_effect), 1 + min_effect];
- undecided: none of these yet (more rounds needed, or the machine is too noisy).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, replace

from ..base.vocabulary import Effect
from ..facts.verification import MIN_ROUNDS, ArmResult, ComparisonResult

TRIM = 0.2
NOISY_CV = 0.25
# two-sided 97.5% quantiles of Student's t, by degrees of freedom
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
        20: 2.086, 22: 2.074, 24: 2.064, 26: 2.056, 28: 2.048, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}
# two-sided 99.5% quantiles, for the 99% intervals of interim looks
T995 = {1: 63.657, 2: 9.925, 3: 5.841, 4: 4.604, 5: 4.032, 6: 3.707, 7: 3.499, 8: 3.355, 9: 3.250, 10: 3.169,
        11: 3.106, 12: 3.055, 13: 3.012, 14: 2.977, 15: 2.947, 16: 2.921, 17: 2.898, 18: 2.878, 19: 2.861,
        20: 2.845, 22: 2.819, 24: 2.797, 26: 2.779, 28: 2.763, 30: 2.750, 40: 2.704, 60: 2.660, 120: 2.617}
NORMAL = {0.95: 1.960, 0.99: 2.576}
TABLES = {0.95: T975, 0.99: T995}


@dataclass
class Summary:
    runs: int
    p50: float
    p90: float
    p99: float
    mean: float
    cv: float


def with_summary(arm: ArmResult, summary: Summary) -> ArmResult:
    """The arm with its runs' count, percentiles, mean and variation."""
    return replace(arm, runs=summary.runs, p50=summary.p50, p90=summary.p90, p99=summary.p99, mean=summary.mean, cv=summary.cv)


def percentile(values: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (q in 0..100)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("no values")
    position = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(position), math.ceil(position)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def summarize(values: list[float]) -> Summary:
    mean = statistics.fmean(values)
    cv = statistics.pstdev(values) / mean if len(values) > 1 and mean > 0 else 0.0
    return Summary(len(values), percentile(values, 50), percentile(values, 90), percentile(values, 99), mean, cv)


def t_quantile(df: int, confidence: float = 0.95) -> float:
    table = TABLES[confidence]
    if df in table:
        return table[df]
    larger = [key for key in table if key > df]
    return table[min(larger)] if larger else NORMAL[confidence]


def compare(
    baseline_blocks: list[list[float]], candidate_blocks: list[list[float]], min_effect: float = 0.03, confidence: float = 0.95,
    names: tuple[str, str] = ("baseline", "candidate"), latency: bool = True, floor: float | None = None,
) -> ComparisonResult:
    """Speed-up of the candidate over the baseline (> 1 is faster) from paired blocks, under the arms' ``names``.

    With ``latency`` (the blocks hold milliseconds per run) the comparison carries the p50 of each
    arm over the same paired blocks, and a verdict that those p50s contradict is undecided.
    ``floor`` (the machine's noise floor, at least ``min_effect``) is the least effect decided."""
    pairs = list(zip(baseline_blocks, candidate_blocks))
    logs = [math.log(statistics.median(b) / statistics.median(c)) for b, c in pairs]
    rounds = len(logs)
    p50s = paired_p50s(pairs) if latency and pairs else (None, None)
    if rounds < 2:
        center = logs[0] if logs else 0.0
        return ComparisonResult(*names, math.exp(center), 0.0, math.inf, Effect.UNDECIDED, rounds, confidence, *p50s)
    center, half = trimmed_mean_interval(logs, confidence)
    low, high = math.exp(center - half), math.exp(center + half)
    ratio = math.exp(center)
    effect = verdict(ratio, low, high, rounds, min_effect, floor)
    if latency and contradicted(effect, *p50s):
        effect = Effect.UNDECIDED
    return ComparisonResult(*names, ratio, low, high, effect, rounds, confidence, *p50s)


def paired_p50s(pairs: list[tuple[list[float], list[float]]]) -> tuple[float, float]:
    """The median run of the baseline and of the candidate over the paired blocks."""
    return (statistics.median([ms for b, _ in pairs for ms in b]), statistics.median([ms for _, c in pairs for ms in c]))


def contradicted(effect: Effect, baseline_p50: float | None, candidate_p50: float | None) -> bool:
    """A decided speed-up (or slow-down) whose own blocks' p50s point the other way, or not at all."""
    if baseline_p50 is None or candidate_p50 is None:
        return False
    if effect == Effect.IMPROVED:
        return candidate_p50 >= baseline_p50
    if effect == Effect.REGRESSED:
        return candidate_p50 <= baseline_p50
    return False


def trimmed_mean_interval(values: list[float], confidence: float = 0.95, trim: float = TRIM) -> tuple[float, float]:
    """Trimmed mean and the half-width of its confidence interval (Tukey-McLaughlin)."""
    ordered = sorted(values)
    n = len(ordered)
    g = int(trim * n)
    kept = ordered[g : n - g]
    winsorized = [ordered[g]] * g + kept + [ordered[n - g - 1]] * g
    h = len(kept)
    spread = statistics.stdev(winsorized)
    if g:
        half = t_quantile(max(h - 1, 1), confidence) * spread / ((1 - 2 * trim) * math.sqrt(n))
    else:
        half = t_quantile(n - 1, confidence) * spread / math.sqrt(n)
    return statistics.fmean(kept), half


def verdict(ratio: float, low: float, high: float, rounds: int, min_effect: float, floor: float | None = None) -> Effect:
    """An effect is decided only past the noise ``floor`` (at least ``min_effect``); "no measurable
    effect" needs the whole interval within ``min_effect`` whatever the noise."""
    if rounds < MIN_ROUNDS:
        return Effect.UNDECIDED
    least = max(min_effect, floor or 0.0)
    if low > 1.0 and ratio >= 1.0 + least:
        return Effect.IMPROVED
    if high < 1.0 and ratio <= 1.0 / (1.0 + least):
        return Effect.REGRESSED
    if low >= 1.0 / (1.0 + min_effect) and high <= 1.0 + min_effect:
        return Effect.NO_EFFECT
    return Effect.UNDECIDED
