"""The statistics behind every verdict: percentiles, paired block ratios, confidence, verdicts."""

import math
import random

import pytest
from paddle_doctor.base.vocabulary import Effect
from paddle_doctor.facts.verification import ComparisonResult
from paddle_doctor.verify import stats


def blocks(center: float, rounds: int, noise: float, seed: int, size: int = 10) -> list[list[float]]:
    rng = random.Random(seed)
    return [[center * (1 + rng.uniform(-noise, noise)) for _ in range(size)] for _ in range(rounds)]


def test_percentiles_interpolate_between_ranks():
    values = [float(v) for v in range(1, 101)]
    assert stats.percentile(values, 50) == pytest.approx(50.5)
    assert stats.percentile(values, 90) == pytest.approx(90.1)
    assert stats.percentile(values, 99) == pytest.approx(99.01)
    assert stats.percentile([3.0], 99) == 3.0
    with pytest.raises(ValueError):
        stats.percentile([], 50)


def test_summary_reports_cv():
    summary = stats.summarize([10.0, 10.0, 10.0, 10.0])
    assert (summary.runs, summary.p50, summary.cv) == (4, 10.0, 0.0)
    assert stats.summarize([5.0, 15.0]).cv == pytest.approx(0.5)


@pytest.mark.parametrize(
    "baseline, candidate, noise, verdict",
    [
        (10.0, 5.0, 0.05, Effect.IMPROVED),
        (5.0, 10.0, 0.05, Effect.REGRESSED),
        (10.0, 10.0, 0.05, Effect.NO_EFFECT),
        (10.0, 9.8, 0.01, Effect.NO_EFFECT),  # 2% is below the 3% minimum effect
        (10.0, 9.8, 0.05, Effect.UNDECIDED),  # ... but with this much noise equivalence is not shown
    ],
)
def test_verdicts(baseline, candidate, noise, verdict):
    result = stats.compare(blocks(baseline, 12, noise, 1), blocks(candidate, 12, noise, 2))
    assert result.verdict == verdict
    assert result.ci_low <= result.ratio <= result.ci_high
    assert result.ratio == pytest.approx(baseline / candidate, rel=0.05)


def test_a_comparison_is_the_one_the_facts_record_under_the_arms_names():
    result = stats.compare(blocks(10, 8, 0.01, 1), blocks(5, 8, 0.01, 2), names=("threads=8", "threads=2"), confidence=0.99)
    assert isinstance(result, ComparisonResult) and isinstance(result.verdict, Effect)
    assert (result.baseline, result.candidate, result.rounds, result.confidence) == ("threads=8", "threads=2", 8, 0.99)
    one_round = stats.compare(blocks(10, 1, 0.01, 1), blocks(5, 1, 0.01, 2))
    assert (one_round.baseline, one_round.candidate, one_round.verdict) == ("baseline", "candidate", Effect.UNDECIDED)


def test_too_few_rounds_is_undecided():
    assert stats.compare(blocks(10, 3, 0.01, 1), blocks(5, 3, 0.01, 2)).verdict == Effect.UNDECIDED


def test_noise_keeps_a_small_effect_undecided():
    result = stats.compare(blocks(10.0, 6, 0.6, 3), blocks(9.5, 6, 0.6, 4))
    assert result.verdict == Effect.UNDECIDED
    assert result.ci_high - result.ci_low > 0.1


def test_pairing_cancels_drift():
    """A machine that slows down over time hits both arms of each round alike."""
    drift = [[10.0 * (1 + 0.1 * r)] * 5 for r in range(10)]
    faster = [[v / 1.5 for v in block] for block in drift]
    result = stats.compare(drift, faster)
    assert result.verdict == Effect.IMPROVED and result.ratio == pytest.approx(1.5)
    assert result.ci_high - result.ci_low < 1e-9


def test_t_quantiles():
    assert stats.t_quantile(4) == 2.776
    assert stats.t_quantile(21) == 2.074
    assert stats.t_quantile(1000) == 1.96
    assert math.isfinite(stats.compare(blocks(10, 2, 0.1, 1), blocks(10, 2, 0.1, 2)).ci_high)


