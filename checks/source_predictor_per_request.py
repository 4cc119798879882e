"""Source: does the service's code create a predictor for every request?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import SourcePatternKind
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import patterns_of, source_finding

RULE = "PD-SRC-004"


def check(facts: Facts) -> list[Finding]:
    return source_finding(facts, RULE, patterns_of(facts, SourcePatternKind.PREDICTOR_PER_REQUEST),
                          "the service's code creates a predictor per request", "one predictor (or a pool) created at start",
                          "no predictor is created inside a request handler or loop")


CHECK = Check(name="source_predictor_per_request", rules=(RULE,), run=check, requires=(Need.SOURCE,))
