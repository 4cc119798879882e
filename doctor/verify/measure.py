"""Interleaved measurement of predictor configurations in one worker.

Each configuration is loaded once (creation time and first-inference time recorded) and kept.
A race runs rounds of blocks: in each round every arm runs one block, in an order that reverses
every round (A B C, C B A, ...), so drift and order effects cancel. Warm-up runs are discarded.
A race stops as soon as every comparison with the baseline is decided, or when its budget ends
(then it says "undecided" rather than guess).
"""

from __future__ import annotations

import json
import math
import statistics
import time
from typing import Any, Callable

from ..facts import ArmResult, ComparisonResult
from . import stats
from .arms import config_calls
from .session import WorkerSession

BLOCK_TARGET_MS = 60.0
MIN_BLOCK, MAX_BLOCK = 2, 50
WARMUP_RUNS = 3
MAX_ROUNDS = 60

Progress = Callable[[str, float], None]


def config_key(config: dict[str, Any]) -> str:
    return json.dumps(config, sort_keys=True)


class Measurer:
    def __init__(self, session: WorkerSession, min_effect: float, progress: Progress | None = None):
        self.session = session
        self.min_effect = min_effect
        self.progress = progress or (lambda label, fraction: None)
        self.loaded: dict[str, dict[str, float]] = {}
        self.last_config: dict[str, Any] | None = None
        self.samples: dict[str, list[float]] = {}

    def load(self, config: dict[str, Any], timeout: float = 300.0) -> dict[str, float]:
        """Create the predictor for ``config`` (once) and run its warm-up; returns create/first ms."""
        key = config_key(config)
        self.last_config = config
        if key not in self.loaded:
            reply = self.session.request(timeout, cmd="load", arm=key, calls=config_calls(config))
            warm = self.session.request(timeout, cmd="run", arm=key, n=WARMUP_RUNS)
            self.loaded[key] = {"create_ms": reply["create_ms"], "first_ms": reply["first_ms"],
                                "warm_ms": statistics.median(warm["ms"])}
            self.samples[key] = []
        return self.loaded[key]

    def arm_result(self, label: str, config: dict[str, Any]) -> ArmResult:
        key = config_key(config)
        loaded, values = self.loaded.get(key, {}), self.samples.get(key, [])
        result = ArmResult(label, config, loaded.get("create_ms"), loaded.get("first_ms"))
        if values:
            summary = stats.summarize(values)
            result.runs, result.p50, result.p90, result.p99 = summary.runs, summary.p50, summary.p90, summary.p99
            result.mean, result.cv = summary.mean, summary.cv
        return result

    def race(
        self,
        baseline: tuple[str, dict[str, Any]],
        candidates: list[tuple[str, dict[str, Any]]],
        budget_s: float,
        what: str,
    ) -> list[ComparisonResult]:
        """Measure candidates against the baseline; one comparison per candidate."""
        arms = [baseline, *candidates]
        for label, config in arms:
            self.load(config)
        slowest = max(self.loaded[config_key(c)]["warm_ms"] for _, c in arms)
        block = max(MIN_BLOCK, min(MAX_BLOCK, math.ceil(BLOCK_TARGET_MS / max(slowest, 1e-3))))
        blocks: dict[str, list[list[float]]] = {config_key(c): [] for _, c in arms}
        start, comparisons = time.monotonic(), []
        for round_index in range(MAX_ROUNDS):
            order = arms if round_index % 2 == 0 else list(reversed(arms))
            for _, config in order:
                key = config_key(config)
                self.last_config = config
                timeout = 60.0 + block * slowest * 20 / 1000.0
                values = self.session.request(timeout, cmd="run", arm=key, n=block)["ms"]
                blocks[key].append(values)
                self.samples[key].extend(values)
            comparisons = [self._compare(baseline, candidate, blocks) for candidate in candidates]
            elapsed = time.monotonic() - start
            self.progress(what, min(1.0, elapsed / budget_s) if budget_s > 0 else 1.0)
            if round_index >= 1 and (all(c.verdict != stats.UNDECIDED for c in comparisons) or elapsed >= budget_s):
                break
        return comparisons

    def _compare(self, baseline, candidate, blocks) -> ComparisonResult:
        result = stats.compare(blocks[config_key(baseline[1])], blocks[config_key(candidate[1])], self.min_effect)
        return ComparisonResult(baseline[0], candidate[0], result.ratio, result.ci_low, result.ci_high,
                                result.verdict, result.rounds)

    def drop_all(self) -> None:
        for key in list(self.loaded):
            self.session.request(60, cmd="drop", arm=key)
        self.loaded.clear()
