"""The machine assumptions of the tests that judge live timings: each unmet one skips, saying which."""

import re

import pytest
from machine import Conditions, skip_unless

QUIET = Conditions(cpus=2, cpu_share=0.99, avx2=True)


def test_a_quiet_machine_with_the_cpus_and_flags_asked_for_runs_the_test():
    skip_unless(QUIET, cpus=2, onednn=True)


@pytest.mark.parametrize("conditions, cpus, onednn, reason", [
    (Conditions(cpus=2, cpu_share=0.99, avx2=False), 1, True, "needs a CPU with AVX2"),
    (Conditions(cpus=1, cpu_share=0.99, avx2=True), 2, False, "needs 2 CPUs for the test's processes, has 1"),
    (Conditions(cpus=2, cpu_share=0.43, avx2=True), 1, False, "got only 43% of one each (needs 90%)"),
])
def test_each_unmet_assumption_skips_saying_which(conditions, cpus, onednn, reason):
    with pytest.raises(pytest.skip.Exception, match=re.escape(reason)):
        skip_unless(conditions, cpus=cpus, onednn=onednn)


def test_the_worst_of_before_and_after_is_kept():
    starved = Conditions(cpus=2, cpu_share=0.3, avx2=True)
    assert QUIET.worst(starved) == starved.worst(QUIET) == starved
