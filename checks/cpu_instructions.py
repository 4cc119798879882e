"""Instruction sets: does this CPU have what the Paddle wheel needs (AVX) and what oneDNN needs (AVX2)?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check

NO_AVX, NO_AVX2, MASKED = "PD-CPU-001", "PD-CPU-002", "PD-CPU-003"
RULES = (NO_AVX, NO_AVX2, MASKED)
FIRST_AVX_ONLY_RELEASE = (2, 6)


def check(facts: Facts) -> list[Finding]:
    cpu = facts.cpu
    if not cpu.flags:
        issues = facts.issues_for("cpu")
        reason = "; ".join(i.describe() for i in issues) or "no CPU flags were recorded"
        return [Finding(rule, Status.ERROR, f"cannot tell the CPU's instruction sets: {reason}") for rule in RULES]
    if cpu.arch != "x86_64":
        return [skipped(rule, f"AVX rules apply to x86 CPUs; this CPU is {cpu.arch}") for rule in RULES]
    flags = set(cpu.flags)
    model = cpu.model_name or "this CPU"
    virtual = "hypervisor" in flags
    findings = [_avx(facts, flags, model)]
    if "avx2" in flags:
        findings.append(passed(NO_AVX2, f"{model} has AVX2; Paddle can use oneDNN"))
        findings.append(passed(MASKED, "AVX2 is visible"))
        return findings
    observed = f"{model}: flags without avx2"
    if "avx" not in flags:
        findings.append(skipped(NO_AVX2, "the CPU has no AVX at all; see PD-CPU-001"))
    elif virtual:
        findings.append(skipped(NO_AVX2, "the CPU is virtual; see PD-CPU-003"))
    else:
        findings.append(Finding(NO_AVX2, Status.FAIL, f"{model} has no AVX2, so Paddle keeps oneDNN off",
                                observed=observed, expected="avx2 in /proc/cpuinfo flags"))
    if virtual:
        findings.append(Finding(MASKED, Status.FAIL,
                                f"the hypervisor exposes '{model}' without AVX2; the physical CPU very likely has it",
                                observed=f"{observed}; 'hypervisor' flag set", expected="host CPU model passed through (avx2 visible)"))
    else:
        findings.append(passed(MASKED, "not a virtual CPU"))
    return findings


def _avx(facts: Facts, flags: set[str], model: str) -> Finding:
    if "avx" in flags:
        return passed(NO_AVX, f"{model} has AVX")
    paddle = facts.paddle
    needs_avx = paddle.compiled_with_avx is True or _release(paddle.version) >= FIRST_AVX_ONLY_RELEASE
    if paddle.version and not needs_avx:
        return passed(NO_AVX, f"{model} has no AVX, but {paddle.distribution} {paddle.version} does not need it")
    if paddle.version:
        return Finding(NO_AVX, Status.FAIL, f"{paddle.distribution} {paddle.version} needs AVX, which {model} lacks: it dies with SIGILL",
                       observed=f"{model}: no avx flag", expected="avx (every x86 Paddle wheel since 2.6 is built with it)")
    return Finding(NO_AVX, Status.WARN, f"{model} lacks AVX: any x86 Paddle wheel since 2.6 will die with SIGILL here",
                   observed=f"{model}: no avx flag", expected="avx")


def _release(version: str | None) -> tuple[int, int]:
    try:
        major, minor = (version or "").split(".")[:2]
        return int(major), int(minor)
    except ValueError:
        return (0, 0)


CHECK = Check(name="cpu_instructions", rules=RULES, run=check)
