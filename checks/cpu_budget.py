"""CPU budget vs threads: do threads x instances fit the CPUs this container may use?"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from paddle_doctor.base.vocabulary import Origin
from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import CpuBudget, WorkerThreads, advised_threads, cpu_budget, service_threads, worker_threads
from paddle_doctor.judge.findings import Evidence, Finding, Proposal, Status, evidence, passed, skipped
from paddle_doctor.judge.live_word import live_threads
from paddle_doctor.judge.registry import Check

if TYPE_CHECKING:
    from paddle_doctor.facts.recorded import RecordedPredictor

OVER, UNDER = "PD-CPU-010", "PD-CPU-011"


@evidence
class ThreadsEvidence(Evidence):
    budget_cpus: float
    limited_by: str
    limit_file: str | None
    threads: int
    threads_set_by: str
    instances: int
    total_threads: int
    threads_per_instance: int


class RecordedThreads(NamedTuple):
    """Where the service's record decides the threads: its predictors that run at once, and where their threads were set."""

    predictors: list[int]
    record: str | None
    threads_set_at: list[str]


@evidence
class RecordedThreadsEvidence(ThreadsEvidence):
    predictors: list[int]
    record: str | None
    threads_set_at: list[str]


def total_threads(facts: Facts) -> int:
    """The compute threads the service runs in this container: threads per predictor x instances, or,
    where the service's record decides, the threads of its predictors that run at once x instances, or,
    where no thread count is known, the live process's busy threads x instances; with a live deployment of
    several workers, the sum of each worker's threads (:func:`deployment_threads`)."""
    workers = deployment_threads(facts)
    if workers is not None:
        return workers.total
    recorded, live = recorded_threads(facts), unsaid_threads(facts)
    return (recorded[0] if recorded else live[0] if live else service_threads(facts)[0]) * facts.service.instances


def deployment_threads(facts: Facts) -> WorkerThreads | None:
    """The threads of each worker of the service's live deployment: its own record's threads at once where the
    record decides, its own busy threads where they stand in for an unknown count, else the count judged for the
    process read in depth; None where the service runs no two workers (or a flag or --config says its instances)."""
    live = unsaid_threads(facts)
    threads, _, recorded = _judged_threads(facts, live)
    if recorded:
        return worker_threads(facts, threads, lambda worker: worker.math_threads)
    return worker_threads(facts, threads, (lambda worker: worker.busy_threads) if live else (lambda worker: None))


def unsaid_threads(facts: Facts) -> tuple[int, str] | None:
    """The live process's busy threads, where they stand in for a thread count nothing else gives: the
    source sets it in a way the doctor cannot evaluate, or nothing sets it and no record was read."""
    if facts.service.threads is not None and not facts.unknown_setting("threads"):
        return None
    live = live_threads(facts)
    if live is None:
        return None
    unknown = facts.unknown_setting("threads")
    why = f"the source's thread count is not known: {unknown}" if unknown else "no thread count is set anywhere"
    return live[0], f"{live[1]}; {why}, so the live process has the last word"


def recorded_threads(facts: Facts) -> tuple[int, str, RecordedThreads] | None:
    """Threads at once per process as the service's record saw them, said with the predictors that make
    them and where their threads were set; None unless the record decides the threads (no flag or --config)."""
    record = facts.service_record
    origin = next((o for o in facts.service_origins if o.name == "threads"), None)
    if record is None or not record.read or origin is None or origin.origin != Origin.RECORD:
        return None
    threads, predictors, how = record.threads_at_once()
    if not predictors:
        return None
    named = "; ".join(_predictor_words(predictor) for predictor in predictors)
    said = RecordedThreads([p.id for p in predictors], record.source,
                           sorted({p.origin.threads_set_at.where() for p in predictors if p.origin.threads_set_at}))
    return threads, f"{threads} threads at once per process ({how}; record {record.source}): {named}", said


def _predictor_words(predictor: RecordedPredictor) -> str:
    where = predictor.origin.threads_set_at or predictor.origin.builder
    threads = predictor.config.cpu.threads if predictor.config else "unseen"
    return (f"predictor {predictor.id} ({predictor.model.name() if predictor.model else 'model not seen'}) "
            f"{threads} threads, set at {where.where() if where else 'a place not seen'}")


def over_budget(total: int, budget: CpuBudget) -> bool:
    """PD-CPU-010's judgement: more threads than whole CPUs. One thread per instance is the least a
    service can run, so a quota below one CPU is PD-CPU-016's, not this rule's."""
    return total > budget.whole_cpus


