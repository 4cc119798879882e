"""The words every renderer shares: a message's first clause never leaves a parenthesis open."""

import pytest
from paddle_doctor.base.words import first_clause


@pytest.mark.parametrize(("message", "clause"), [
    ("too noisy within the budget (the baseline alone varies by 18%; others took 46% of the CPU time)",
     "too noisy within the budget (the baseline alone varies by 18%; others took 46% of the CPU time)"),
    ("0 of 5 fused (0%) in the PIR program; 4 x no pass ran", "0 of 5 fused (0%) in the PIR program"),
    ("a (b; (c; d)); e; f", "a (b; (c; d))"),
    ("no clause break at all", "no clause break at all"),
    ("an unbalanced ) closer; then more", "an unbalanced ) closer"),
])
def test_the_first_clause_closes_every_parenthesis_it_opens(message, clause):
    assert first_clause(message) == clause
