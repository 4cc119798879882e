"""Source: does the service's code run an inference before it starts answering requests?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import SourcePatternKind
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Status
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import patterns_of, source_finding

RULE = "PD-SRC-006"


def check(facts: Facts) -> list[Finding]:
    return source_finding(facts, RULE, patterns_of(facts, SourcePatternKind.NO_WARMUP),
                          "the service's code serves requests without a warm-up run", "predictor.run() before serving",
                          "the service's code warms its predictor up, or serves no requests itself", Status.WARN)


CHECK = Check(name="source_warmup", rules=(RULE,), run=check, requires=(Need.SOURCE,))
