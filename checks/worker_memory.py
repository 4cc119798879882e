"""Worker memory: do the resident memory of the deployment's workers together fit the container's memory limit?"""

from __future__ import annotations

from paddle_doctor.base.words import byte_size, counted
from paddle_doctor.facts import DeployedProcess, Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check

RULE = "PD-MEM-003"
FULL_SHARE = 0.9  # of the limit: what one more request's activations, or one more worker, would take past it


@evidence
class WorkerMemoryEvidence(Evidence):
    workers: int
    pids: list[int]
    rss_bytes: list[int]
    total_bytes: int
    limit_bytes: int
    limit_file: str | None
    workers_that_fit: int


def check(facts: Facts) -> list[Finding]:
    processes = facts.service_process.processes
    limit = facts.memory.limit_bytes
    if not processes:
        return [skipped(RULE, "no service process was read (--pid)")]
    if limit is None:
        return [skipped(RULE, "the container has no memory limit")]
    measured = [process for process in processes if process.rss_bytes is not None]
    if not measured:
        return [skipped(RULE, "the resident memory of the service's processes could not be read")]
    workers = [process for process in facts.service_process.workers() if process.rss_bytes is not None]
    total = sum(resident(measured))
    usage = facts.memory.usage_bytes
    said = (f"{len(measured)} process{'es' if len(measured) != 1 else ''} ({counted(len(workers), 'worker')}) hold {byte_size(total)} "
            f"resident ({' + '.join(byte_size(process.rss_bytes) for process in measured)}) of the {byte_size(limit)} memory limit")
    if usage is not None and usage < total:  # resident memory counts the pages a preloaded master shares in each worker
        said += f"; the cgroup counts {byte_size(usage)}, the pages they share once"
    if min(total, usage if usage is not None else total) < limit * FULL_SHARE:
        return [passed(RULE, said)]
    return [Finding(RULE, Status.FAIL, said, observed=f"{byte_size(total)} resident in {', '.join(str(p.pid) for p in measured)} "
                                                      f"(/proc/PID/status VmRSS)",
                    expected=f"below {FULL_SHARE:.0%} of {byte_size(limit)} ({facts.memory.limit_file}), with room for a request's activations",
                    evidence=WorkerMemoryEvidence(len(workers), [p.pid for p in measured], resident(measured), total,
                                                  limit, facts.memory.limit_file, workers_that_fit(limit, total, workers)))]


def resident(processes: list[DeployedProcess]) -> list[int]:
    return [process.rss_bytes or 0 for process in processes]


def workers_that_fit(limit: int, total: int, workers: list[DeployedProcess]) -> int:
    """How many workers the size of the largest fit below the limit's full share beside the other processes (at least 1)."""
    largest = max(resident(workers), default=0)
    others = total - sum(resident(workers))
    return max(1, int((limit * FULL_SHARE - others) // largest) if largest else len(workers))


CHECK = Check(name="worker_memory", rules=(RULE,), run=check, evidence={RULE: WorkerMemoryEvidence})
