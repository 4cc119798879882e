"""Serving layouts under concurrent load, and the split of the CPU budget between them.

A layout is how concurrent requests reach predictors: one predictor behind a lock, one clone
per worker thread, a ``PredictorPool``, or K worker processes with one predictor each; every
predictor runs T math threads. A predictor shared by concurrent threads without a lock is
never a candidate: it is not thread-safe.

The plan is made before anything starts: the candidates are the splits of the CPU budget into
instances x threads that leave no CPU idle (at most one instance per concurrent request), each
in every layout, plus the service's own layout, whatever its threads. Memory is estimated from
the model's size and the container's memory limit; a service layout that cannot fit is a
usage error, candidates that cannot fit are left out and said so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..base.vocabulary import Layout, ModelFormat
from ..facts import Facts
from ..facts.budget import cpu_budget
from ..facts.service_config import serving_layout
from .model import ModelFiles

KINDS = (Layout.LOCK, Layout.CLONE, Layout.POOL, Layout.PROCESSES)
RUNTIME_BYTES = 320 << 20  # a worker process after `import paddle.inference` (measured about 300 MB RSS)
PREDICTOR_FACTOR = 2.5  # a predictor holds about 2.5x the model files (weights, optimised copy, activations)
SHARED_EXCLUDED = ("one predictor shared by concurrent threads without a lock",
                   ("never a candidate: a Paddle predictor is not thread-safe, so concurrent run() calls race "
                    "on its input and output tensors"))


class LoadError(ValueError):
    """A load experiment that cannot start; the message says what is wrong and what is expected."""


@dataclass(frozen=True)
class Arrangement:
    """One way to serve: ``instances`` predictors of ``threads`` math threads each, reached as the
    layout ``kind`` says."""

    kind: Layout
    instances: int
    threads: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "kind", Layout(self.kind))

    @property
    def processes(self) -> int:
        return self.instances if self.kind == Layout.PROCESSES else 1

    @property
    def total_threads(self) -> int:
        return self.instances * self.threads

    @property
    def key(self) -> tuple[Layout, int, int]:
        """Layouts that run the same way compare equal: one instance is one predictor behind a lock."""
        return (Layout.LOCK, 1, self.threads) if self.instances == 1 else (self.kind, self.instances, self.threads)

    def label(self) -> str:
        threads = f"{self.threads} thread{'s' if self.threads != 1 else ''}"
        if self.instances == 1:
            return f"one predictor behind a lock x {threads}"
        name = {Layout.CLONE: "clones", Layout.POOL: "PredictorPool of", Layout.PROCESSES: "processes"}[self.kind]
        return f"{self.instances} {name} x {threads}" if self.kind != Layout.POOL else f"{name} {self.instances} x {threads}"

    def parts(self, concurrency: int) -> list[tuple[int, Layout, int, int]]:
        """(worker process, kind, predictors, client threads) for each process the layout runs in.

        Processes share the concurrent requests as evenly as a load balancer would.
        """
        if self.kind != Layout.PROCESSES:
            return [(0, self.kind, self.instances, concurrency)]
        share, extra = divmod(concurrency, self.instances)
        return [(k, Layout.LOCK, 1, share + (1 if k < extra else 0)) for k in range(self.instances)]

    def memory_bytes(self, model_bytes: int) -> int:
        return self.processes * RUNTIME_BYTES + int(self.instances * PREDICTOR_FACTOR * model_bytes)


@dataclass
class LoadPlan:
    concurrency: int
    budget_cpus: float
    service: Arrangement
    service_label: str
    candidates: list[Arrangement]
    excluded: list[tuple[str, str]] = field(default_factory=list)
    service_shared: bool = False

    @property
    def arms(self) -> list[Arrangement]:
        """The service's layout first, then each candidate that runs differently."""
        seen, arms = set(), []
        for layout in [self.service, *self.candidates]:
            if layout.key not in seen:
                seen.add(layout.key)
                arms.append(layout)
        return arms

    @property
    def hosts(self) -> int:
        """Worker processes the experiment needs: the most processes any arm runs in."""
        return max(layout.processes for layout in self.arms)

    def memory_bytes(self, model_bytes: int) -> int:
        """All arms loaded at once, plus the worker that measures the other experiments."""
        predictors = sum(layout.instances for layout in self.arms)
        return (self.hosts + 1) * RUNTIME_BYTES + int(predictors * PREDICTOR_FACTOR * model_bytes)

    def fits(self, layout: Arrangement) -> bool:
        return layout.total_threads <= self.budget_cpus + 1e-9


