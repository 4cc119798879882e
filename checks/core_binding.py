"""Core binding: do several instances share every CPU instead of owning a set each?"""

from __future__ import annotations

from paddle_doctor.base.cpus import format_cpu_list
from paddle_doctor.facts import Facts
from paddle_doctor.facts.budget import deployed_workers
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check

RULE = "PD-CPU-014"
BINDING_VARIABLES = ("OMP_PROC_BIND", "KMP_AFFINITY", "GOMP_CPU_AFFINITY")


def check(facts: Facts) -> list[Finding]:
    workers = deployed_workers(facts)
    unknown = facts.unknown_setting("instances")
    if unknown and not workers:
        return [skipped(RULE, f"the service's number of instances is not known: {unknown}; give --instances")]
    instances = len(workers) or facts.service.instances
    if instances < 2:
        return [passed(RULE, "a single instance; nothing competes for its cores")]
    what = f"{instances} worker processes ({', '.join(str(worker.pid) for worker in workers)})" if workers else f"{instances} instances"
    bound = [name for name in BINDING_VARIABLES if facts.env.get(name, "").strip().lower() not in ("", "false", "none", "disabled")]
    if bound:
        return [passed(RULE, f"threads are bound by {', '.join(bound)}")]
    affinity, online = facts.process.affinity, facts.cpu.online_cpus
    if not affinity or not online:
        return [skipped(RULE, "the CPU affinity or the online CPUs are unknown")]
    if set(affinity) >= set(online) and len(online) > 1:
        return [Finding(RULE, Status.FAIL, f"{what} and every thread may run on any of the {len(online)} CPUs",
                        observed=f"affinity {format_cpu_list(affinity)} = all online CPUs; no OMP_PROC_BIND/KMP_AFFINITY",
                        expected="a disjoint CPU set per instance")]
    return [passed(RULE, f"this process is bound to CPUs {format_cpu_list(affinity)}")]


CHECK = Check(name="core_binding", rules=(RULE,), run=check)
