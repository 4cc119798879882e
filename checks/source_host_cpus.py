"""Source: does the service's code take its thread count from the host's CPU count?

Why: ``os.cpu_count()`` and ``multiprocessing.cpu_count()`` count the host's CPUs, not the
container's quota or cpuset; on a 64-CPU host with a 2-CPU quota the service runs 64 compute
threads and is throttled.
Fix: take it from the container's CPUs (``os.sched_getaffinity``, the quota) or an environment variable.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding
from paddle_doctor.registry import Check, Need
from paddle_doctor.source.lint import settings_finding

RULE = "PD-SRC-007"


def check(facts: Facts) -> list[Finding]:
    found = [(setting, None) for setting in facts.service_source.settings if setting.name == "threads" and setting.host_cpu_count]
    return settings_finding(facts, RULE, found, "the service's code sets its threads from the host's CPU count",
                          "a thread count within the container's CPU budget", "the thread count does not come from os.cpu_count()")


CHECK = Check(name="source_host_cpus", rules=(RULE,), run=check, requires=(Need.SOURCE,))
