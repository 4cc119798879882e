"""Source: does the service's code turn oneDNN off on a CPU that has AVX2?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, skipped
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import switched_off

RULE = "PD-SRC-001"


def check(facts: Facts) -> list[Finding]:
    if "avx2" not in facts.cpu.flags:
        reason = "the CPU flags are unknown" if not facts.cpu.flags else "the CPU lacks AVX2, where Paddle keeps oneDNN off anyway"
        return [skipped(RULE, f"{reason}; PD-CPU-002 covers it")]
    return switched_off(facts, RULE, "onednn", "PD-CPU-004", "the service's oneDNN setting",
                        "the service's code turns oneDNN off on an AVX2 CPU", "no disable_mkldnn() (oneDNN on)",
                        "the service's code does not turn oneDNN off")


CHECK = Check(name="source_onednn", rules=(RULE,), run=check, requires=(Need.SOURCE,))