def ending_with(counts: range, advised: int) -> tuple[int, ...]:
    """``counts``, the one the report advises last where it is among them (a Proposal's values end with what its code sets)."""
    return (*(n for n in counts if n != advised), advised) if advised in counts else tuple(counts)


def check(facts: Facts) -> list[Finding]:
    unreadable = [i for i in facts.issues if i.probe in ("cgroup", "cpu", "process")]
    budget = cpu_budget(facts)
    if budget is None or unreadable:
        reason = "; ".join(i.describe() for i in unreadable) or "no CPU count, cpuset or quota was found"
        return [Finding(rule, Status.ERROR, f"cannot establish the CPU budget: {reason}") for rule in (OVER, UNDER)]
    live, workers = unsaid_threads(facts), deployment_threads(facts)
    guess = _guessed(facts, live, workers)
    if guess:
        return [skipped(rule, guess) for rule in (OVER, UNDER)]
    threads, source, recorded = _judged_threads(facts, live)
    instances = len(workers.each) if workers else facts.service.instances
    total = total_threads(facts)
    per_instance = budget.threads_per_instance(instances)
    counted = source if recorded or live else f"{threads} threads ({source})"
    observed = f"{counted} x {instances} instance{'s' if instances != 1 else ''} = {total}" if workers is None else \
        f"{workers.words()} in workers {', '.join(map(str, workers.pids))}, each as its own record or busy threads say, else as process {facts.service_process.pid}: {counted}"
    advised = advised_threads(facts) or per_instance
    said = (budget.cpus, budget.limited_by.what, budget.limited_by.source, threads, source, instances, total, advised)
    evidence = RecordedThreadsEvidence(*said, *recorded) if recorded else ThreadsEvidence(*said)
    words = workers.words() if workers else f"{total} compute threads"
    return [_over(total, words, budget, observed, evidence, Proposal("threads", ending_with(range(1, per_instance + 1), advised), binding=True)),
            _under(total, words, budget, observed, evidence, Proposal("threads", ending_with(range(threads + 1, per_instance + 1), advised)))]


def _guessed(facts: Facts, live: tuple[int, str] | None, workers: WorkerThreads | None) -> str | None:
    """Why judging would judge a guess (Paddle's default thread count, one instance) where the service's is not
    known and nothing live stands in for it; None where the count and the instances are known."""
    threads, instances = facts.unknown_setting("threads"), facts.unknown_setting("instances")
    if threads and live is None:
        return f"the service's thread count is not known: {threads}; give --threads"
    if instances and workers is None:
        return f"the service's number of instances is not known: {instances}; give --instances"
    return None


def _judged_threads(facts: Facts, live: tuple[int, str] | None) -> tuple[int, str, RecordedThreads | None]:
    """The threads per instance judged and what says so: the service's record where it decides, else the live
    process where it stands in for an unknown count, else the service's settings."""
    recorded = recorded_threads(facts)
    if recorded:
        return recorded
    threads, source = live or service_threads(facts)
    return threads, source, None


def _over(total: int, words: str, budget: CpuBudget, observed: str, evidence: ThreadsEvidence, proposal: Proposal) -> Finding:
    """PD-CPU-010: more compute threads than the budget's whole CPUs (``words`` says the total, worker by worker)."""
    if over_budget(total, budget):
        return Finding(OVER, Status.FAIL, f"{words} on a budget of {budget.describe()}",
                       observed=observed, expected=f"at most {budget.whole_cpus} in total", evidence=evidence, proposal=proposal)
    return passed(OVER, f"{words} fit the budget of {budget.describe()}", evidence)


def _under(total: int, words: str, budget: CpuBudget, observed: str, evidence: ThreadsEvidence, proposal: Proposal) -> Finding:
    """PD-CPU-011: the compute threads use at most half of a budget of two CPUs or more."""
    if total * 2 <= budget.cpus and budget.whole_cpus >= 2:
        return Finding(UNDER, Status.WARN, f"{words} use at most half of {budget.describe()}",
                       observed=observed, expected=f"close to {budget.whole_cpus} in total, if measuring confirms it", evidence=evidence,
                       proposal=proposal)
    return passed(UNDER, f"{words} use the budget of {budget.describe()}")


CHECK = Check(name="cpu_budget", rules=(OVER, UNDER), run=check, evidence={OVER: ThreadsEvidence, UNDER: ThreadsEvidence})
