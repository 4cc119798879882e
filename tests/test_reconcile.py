"""A finding ends consistent with the measurement of its own fix (doctor/judge/reconcile.py): confirmed
findings keep their status and gain the measured speed-up, refuted ones pass and say to keep the
current setting, a limit the doctor enforces stands, undecided ones say so."""

from dataclasses import replace

import pytest
from paddle_doctor.facts.predictor import PredictorConfig
from paddle_doctor.facts.verification import ArmResult, ComparisonResult, ExperimentResult
from paddle_doctor.judge.findings import Finding, Proposal, Status, Verdict
from paddle_doctor.judge.reconcile import reconcile

BASE = PredictorConfig(threads=8, onednn=False)


def experiment(name, *candidates):
    """``candidates``: (label, config changes, verdict, ratio[, changes_outputs])."""
    arms = [ArmResult("baseline", BASE)] + [ArmResult(label, BASE.vary(**changes)) for label, changes, *_ in candidates]
    comparisons = []
    for label, _, verdict, ratio, *outputs in candidates:
        comparisons.append(ComparisonResult("baseline", label, ratio, ratio * 0.95, ratio * 1.05, verdict, 12,
                                            changes_outputs=outputs[0] if outputs else None))
    return ExperimentResult(name, "measured", arms=arms, comparisons=comparisons)


def onednn_off():
    return Finding("PD-CPU-004", Status.FAIL, "the service turns oneDNN off", observed="disable_mkldnn()",
                   expected="config.enable_mkldnn()", proposal=Proposal("onednn", (True,)))


def test_a_confirmed_fix_keeps_its_status_and_gains_the_measured_speed():
    found = reconcile(onednn_off(), experiment("onednn", ("oneDNN on", {"onednn": True}, "improved", 6.9)))
    assert found.status is Status.FAIL and found.verdict is Verdict.CONFIRMED and found.measured == "oneDNN on"
    assert "measured: oneDNN on vs baseline: 6.90x faster (95% CI 6.55-7.25x faster)" in found.message and found.expected == "config.enable_mkldnn()"


@pytest.mark.parametrize("verdict, ratio, words", [
    ("regressed", 0.8, "oneDNN on vs baseline: 1.25x slower (95% CI 1.19-1.32x slower)"),
    ("no measurable effect", 1.01, "oneDNN on vs baseline: no measurable difference (1.01x faster"),
])
def test_a_refuted_fix_passes_and_says_to_keep_the_current_setting(verdict, ratio, words):
    found = reconcile(onednn_off(), experiment("onednn", ("oneDNN on", {"onednn": True}, verdict, ratio)))
    assert found.status is Status.PASS and found.verdict is Verdict.REFUTED
    assert found.message.startswith("measured: keep the current setting") and words in found.message
    assert found.expected == "the current setting, as measured"


def test_faster_only_by_changing_the_outputs_is_refuted():
    bf16 = Finding("PD-PREC-001", Status.FAIL, "the CPU has avx512_bf16 but the service runs FP32",
                   proposal=Proposal("precision", ("bf16",)))
    found = reconcile(bf16, experiment("bf16", ("bf16", {"precision": "bf16"}, "improved", 2.2, True)))
    assert found.status is Status.PASS and found.verdict is Verdict.REFUTED
    assert "bf16 vs baseline: 2.20x faster" in found.message and "changes the outputs beyond --max-drift" in found.message


def test_undecided_keeps_the_finding_and_says_so():
    found = reconcile(onednn_off(), experiment("onednn", ("oneDNN on", {"onednn": True}, "undecided", 1.1)))
    assert found.status is Status.FAIL and found.verdict is Verdict.UNDECIDED
    assert "oneDNN on vs baseline: undecided (1.10x faster" in found.message and "within the budget" in found.message and "raise --budget" in found.message


def test_undecided_counts_tell_the_story_of_the_count_the_fix_sets():
    """PD-CPU-010's fix sets the budget's 2 threads: of the undecided counts, that one's measurement is said."""
    over = Finding("PD-CPU-010", Status.FAIL, "8 compute threads on a budget of 2 CPUs", proposal=Proposal("threads", (1, 2), binding=True))
    found = reconcile(over, experiment("threads", ("threads=1", {"threads": 1}, "undecided", 1.03),
                                       ("threads=2", {"threads": 2}, "undecided", 1.08)))
    assert found.verdict is Verdict.UNDECIDED and found.measured == "threads=2"
    assert "measured: threads=2 vs baseline: undecided (1.08x faster" in found.message, found.message
    alone = reconcile(over, experiment("threads", ("threads=1", {"threads": 1}, "undecided", 1.03)))
    assert alone.measured == "threads=1"  # the fix's own count not measured: the one that was


def test_an_enforced_limit_stands_when_fewer_threads_measure_slower():
    over = Finding("PD-CPU-010", Status.FAIL, "8 compute threads on a budget of 2 CPUs", observed="8 threads x 1 instance = 8",
                   expected="at most 2 in total", proposal=Proposal("threads", (1, 2), binding=True))
    found = reconcile(over, experiment("threads", ("threads=1", {"threads": 1}, "regressed", 0.7),
                                       ("threads=2", {"threads": 2}, "regressed", 0.9)))
    assert found.status is Status.FAIL and found.verdict is Verdict.REFUTED
    assert "threads=2 vs baseline: 1.11x slower (95% CI 1.06-1.17x slower)" in found.message and "collapse under load" in found.message
    assert found.expected == "at most 2 in total"


def test_only_the_candidates_that_carry_out_the_fix_count():
    """PD-CPU-011 proposes more threads: a faster count below the service's says nothing about it."""
    under = Finding("PD-CPU-011", Status.WARN, "1 compute threads use at most half of 4 CPUs",
                    proposal=Proposal("threads", (2, 3, 4)))
    measured = experiment("threads", ("threads=2", {"threads": 2}, "regressed", 0.9), ("threads=4", {"threads": 4}, "regressed", 0.8))
    measured = replace(measured, arms=[replace(measured.arms[0], config=BASE.vary(threads=1)), *measured.arms[1:]])
    found = reconcile(under, measured)
    assert found.status is Status.PASS and "threads=2 vs baseline: 1.11x slower" in found.message
    unrelated = experiment("onednn", ("oneDNN on", {"onednn": True}, "improved", 3.0))
    assert reconcile(under, unrelated) == under


@pytest.mark.parametrize("finding, measured", [
    (Finding("PD-CPU-004", Status.PASS, "oneDNN is on", proposal=Proposal("onednn", (True,))),
     experiment("onednn", ("oneDNN off", {"onednn": False}, "regressed", 0.2))),
    (onednn_off(), None),
    (onednn_off(), ExperimentResult("onednn", "skipped", reason="the CPU lacks AVX2")),
    (Finding("PD-CPU-012", Status.WARN, "throttled now and then"), experiment("threads", ("threads=1", {"threads": 1}, "improved", 2.0))),
])
def test_nothing_to_reconcile(finding, measured):
    """A passing finding, no measurement, a skipped experiment, or a finding that proposes no setting."""
    assert reconcile(finding, measured) == finding
