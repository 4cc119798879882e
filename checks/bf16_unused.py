"""bfloat16: does the CPU have bf16 units (AVX512-BF16 or AMX) that an FP32 service leaves idle?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Precision
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Proposal, Status, evidence, passed, skipped
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

RULE = "PD-PREC-001"
BF16_FLAGS = ("avx512_bf16", "amx_bf16")


@evidence
class Bf16Evidence(Evidence):
    bf16_flags: list[str]
    paddle_supports_bfloat16: bool | None


def check(facts: Facts) -> list[Finding]:
    if not facts.cpu.flags:
        return [skipped(RULE, "the CPU's flags are unknown")]
    units = [flag for flag in BF16_FLAGS if flag in facts.cpu.flags]
    if not units:
        return [passed(RULE, "the CPU has no bf16 units (avx512_bf16 / amx_bf16)")]
    precision = facts.service.precision
    if precision != Precision.FP32:
        return [passed(RULE, f"the service runs {precision}")]
    if facts.service.onednn is False:
        return [skipped(RULE, "bf16 needs oneDNN, which the service turns off; see PD-CPU-004")]
    return [Finding(RULE, Status.FAIL, f"the CPU has {' and '.join(units)} but the service runs FP32",
                    observed=f"precision fp32; CPU flags include {', '.join(units)}",
                    expected="bf16 tried and measured (experiment 'bf16')",
                    evidence=Bf16Evidence(units, facts.paddle.supports.get("bfloat16")),
                    proposal=Proposal("precision", (Precision.BF16,)))]


CHECK = Check(name="bf16_unused", rules=(RULE,), run=each_predictor(check), evidence={RULE: Bf16Evidence})
