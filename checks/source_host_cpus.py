"""Source: does the service's code take its thread count from the host's CPU count?"""

from __future__ import annotations

from paddle_doctor.facts import Facts, SourceSetting
from paddle_doctor.judge.findings import Finding
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import settings_finding

RULE = "PD-SRC-007"


def check(facts: Facts) -> list[Finding]:
    found: list[tuple[SourceSetting, str | None]] = [(setting, None) for setting in facts.service_source.settings if setting.name == "threads" and setting.host_cpu_count]
    return settings_finding(facts, RULE, found, "the service's code sets its threads from the host's CPU count",
                          "a thread count within the container's CPU budget", "the thread count does not come from os.cpu_count()")


CHECK = Check(name="source_host_cpus", rules=(RULE,), run=check, requires=(Need.SOURCE,))
