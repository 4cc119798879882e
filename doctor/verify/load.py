"""Serving layouts measured under concurrent load: throughput, latency and CPU throttling.

Every layout of the plan is set up once in predictor worker processes (K processes for K
worker processes; the in-process layouts share the first one), then measured in rounds of
short windows. During a window C client threads send requests back to back; each predictor is
owned by a worker thread serving requests in arrival order, so a request waits for a free
predictor as it would in a server's queue. The window's throughput is the requests completed over the time until the
last one finished, and every request's latency includes its wait. The processes of one layout
start and stop together at an agreed moment.

Rounds alternate the order of the layouts (A B C, then C B A), so drift and order effects
cancel over each pair of rounds. Each round gives one paired throughput ratio of every layout
against the service's, and ``stats.compare`` turns those into a trimmed-mean estimate with its
confidence interval, as latency races do (99% at interim looks, 95% at the end of the budget).
After a multi-threaded layout's window the machine settles for longer than OpenMP's spin-wait
(KMP_BLOCKTIME, 200 ms), so that its idle threads do not steal from the next. Throttling is
read from cpu.stat (through the cgroup probe) around every window.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace

from ..base.vocabulary import Effect, Experiment, ExperimentStatus, RaceEnd
from ..facts.predictor import PredictorConfig
from ..facts.verification import (
    ArmResult,
    ComparisonResult,
    ExcludedLayout,
    ExperimentResult,
    LayoutArm,
    LayoutsResult,
    Throttling,
)
from ..probes.cgroup import probe_cgroup
from ..probes.common import Reader
from ..probes.context import ProbeContext
from ..probes.mounts import probe_mounts
from . import stats
from .deadline import Deadline
from .layouts import Arrangement, LoadPlan
from .protocol import LoadWindow, ServeLayout
from .session import WorkerDied, WorkerError, WorkerSession

SETTLE_S, LEAD_S = 0.22, 0.05
WARMUP_S, WARMUP_REQUESTS = 0.3, 3
MIN_WINDOW_S, MAX_WINDOW_S, REQUESTS_PER_WINDOW = 0.3, 3.0, 12
MAX_ROUNDS = 40
CLOSE_RESERVE_S = 1.5  # ending the worker processes (Paddle's teardown) is part of the budget


class LayoutFailed(RuntimeError):
    """A worker died or failed while a layout was set up or measured; names the layout."""

    def __init__(self, layout: str, cause: Exception):
        super().__init__(f"{cause} (layout: {layout})")


class LoadRunner:
    """Sets up layouts in worker processes and loads them, one window at a time."""

    def __init__(self, hosts: list[WorkerSession], plan: LoadPlan, base: PredictorConfig, deadline: Deadline | None = None):
        self.hosts, self.plan, self.base, self.deadline = hosts, plan, base, deadline or Deadline()
        self.current = 0  # the layout being set up or loaded, named when a worker fails
        self.last: Arrangement | None = None

    def config(self, layout: Arrangement) -> PredictorConfig:
        """The configuration each predictor of ``layout`` runs: the service's, with the layout's threads."""
        return self.base.vary(threads=layout.threads)

    def setup(self, arms: list[Arrangement]) -> list[float]:
        """Creates every layout's predictors and client threads, the worker processes side by
        side; returns each layout's slowest creation in ms."""
        pending: list[tuple[int, int, ServeLayout]] = []
        for index, layout in enumerate(arms):
            config = self.config(layout)
            for host, kind, instances, clients in layout.parts(self.plan.concurrency):
                request = ServeLayout(str(index), kind, instances, config, clients)
                self.hosts[host].send(request)
                pending.append((host, index, request))
        created = [0.0] * len(arms)
        for host in range(len(self.hosts)):
            for index, request in ((i, r) for h, i, r in pending if h == host):
                self.current = index
                reply = self.deadline.receive(self.hosts[host], f"setting up layout {index}", request, creates=True)
                created[index] = max(created[index], reply.create_ms)
        return created

    def window(self, index: int, layout: Arrangement, seconds: float, min_requests: int = 1) -> tuple[list[float], float]:
        """Latencies (ms) of every request in the window and the seconds until the last one finished.

        After a multi-threaded layout the machine first settles: its idle OpenMP threads spin
        for KMP_BLOCKTIME and would slow the next layout (single-threaded ones leave none)."""
        if self.last is not None and self.last.threads > 1:
            time.sleep(SETTLE_S)
        self.current, self.last = index, layout
        start_at = time.monotonic() + LEAD_S
        busy = [host for host, _, _, clients in layout.parts(self.plan.concurrency) if clients]
        request = LoadWindow(str(index), start_at, seconds, min_requests)
        for host in busy:
            self.hosts[host].send(request)
        latencies: list[float] = []
        elapsed = 0.0
        for host in busy:
            reply = self.deadline.receive(self.hosts[host], f"a {seconds:.2g} s window of layout {index}", request,
                                          extra_s=seconds + LEAD_S)
            latencies.extend(reply.ms)
            elapsed = max(elapsed, reply.seconds)
        return latencies, elapsed


