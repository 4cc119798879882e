"""PD-CPU-001/002/003, PD-CPU-004 and PD-PREC-001: catches and catches-not, table-driven."""

import pytest
from factories import AVX2_FLAGS, AVX512_BF16_FLAGS, by_rule, make_facts, paddle_ok
from paddle_doctor.checks import bf16_unused, cpu_instructions, onednn
from paddle_doctor.facts import PaddleFacts, ProbeIssue
from paddle_doctor.judge.findings import Status

NO_AVX2 = ["fpu", "sse4_2", "avx"]
NO_AVX = ["fpu", "sse4_2"]


@pytest.mark.parametrize(
    "flags, paddle, expected",
    [
        # catches
        (NO_AVX, paddle_ok(version="3.3.1"), {"PD-CPU-001": "fail", "PD-CPU-002": "skip", "PD-CPU-003": "pass"}),
        (NO_AVX, PaddleFacts(status="crashed", distribution="paddlepaddle", version="2.6.2", signal="SIGILL"),
         {"PD-CPU-001": "fail"}),
        (NO_AVX, PaddleFacts(status="missing"), {"PD-CPU-001": "warn"}),
        (NO_AVX2, paddle_ok(), {"PD-CPU-001": "pass", "PD-CPU-002": "fail", "PD-CPU-003": "pass"}),
        (NO_AVX2 + ["hypervisor"], paddle_ok(), {"PD-CPU-001": "pass", "PD-CPU-002": "skip", "PD-CPU-003": "fail"}),
        (NO_AVX + ["hypervisor"], paddle_ok(), {"PD-CPU-001": "fail", "PD-CPU-003": "fail"}),
        # catches not
        (AVX2_FLAGS, paddle_ok(), {"PD-CPU-001": "pass", "PD-CPU-002": "pass", "PD-CPU-003": "pass"}),
        (AVX2_FLAGS + ["hypervisor"], paddle_ok(), {"PD-CPU-003": "pass"}),
        (NO_AVX, paddle_ok(version="2.4.2", compiled_with_avx=False), {"PD-CPU-001": "pass"}),
    ],
)
def test_instruction_sets(flags, paddle, expected):
    found = by_rule(cpu_instructions.check(make_facts(flags=flags, paddle=paddle)))
    assert {rule: found[rule].status.value for rule in expected} == expected


def test_no_avx_names_the_wheel_and_sigill():
    finding = by_rule(cpu_instructions.check(make_facts(flags=NO_AVX)))["PD-CPU-001"]
    assert "paddlepaddle 3.3.1" in finding.message and "SIGILL" in finding.message


def test_arm_skips_x86_rules():
    found = cpu_instructions.check(make_facts(flags=["fp", "asimd"], arch="aarch64"))
    assert {f.status for f in found} == {Status.SKIP}
    assert "aarch64" in found[0].message


def test_unreadable_cpuinfo_is_an_error_naming_the_path():
    facts = make_facts(flags=[])
    facts.issues.append(ProbeIssue("cpu", "/proc/cpuinfo", "file is empty"))
    found = cpu_instructions.check(facts)
    assert {f.status for f in found} == {Status.ERROR}
    assert "/proc/cpuinfo: file is empty" in found[0].message


@pytest.mark.parametrize(
    "facts, status",
    [
        (make_facts(onednn=False), "fail"),
        (make_facts(paddle=paddle_ok(compiled_with_mkldnn=False)), "fail"),
        (make_facts(paddle=paddle_ok(mkldnn_default_on=False)), "fail"),
        (make_facts(flags=NO_AVX2, paddle=paddle_ok(mkldnn_default_on=False)), "skip"),
        (make_facts(paddle=PaddleFacts(status="missing")), "skip"),
        (make_facts(paddle=PaddleFacts(status="missing"), onednn=True), "pass"),
        (make_facts(), "pass"),
        (make_facts(onednn=True), "pass"),
    ],
)
def test_onednn(facts, status):
    (finding,) = onednn.check(facts)
    assert finding.status.value == status


@pytest.mark.parametrize(
    "facts, status",
    [
        (make_facts(flags=AVX512_BF16_FLAGS), "fail"),
        (make_facts(flags=AVX2_FLAGS + ["amx_bf16", "amx_tile"]), "fail"),
        (make_facts(flags=AVX512_BF16_FLAGS, precision="bf16"), "pass"),
        (make_facts(flags=AVX512_BF16_FLAGS, onednn=False), "skip"),
        (make_facts(flags=AVX2_FLAGS + ["avx512f"]), "pass"),
        (make_facts(flags=[]), "skip"),
    ],
)
def test_bf16_unused(facts, status):
    (finding,) = bf16_unused.check(facts)
    assert finding.status.value == status