def budget_splits(whole_cpus: int, concurrency: int) -> list[tuple[int, int]]:
    """(instances, threads) using the budget with no CPU left idle: neither can grow and still fit."""
    splits = []
    for instances in range(1, min(whole_cpus, concurrency) + 1):
        threads = whole_cpus // instances
        grows = (instances + 1) * threads <= whole_cpus and instances + 1 <= concurrency
        if not grows and (instances, threads) not in splits:
            splits.append((instances, threads))
    return splits


def candidate_layouts(whole_cpus: int, concurrency: int) -> list[Arrangement]:
    layouts: list[Arrangement] = []
    for instances, threads in budget_splits(whole_cpus, concurrency):
        kinds = (Layout.LOCK,) if instances == 1 else (Layout.CLONE, Layout.POOL, Layout.PROCESSES)
        layouts.extend(Arrangement(kind, instances, threads) for kind in kinds)
    return layouts


def service_layout(facts: Facts) -> tuple[Arrangement, str]:
    """The service's layout as measured, and its label (a shared predictor is measured behind a lock)."""
    service = facts.service
    kind = serving_layout(service)
    threads = service.math_threads
    if kind == Layout.SHARED:
        layout = Arrangement(Layout.LOCK, 1, threads)
        return layout, f"service: one predictor shared without a lock x {threads} thread{'s' if threads != 1 else ''} (measured behind a lock)"
    layout = Arrangement(kind, service.instances, threads)
    if service.layout is None and layout.instances == 1:  # nothing says how its requests reach it: no lock is claimed
        return layout, f"service: one predictor x {threads} thread{'s' if threads != 1 else ''} (how requests reach it is not said; measured behind a lock)"
    return layout, f"service: {layout.label()}"


def model_bytes(files: ModelFiles) -> int:
    if files.format == ModelFormat.LEGACY:
        return sum(path.stat().st_size for path in Path(files.directory).iterdir() if path.is_file())
    return sum(Path(path).stat().st_size for path in (files.program, files.params) if path)


def skip_reason(facts: Facts) -> str | None:
    concurrency = facts.service.concurrency
    if concurrency is None:
        return "the service's concurrency is unknown: give --concurrency C (or concurrency: in --config)"
    if concurrency == 1:
        return "the service takes one request at a time (concurrency 1); the threads experiment measures that case"
    if cpu_budget(facts) is None:
        return "the CPU budget is unknown, so no split of it can be measured"
    return None


def plan_load(facts: Facts, files: ModelFiles) -> LoadPlan | None:
    """The layouts to measure (None when the experiment does not apply), or LoadError when the
    request cannot be carried out; called before any worker starts."""
    concurrency = facts.service.concurrency
    if concurrency is not None and concurrency < 1:
        raise LoadError(f"concurrency is {concurrency}; expected a whole number of concurrent requests of at least 1")
    budget = cpu_budget(facts)
    if skip_reason(facts) or budget is None or concurrency is None:
        return None
    service, service_label = service_layout(facts)
    size = model_bytes(files)
    limit = facts.memory.limit_bytes
    if limit is not None and service.memory_bytes(size) > limit:
        raise LoadError(
            f"the service's layout ({service.label()}) needs about {_mib(service.memory_bytes(size))} "
            f"({service.processes} worker process{'es' if service.processes != 1 else ''} of {_mib(RUNTIME_BYTES)} "
            f"for Paddle plus {_mib(int(PREDICTOR_FACTOR * size))} per predictor for a {_mib(size)} model), more than "
            f"the memory limit of {_mib(limit)} ({facts.memory.limit_file}); give the instances the container "
            f"really runs (--instances) or raise the memory limit")
    plan = LoadPlan(concurrency, budget.cpus, service, service_label, candidate_layouts(budget.whole_cpus, concurrency),
                    [SHARED_EXCLUDED], service_shared=serving_layout(facts.service) == Layout.SHARED)
    while limit is not None and plan.candidates and plan.memory_bytes(size) > limit:
        largest = max(plan.candidates, key=lambda layout: layout.memory_bytes(size))
        plan.candidates.remove(largest)
        plan.excluded.append((largest.label(), (f"left out: every layout stays loaded while they are measured in turn, "
                                                f"and with it they would need more than the memory limit of {_mib(limit)}")))
    return plan


def _mib(value: int) -> str:
    return f"{value / (1 << 30):.1f} GiB" if value >= 1 << 30 else f"{value / (1 << 20):.0f} MiB"
