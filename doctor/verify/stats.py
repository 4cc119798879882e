"""Statistics for A/B latency measurements that a performance engineer would sign.

Baseline and candidate run in alternating blocks (A B, then B A, ...), so drift and order
effects hit both. Each round gives one paired ratio of block medians; the speed-up estimate is
the geometric mean of those ratios, with a Student-t 95% confidence interval on their logs.
A verdict needs both statistical and practical significance (the minimum effect, default 3%):

- improved: the whole interval lies above 1 and the estimate is at least 1 + min_effect;
- regressed: the whole interval lies below 1 and the estimate is at most 1 / (1 + min_effect);
- no measurable effect: the whole interval lies within [1 / (1 + min_effect), 1 + min_effect];
- undecided: none of these yet (more rounds needed, or the machine is too noisy).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

IMPROVED, REGRESSED, NO_EFFECT, UNDECIDED = "improved", "regressed", "no measurable effect", "undecided"
MIN_ROUNDS = 5
NOISY_CV = 0.25
# two-sided 97.5% quantiles of Student's t, by degrees of freedom
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
        20: 2.086, 22: 2.074, 24: 2.064, 26: 2.056, 28: 2.048, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


@dataclass
class Summary:
    runs: int
    p50: float
    p90: float
    p99: float
    mean: float
    cv: float


@dataclass
class Comparison:
    ratio: float
    ci_low: float
    ci_high: float
    verdict: str
    rounds: int
    ratio_cv: float


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


def t_quantile(df: int) -> float:
    if df in T975:
        return T975[df]
    larger = [key for key in T975 if key > df]
    return T975[min(larger)] if larger else 1.960


def compare(baseline_blocks: list[list[float]], candidate_blocks: list[list[float]], min_effect: float = 0.03) -> Comparison:
    """Speed-up of the candidate over the baseline (> 1 is faster) from paired blocks."""
    logs = [math.log(statistics.median(b) / statistics.median(c)) for b, c in zip(baseline_blocks, candidate_blocks)]
    rounds = len(logs)
    if rounds == 0:
        return Comparison(1.0, 0.0, math.inf, UNDECIDED, 0, 0.0)
    center = statistics.fmean(logs)
    spread = statistics.stdev(logs) if rounds > 1 else math.inf
    half = t_quantile(rounds - 1) * spread / math.sqrt(rounds) if rounds > 1 else math.inf
    low, high = math.exp(center - half), math.exp(center + half) if half != math.inf else math.inf
    return Comparison(math.exp(center), low, high, verdict(math.exp(center), low, high, rounds, min_effect), rounds,
                      spread if spread != math.inf else 0.0)


def verdict(ratio: float, low: float, high: float, rounds: int, min_effect: float) -> str:
    if rounds < MIN_ROUNDS:
        return UNDECIDED
    upper, lower = 1.0 + min_effect, 1.0 / (1.0 + min_effect)
    if low > 1.0 and ratio >= upper:
        return IMPROVED
    if high < 1.0 and ratio <= lower:
        return REGRESSED
    if low >= lower and high <= upper:
        return NO_EFFECT
    return UNDECIDED
