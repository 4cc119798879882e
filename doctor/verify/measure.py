"""Interleaved measurement of predictor configurations in one worker.

Each configuration is loaded once (creation time and first-inference time recorded) and kept.
A race runs rounds: in each round every arm runs half a block in order and the other half in
reverse order (A B C C B A), so drift within a round cancels; the order turns by one arm from round
to round (B C A A C B next), so no arm always runs first after the pause between rounds (the first
half-block of a round runs cold: 1-2% slower, measured, which an arm always first would pay alone).
Warm-up runs (at least 3, up to 300 ms worth) are discarded.
A race stops as soon as every comparison with the baseline is settled (``settled``: decided, a
speed-up or slow-down by its whole interval past --min-effect, the interval spanning no more than
a factor PRECISE: a gain of 6.8x "decided" at 1.7-26.9x after six rounds is no number to print),
or when its budget ends (then it says "undecided" rather than guess); on a busy
machine (other processes took at least BUSY_SHARE of the CPU time while it ran) a race still
undecided at the end of its budget runs on for up to ``extend_s`` more, the time its caller can
spare within --budget. A race ends with no fewer rounds than a verdict needs (``MIN_ROUNDS``)
unless the time its caller gives it all (``settle_by``, by default the end of --budget) runs out
first: it is then cut short, and says so (``verify.words``). Every request to the
worker has a deadline: what is left of the verification's --budget, plus a grace. After every
round the machine's CPU time is read, and every round's two half-blocks of the baseline are kept as
an A/A comparison: where the baseline measurably differs from itself, no effect smaller than that
difference is decided (``noise``). What a race measured of each arm (its latency, the share of the
CPU time other processes took meanwhile) is what its comparisons say: the arms' figures come from
the race's own rounds.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..base.vocabulary import Effect
from ..facts.predictor import PredictorConfig
from ..facts.verification import BASELINE, MIN_ROUNDS, ArmResult, ComparisonResult, MachineNoise
from . import stats
from .deadline import Deadline
from .noise import CpuCounters, CpuMeter, CpuShare, machine_noise, noise_floor
from .protocol import Load, Run
from .session import WorkerSession

BLOCK_TARGET_MS = 80.0
MAX_BLOCK = 50
WARMUP_RUNS, MAX_WARMUP_RUNS, WARMUP_MS = 3, 30, 300.0
MAX_ROUNDS = 60
PRECISE = 1.5  # an early stop needs every interval's high end within this factor of its low end

Progress = Callable[[str, float], None]


@dataclass(frozen=True)
class Warmed:
    """A configuration loaded and warmed up: its creation, its first run, and the median warm run, in ms."""

    create_ms: float
    first_ms: float
    warm_ms: float


def settled(comparison: ComparisonResult, min_effect: float) -> bool:
    """Decided for good: no effect, or an effect whose whole interval lies past ``min_effect`` (what the
    recommendation adopts), and an interval no wider than a factor PRECISE."""
    c = comparison
    past = c.ci_low >= 1.0 + min_effect or c.ci_high <= 1.0 / (1.0 + min_effect) or c.verdict == Effect.NO_EFFECT
    return c.verdict != Effect.UNDECIDED and past and c.ci_high <= c.ci_low * PRECISE


class Measurer:
    """Loads configurations in one worker and races them; ``sample_count`` inputs are fed in turn."""

    def __init__(self, session: WorkerSession, min_effect: float, progress: Progress | None = None,
                 deadline: Deadline | None = None, sample_count: int = 1, service_pid: int | None = None):
        self.session = session
        self.deadline = deadline or Deadline()
        self.min_effect = min_effect
        self.progress = progress or (lambda label, fraction: None)
        self.sample_count = sample_count
        self.loaded: dict[str, Warmed] = {}
        self.last_config: PredictorConfig | None = None
        self.samples: dict[str, list[float]] = {}
        self.sample_of_run: dict[str, list[int]] = {}
        self.last_race: dict[str, tuple[list[float], list[int]]] = {}  # per configuration, the runs of the last race it ran in
        self.aa_halves: tuple[list[list[float]], list[list[float]]] = ([], [])
        self.cpu = CpuShare()
        self.meter: CpuMeter | None = None  # made at the first race, for the worker's process
        self.service_pid = service_pid  # the live service's process, whose CPU time the noise tells apart

    def load(self, config: PredictorConfig) -> Warmed:
        """Create the predictor for ``config`` (once) and run its warm-up; returns create/first ms.

        Raises BudgetExceeded when its first run alone takes longer than the whole budget."""
        key = config.key()
        self.last_config = config
        if key not in self.loaded:
            name = config.label()
            reply = self.deadline.request(self.session, f"creating the predictor for {name} and its first run",
                                          Load(key, config), creates=True)
            if reply.first_ms > self.deadline.budget_s * 1000.0:
                raise self.deadline.exceed(f"one run takes longer than the budget: the first run of {name} took "
                                           f"{reply.first_ms / 1000.0:.1f} s, the budget is {self.deadline.budget_s:g} s")
            # every sample at least once: oneDNN builds its kernels for each new shape on first sight
            warm, _ = self._run(key, max(WARMUP_RUNS, self.sample_count), name)
            more = min(MAX_WARMUP_RUNS, math.ceil(WARMUP_MS / max(statistics.median(warm), 1e-3))) - WARMUP_RUNS
            if more > 0:
                warm, _ = self._run(key, more, name)
            self.loaded[key] = Warmed(reply.create_ms, reply.first_ms, statistics.median(warm))
            self.samples[key], self.sample_of_run[key] = [], []
        return self.loaded[key]

    def arm_result(self, label: str, config: PredictorConfig) -> ArmResult:
        """The configuration as the last race it ran in measured it (the runs its comparisons were made of),
        or over every run of it where no race kept them."""
        key = config.key()
        loaded = self.loaded.get(key)
        values, sample_of_run = self.last_race.get(key, (self.samples.get(key, []), self.sample_of_run.get(key, [])))
        result = ArmResult(label, config, loaded.create_ms if loaded else None, loaded.first_ms if loaded else None)
        if values:
            result = stats.with_summary(result, stats.summarize(values))
        if values and self.sample_count > 1:
            by_sample = [[ms for ms, sample in zip(values, sample_of_run) if sample == index]
                         for index in range(self.sample_count)]
            medians = {index: statistics.median(times) for index, times in enumerate(by_sample) if times}
            # run-to-run variation is that of the same request: each run against its own sample's median
            relative = [ms / medians[sample] for ms, sample in zip(values, sample_of_run)]
            result = replace(result, sample_p50=[medians.get(index) for index in range(self.sample_count)],
                             cv=stats.summarize(relative).cv)
        return result

    def race(
        self,
        baseline: tuple[str, PredictorConfig],
        candidates: list[tuple[str, PredictorConfig]],
        budget_s: float,
        what: str,
        extend_s: float = 0.0,
        settle_by: float | None = None,
    ) -> list[ComparisonResult]:
        """Measure candidates against the baseline; one comparison per candidate.

        A candidate whose configuration equals the baseline's runs on the same predictor (a
        no-op fix: an A/A measurement). Undecided at ``budget_s`` on a busy machine, the race runs on
        for up to ``extend_s`` more; short of the rounds a verdict needs, it runs on until ``settle_by``
        (monotonic; default the end of --budget).
        """
        arms = [baseline, *candidates]
        for _, config in arms:
            self.load(config)
        half = self._half_block(arms)
        blocks: list[list[list[float]]] = [[] for _ in arms]
        raced: list[tuple[list[float], list[int]]] = [([], []) for _ in arms]
        start, comparisons = time.monotonic(), []
        settle_by = self.deadline.started + self.deadline.budget_s if settle_by is None else settle_by
        self.meter = self.meter or CpuMeter(self.session.proc.pid, service_pid=self.service_pid)
        counters, busy = self.meter.read(), CpuShare()
        for round_index in range(MAX_ROUNDS):
            values, fed = self._round(arms, round_index, half)
            self._keep(arms, values, fed, half, blocks, raced)
            counters = self._count_cpu(self.meter, counters, busy)
            now = time.monotonic()
            elapsed = now - start
            self.progress(what, min(1.0, elapsed / budget_s) if budget_s > 0 else 1.0)
            final = _final_round(round_index, elapsed, now, budget_s, extend_s, settle_by, busy.busy)
            confidence = 0.95 if final else 0.99
            comparisons = [self._compare(baseline, candidate, blocks[0], blocks[i + 1], confidence, busy)
                           for i, candidate in enumerate(candidates)]
            if round_index >= 1 and (final or all(settled(c, self.min_effect) for c in comparisons)):
                break
        for (_, config), kept in zip(arms, raced):
            self.last_race[config.key()] = kept
        return comparisons

    def _half_block(self, arms: list[tuple[str, PredictorConfig]]) -> int:
        """The runs of one half-block: about BLOCK_TARGET_MS of the slowest arm, a whole number of rounds of the samples."""
        slowest = max(self.loaded[c.key()].warm_ms for _, c in arms)
        half = max(1, min(MAX_BLOCK, math.ceil(BLOCK_TARGET_MS / max(slowest, 1e-3))) // 2)
        return math.ceil(half / self.sample_count) * self.sample_count  # every half-block: each sample equally often

    def _round(self, arms: list[tuple[str, PredictorConfig]], round_index: int,
               half: int) -> tuple[list[list[float]], list[list[int]]]:
        """One round: each arm's two half-blocks in :func:`round_order`; each arm's milliseconds and the sample of each run."""
        values: list[list[float]] = [[] for _ in arms]
        fed: list[list[int]] = [[] for _ in arms]
        for position, index in enumerate(round_order(len(arms), round_index)):
            self.last_config = arms[index][1]
            # both half-blocks of a round start at the same samples for every arm: pairs compare like with like
            first_sample = (round_index * 2 + position // len(arms)) * half
            ms, samples = self._run(arms[index][1].key(), half, arms[index][1].label(), first_sample)
            values[index].extend(ms)
            fed[index].extend(samples)
        return values, fed

    def _keep(self, arms: list[tuple[str, PredictorConfig]], values: list[list[float]], fed: list[list[int]], half: int,
              blocks: list[list[list[float]]], raced: list[tuple[list[float], list[int]]]) -> None:
        """A round's runs kept: the baseline's halves for the A/A, each arm's block, its runs over all races and in this one."""
        self.aa_halves[0].append(values[0][:half])
        self.aa_halves[1].append(values[0][half:])
        for index, (_, config) in enumerate(arms):
            blocks[index].append(values[index])
            self.samples[config.key()].extend(values[index])
            self.sample_of_run[config.key()].extend(fed[index])
            raced[index][0].extend(values[index])
            raced[index][1].extend(fed[index])

    def _count_cpu(self, meter: CpuMeter, counters: CpuCounters | None, busy: CpuShare) -> CpuCounters | None:
        """The CPU time since ``counters`` added to this race's share (``busy``) and to all races'; the counters read now."""
        read = meter.read()
        busy.add(counters, read)
        self.cpu.add(counters, read)
        return read

    def aa(self) -> ComparisonResult | None:
        """Each race's baseline, its first half-blocks against its last, over every round raced so far."""
        first, last = self.aa_halves
        return stats.compare(first, last, self.min_effect, names=(BASELINE, f"{BASELINE} again")) if first else None

    def noise(self) -> MachineNoise:
        """How busy the machine was over the races so far, and the baseline against itself."""
        return machine_noise(self.cpu, self.aa(), self.min_effect)

    def beside(self, session: WorkerSession) -> Measurer:
        """A Measurer on another worker (``session``), within this one's deadline, its progress and inputs;
        its rounds count in this one's CPU time and A/A (``noise``)."""
        second = Measurer(session, self.min_effect, self.progress, self.deadline, self.sample_count, self.service_pid)
        second.cpu, second.aa_halves = self.cpu, self.aa_halves
        return second

    def _run(self, key: str, runs: int, name: str, first_sample: int = 0) -> tuple[list[float], list[int]]:
        """Milliseconds of ``runs`` runs of a loaded configuration, and the input sample of each run."""
        what = f"{runs} run{'s' if runs > 1 else ''} of {name}"
        reply = self.deadline.request(self.session, what, Run(key, runs, first_sample))
        return reply.ms, reply.samples

    def _compare(self, baseline, candidate, baseline_blocks, candidate_blocks, confidence, busy: CpuShare) -> ComparisonResult:
        comparison = stats.compare(baseline_blocks, candidate_blocks, self.min_effect, confidence,
                                   names=(baseline[0], candidate[0]), floor=noise_floor(self.aa(), self.min_effect))
        return replace(comparison, others_share=busy.others_share)


def _final_round(round_index: int, elapsed: float, now: float, budget_s: float, extend_s: float, settle_by: float,
                 busy: bool) -> bool:
    """Whether a race's round gives its verdict: the last round, or past the budget with the rounds a verdict needs
    (or no time left to reach them) and not running on for a busy machine."""
    ran_on = elapsed < budget_s + extend_s and busy  # a busy machine's race, still within what can be spared
    too_few = round_index + 1 < MIN_ROUNDS and now < settle_by  # no verdict yet, and time to reach one
    return (elapsed >= budget_s and not ran_on and not too_few) or round_index == MAX_ROUNDS - 1


def round_order(arms: int, round_index: int) -> list[int]:
    """The arms' order in a round: each once forwards, then backwards, the whole turned by one arm a round
    (0 1 1 0, then 1 0 0 1), so that every arm runs first after the pause between rounds as often as the others."""
    turned = [(index + round_index) % arms for index in range(arms)]
    return turned + turned[::-1]