def start_hosts(new_session: Callable[[], WorkerSession], count: int) -> list[WorkerSession]:
    """Starts the worker processes side by side (each imports Paddle, about a second); if one
    fails, the others are closed and the failure is raised."""
    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(new_session) for _ in range(count)]
    started = [future.result() for future in futures if future.exception() is None]
    failed = next((future.exception() for future in futures if future.exception() is not None), None)
    if failed is not None:
        for session in started:
            session.close()
        raise failed
    return started


def close_hosts(hosts: list[WorkerSession]) -> None:
    """Ends the worker processes side by side."""
    with ThreadPoolExecutor(max_workers=max(len(hosts), 1)) as pool:
        list(pool.map(WorkerSession.close, hosts))


def read_throttling(root: str = "/") -> tuple[int, int, int] | None:
    """(periods, throttled periods, throttled µs) of this container's cgroup, or None without counters."""
    reader = Reader(ProbeContext(root))
    group, _ = probe_cgroup(reader, probe_mounts(reader))
    if group.nr_periods is None or group.nr_throttled is None:
        return None
    return group.nr_periods, group.nr_throttled, group.throttled_usec or 0


@dataclass
class Race:
    """How the rounds went: the window length, the rounds run, why they stopped and the budget they had."""

    window_s: float
    rounds: int
    stopped: RaceEnd
    budget_s: float


class Tally:
    """What one layout measured: per-round ms per request, latencies, requests, seconds, throttling."""

    def __init__(self) -> None:
        self.blocks: list[list[float]] = []
        self.latencies: list[float] = []
        self.seconds = 0.0
        self.throttling: list[int] | None = None
        self.create_ms: float | None = None

    def add(self, latencies: list[float], seconds: float, throttled: tuple | None) -> None:
        self.blocks.append([seconds * 1000.0 / max(len(latencies), 1)])
        self.latencies.extend(latencies)
        self.seconds += seconds
        if throttled:
            self.throttling = [a + b for a, b in zip(self.throttling or [0, 0, 0], throttled)]


def measure_layouts(runner: LoadRunner, started: float, budget_s: float, min_effect: float,
                    progress: Callable[[str, float], None]) -> ExperimentResult:
    """Sets up every arm of the plan, races them in alternating rounds until they are decided or
    the next round would end past the budget (counted from ``started``; at least two rounds
    run), and returns the result."""
    plan, arms = runner.plan, runner.plan.arms
    tallies = [Tally() for _ in arms]
    try:
        for tally, create_ms in zip(tallies, runner.setup(arms)):
            tally.create_ms = create_ms
        window_s = window_length(runner, arms)
        round_s, stopped, comparisons = len(arms) * (window_s + SETTLE_S + LEAD_S), RaceEnd.MAX_ROUNDS, []
        for round_index in range(MAX_ROUNDS):
            round_started = time.monotonic()
            run_round(runner, arms, tallies, window_s, reverse=round_index % 2 == 1)
            elapsed = time.monotonic() - started
            round_s = max(round_s, time.monotonic() - round_started)
            progress(Experiment.LAYOUTS, min(1.0, elapsed / budget_s) if budget_s > 0 else 1.0)
            out_of_time = elapsed + round_s + CLOSE_RESERVE_S > budget_s
            confidence = 0.95 if out_of_time or round_index == MAX_ROUNDS - 1 else 0.99
            comparisons = compare_all(arms, tallies, plan, min_effect, confidence)
            if round_index >= 1 and decided(arms, tallies, plan, comparisons, min_effect, confidence):
                stopped = RaceEnd.DECIDED
                break
            if round_index >= 1 and out_of_time:
                stopped = RaceEnd.BUDGET
                break
    except (WorkerDied, WorkerError) as exc:
        raise LayoutFailed(labels(plan, arms)[runner.current], exc) from exc
    return result(runner, arms, tallies, comparisons, Race(round(window_s, 3), len(tallies[0].blocks), stopped, round(budget_s, 3)))


def window_length(runner: LoadRunner, arms: list[Arrangement]) -> float:
    """One warm-up window per layout (discarded), then a window long enough for the slowest
    layout to complete REQUESTS_PER_WINDOW requests."""
    slowest_ms = 0.0
    for index, layout in enumerate(arms):
        latencies, _ = runner.window(index, layout, WARMUP_S, WARMUP_REQUESTS)
        slowest_ms = max(slowest_ms, statistics.median(latencies))
    # Little's law: C clients each waiting a median latency L complete C / L requests per second
    return min(MAX_WINDOW_S, max(MIN_WINDOW_S, REQUESTS_PER_WINDOW * slowest_ms / 1000.0 / runner.plan.concurrency))


