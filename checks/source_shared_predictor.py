"""Source: does the service's code share one predictor among threads with no clone(), pool or lock?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import SourcePatternKind
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import patterns_of, source_finding

RULE = "PD-SRC-005"


def check(facts: Facts) -> list[Finding]:
    return source_finding(facts, RULE, patterns_of(facts, SourcePatternKind.SHARED_PREDICTOR_THREADS),
                          "the service's code shares one predictor among threads", "clone() per thread, a PredictorPool or a lock",
                          "no predictor is shared among threads unprotected")


CHECK = Check(name="source_shared_predictor", rules=(RULE,), run=check, requires=(Need.SOURCE,))
