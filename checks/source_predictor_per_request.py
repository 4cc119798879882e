"""Source and record: does the service create a predictor for every request?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import SourcePatternKind
from paddle_doctor.facts import Facts
from paddle_doctor.facts.service_record import CHURN_AT
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check, Need
from paddle_doctor.judge.source_lint import patterns_of, source_finding

RULE = "PD-SRC-004"
EXPECTED = "one predictor (or a pool) created at start"


def check(facts: Facts) -> list[Finding]:
    source_read = Need.SOURCE.missing(facts) is None
    found = patterns_of(facts, SourcePatternKind.PREDICTOR_PER_REQUEST) if source_read else []
    record = facts.service_record
    churn = record.churn() if record is not None else []
    if churn:
        in_code = f"; the service's code creates one per request at {', '.join(str(location) for location, _ in found)}" if found else ""
        return [Finding(RULE, Status.FAIL, f"the service builds a predictor per request: {churn[0].said()} (seen in the record){in_code}",
                        observed="; ".join(seen.said() for seen in churn), expected=EXPECTED,
                        locations=list({str(location): location for location, _ in found}.values()))]
    if source_read:
        return source_finding(facts, RULE, found, "the service's code creates a predictor per request", EXPECTED,
                              "no predictor is created inside a request handler or loop")
    if record is not None and record.read:
        return [passed(RULE, f"no place built {CHURN_AT} or more predictors of one model that each ran at most once "
                             f"(seen in the record: {len(record.predictors)} predictors)")]
    return [skipped(RULE, str(Need.SOURCE.missing(facts)))]


CHECK = Check(name="source_predictor_per_request", rules=(RULE,), run=check, fast=False)  # not in the healthcheck: it reads no source