def run_round(runner: LoadRunner, arms: list[Arrangement], tallies: list[Tally], window_s: float, reverse: bool) -> None:
    """One window per layout, in order or reversed, with cpu.stat read around each."""
    order = list(enumerate(arms))
    if reverse:
        order.reverse()
    for index, layout in order:
        before = read_throttling()
        latencies, seconds = runner.window(index, layout, window_s)
        after = read_throttling()
        tallies[index].add(latencies, seconds, tuple(b - a for a, b in zip(before, after)) if before and after else None)


def labels(plan: LoadPlan, arms: list[Arrangement]) -> list[str]:
    return [plan.service_label if index == 0 else layout.label() for index, layout in enumerate(arms)]


def compare_all(arms, tallies, plan, min_effect, confidence) -> list[ComparisonResult]:
    """Every other layout's throughput against the service's (ratio > 1: more requests per second)."""
    names = labels(plan, arms)
    found = []
    for index in range(1, len(arms)):
        found.append(stats.compare(tallies[0].blocks, tallies[index].blocks, min_effect, confidence, names=(names[0], names[index]), latency=False))
    return found


def leader(arms, plan, comparisons) -> int:
    """Index of the layout that fits the budget with the highest throughput estimate (the service's counts as 1)."""
    ratios = [1.0] + [c.ratio for c in comparisons]
    fitting = [i for i, layout in enumerate(arms) if plan.fits(layout)]
    return max(fitting, key=lambda i: ratios[i]) if fitting else 0


def decided(arms, tallies, plan, comparisons, min_effect, confidence) -> bool:
    """Every comparison with the service is decided, and the leader is measurably ahead of, or
    level with, every other layout that fits the budget."""
    if any(c.verdict == Effect.UNDECIDED for c in comparisons):
        return False
    best = leader(arms, plan, comparisons)
    for index, layout in enumerate(arms):
        if index != best and plan.fits(layout):
            verdict = stats.compare(tallies[index].blocks, tallies[best].blocks, min_effect, confidence, latency=False).verdict
            if verdict not in (Effect.IMPROVED, Effect.NO_EFFECT):
                return False
    return True


def recommended(arms, plan, comparisons) -> tuple[int, str]:
    """The layout to run, and why: one that fits the budget and measured more throughput than
    the service's; when the service's layout does not fit the budget, the best one that does,
    unless it measured less throughput. A service that shares its predictor keeps it only
    behind a lock."""
    best, why = _choice(arms, plan, comparisons)
    if best == 0 and plan.service_shared:
        why += "; guard the service's single predictor with a lock: without one it is not thread-safe"
    return best, why


def _choice(arms, plan, comparisons) -> tuple[int, str]:
    best = leader(arms, plan, comparisons)
    if best == 0:
        return 0, ("the service's layout is the fastest measured that fits the CPU budget" if plan.fits(arms[0])
                   else "no layout that fits the CPU budget could be measured")
    verdict = comparisons[best - 1].verdict
    if verdict == Effect.IMPROVED:
        return best, "measurably more throughput than the service's layout, within the CPU budget"
    if verdict != Effect.REGRESSED and not plan.fits(arms[0]):
        return best, f"the fastest layout that fits the CPU budget, which the service's exceeds ({verdict} against it)"
    return 0, f"no layout that fits the CPU budget measured more throughput than the service's ({verdict})"


def result(runner: LoadRunner, arms, tallies, comparisons, race: Race) -> ExperimentResult:
    plan = runner.plan
    names = labels(plan, arms)
    results = []
    for name, layout, tally in zip(names, arms, tallies):
        arm = ArmResult(name, runner.config(layout), create_ms=tally.create_ms,
                        layout=LayoutArm(layout.kind, layout.instances, layout.threads, layout.processes, layout.total_threads,
                                         plan.fits(layout)))
        if tally.latencies:
            arm = replace(stats.with_summary(arm, stats.summarize(tally.latencies)),
                          throughput_rps=len(tally.latencies) / tally.seconds if tally.seconds else None)
        results.append(arm)
    best, why = recommended(arms, plan, comparisons)
    measured = LayoutsResult(
        concurrency=plan.concurrency, budget_cpus=float(plan.budget_cpus), budget_s=race.budget_s, window_s=race.window_s,
        rounds=race.rounds, stopped=race.stopped, recommended=names[best],
        why=why,
        excluded=[ExcludedLayout(layout, reason) for layout, reason in plan.excluded],
        throttling={name: Throttling(*tally.throttling) for name, tally in zip(names, tallies) if tally.throttling is not None},
    )
    noisy = race.stopped == RaceEnd.BUDGET and any(c.verdict == Effect.UNDECIDED for c in comparisons) and any(
        statistics.pstdev(b[0] for b in t.blocks) / statistics.fmean(b[0] for b in t.blocks) > stats.NOISY_CV
        for t in tallies if len(t.blocks) > 1)
    return ExperimentResult(name=Experiment.LAYOUTS, status=ExperimentStatus.MEASURED, arms=results, comparisons=comparisons, noisy=noisy,
                            layouts=measured)
