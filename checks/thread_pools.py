"""OpenMP / MKL thread pools: are they sized for the container, or for the host?"""

from __future__ import annotations

from dataclasses import dataclass

from paddle_doctor.base.vocabulary import ProcessStatus, RecordStatus, SourceStatus
from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import CpuBudget, advised_threads, cpu_budget
from paddle_doctor.facts.environment import EnvironmentChange
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check

RULE = "PD-CPU-013"
VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")
OMP = "OMP_NUM_THREADS"
PADDLE_SETS_OMP = ("import paddle (Paddle 3.x, paddle/base/__init__.py; KI-012) then sets OMP_NUM_THREADS=1: "
                   "OpenMP pools started after it run 1 thread, while libraries loaded before it (NumPy's, which Paddle imports first) "
                   "size theirs from the CPUs they see")
CHANGES = {EnvironmentChange.DEFAULTED: " where it is unset",
           EnvironmentChange.PUTENV: " with os.putenv, which os.environ does not see (import paddle, reading os.environ, "
                                     "sets OMP_NUM_THREADS over it)"}


@evidence
class PoolsEvidence(Evidence):
    budget_cpus: float
    budget: int
    visible_cpus: int | None


@dataclass(frozen=True)
class Variable:
    """A thread variable of the service's environment: its value (None: unset), whether it is known, and where it was read."""

    name: str
    value: str | None
    known: bool
    origin: str

    def said(self) -> str:
        return f"{self.name}={self.value} ({self.origin})" if self.origin else f"{self.name}={self.value}"


def check(facts: Facts) -> list[Finding]:
    budget = cpu_budget(facts)
    if budget is None:
        return [skipped(RULE, "the CPU budget is unknown; see PD-CPU-010")]
    variables = [service_variable(facts, name) for name in VARIABLES]
    problems, fine = _pools(facts, variables, budget)
    if problems:
        advised = advised_threads(facts)
        return [Finding(RULE, Status.FAIL, f"thread pools exceed the budget of {budget.describe()}: {'; '.join(problems)}",
                        observed="; ".join(problems), expected=f"OMP_NUM_THREADS={advised} and MKL_NUM_THREADS={advised}, "
                                 f"the predictor's own thread count (never above the budget of {budget.whole_cpus})",
                        evidence=PoolsEvidence(budget.cpus, budget.whole_cpus, budget.visible_cpus))]
    unknown = [variable for variable in variables if not variable.known]
    if unknown:
        said = " and ".join(variable.name + (f" ({variable.origin})" if variable.origin else " (not set in its source)") for variable in unknown)
        return [skipped(RULE, f"the service's {said}: not known, no process of it was read (give --pid, or run it under "
                              "`paddle-doctor record --`); the doctor's own environment is not the service's")]
    if _paddle_3(facts) and variables[0].value is None:
        fine.append("OMP_NUM_THREADS unset: import paddle sets it to 1 (KI-012), so the service's own OpenMP libraries run 1 thread")
    detail = ", ".join(fine) if fine else f"OpenMP sees {budget.visible_cpus} CPUs"
    return [passed(RULE, f"thread pools fit the budget of {budget.describe()} ({detail})")]


def _pools(facts: Facts, variables: list[Variable], budget: CpuBudget) -> tuple[list[str], list[str]]:
    """What exceeds the budget, and what fits it, of the variables known (all unset: OpenMP's own count)."""
    problems: list[str] = []
    fine: list[str] = []
    for variable in variables:
        if variable.known and variable.value is not None:
            _judged(variable, budget.cpus, problems, fine)
    unset = all(variable.known and variable.value is None for variable in variables)
    if unset and budget.visible_cpus and budget.visible_cpus > budget.cpus:
        problems.append(f"OMP_NUM_THREADS is unset, so OpenMP starts {budget.visible_cpus} threads (the CPUs it can see)"
                        + (f"; {PADDLE_SETS_OMP}" if _paddle_3(facts) else ""))
    return problems, fine


def _judged(variable: Variable, cpus: float, problems: list[str], fine: list[str]) -> None:
    try:
        threads = int(str(variable.value).split(",")[0])
    except ValueError:
        problems.append(f"{variable.name}={variable.value!r} is not a number" + (f" ({variable.origin})" if variable.origin else ""))
        return
    said = f"{variable.name}={threads}" + (f" ({variable.origin})" if variable.origin else "")
    (problems if threads > cpus else fine).append(said)


def service_variable(facts: Facts, name: str) -> Variable:
    """The variable as the service has it: the record's (noted as it imported Paddle) over the source's
    (where the code sets it) over the process's environment (/proc/PID/environ); with only the source
    read, one it does not set is not known; with neither, the environment the doctor runs in (the service's image)."""
    record = facts.service_record
    if record is not None and record.status == RecordStatus.READ and record.environment is not None:
        return Variable(name, record.environment.get(name), True, f"{record.source}, as it imported Paddle")
    probed = facts.service_process.status == ProcessStatus.PROBED
    source_only = facts.service_source.status == SourceStatus.READ and not probed
    start = Variable(name, None, False, "") if source_only else \
        Variable(name, facts.env.get(name), True, f"/proc/{facts.service_process.pid}/environ" if probed else "")
    return _set_in_source(facts, start)


def _set_in_source(facts: Facts, variable: Variable) -> Variable:
    """``variable`` after each place the source sets it, in turn (``setdefault`` only where it is unset)."""
    for setting in facts.service_source.environment:
        if setting.name != variable.name:
            continue
        defaulted = setting.change == EnvironmentChange.DEFAULTED
        if defaulted and variable.known and variable.value is not None:
            continue
        origin = f"set at {setting.where()}" + CHANGES.get(setting.change, "")
        known = setting.evaluated and (variable.known or not defaulted)
        variable = Variable(variable.name, setting.value, known, origin)
    return variable


def _paddle_3(facts: Facts) -> bool:
    version = facts.paddle.version or (facts.service_record.paddle_version if facts.service_record else None) or ""
    return version.split(".")[0] == "3"


CHECK = Check(name="thread_pools", rules=(RULE,), run=check, evidence={RULE: PoolsEvidence})
