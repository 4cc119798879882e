"""Source and record: does the service share one predictor among threads with no clone(), pool or lock?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import SourcePatternKind
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import patterns_of, source_finding

RULE = "PD-SRC-005"


def check(facts: Facts) -> list[Finding]:
    source_read = Need.SOURCE.missing(facts) is None
    found = patterns_of(facts, SourcePatternKind.SHARED_PREDICTOR_THREADS) if source_read else []
    judged = facts.service_record.sharing_judged(", ".join(str(location) for location, _ in found) or None) \
        if facts.service_record is not None else None
    if judged is not None:
        if not judged.fails:
            return [passed(RULE, judged.message)]
        return [Finding(RULE, Status.FAIL, judged.message, observed=judged.observed,
                        expected="clone() per thread, a PredictorPool or a lock",
                        locations=list({str(location): location for location, _ in found}.values()))]
    if not source_read:
        return [skipped(RULE, str(Need.SOURCE.missing(facts)))]
    served = "; ".join(f"{location}: {what}" for location, what in patterns_of(facts, SourcePatternKind.ONE_REQUEST_AT_A_TIME))
    return source_finding(facts, RULE, found,
                          "the service's code shares one predictor among threads", "clone() per thread, a PredictorPool or a lock",
                          "no predictor is shared among threads unprotected" + (f" ({served})" if served else ""))


CHECK = Check(name="source_shared_predictor", rules=(RULE,), run=check, fast=False)  # not in the healthcheck: it reads no source
