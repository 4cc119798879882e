"""Model load: can the service's own configuration create a predictor and run the model?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check, Need, verification_of

RULE = "PD-CFG-002"


@evidence
class LoadEvidence(Evidence):
    configuration: str
    signal: str | None


def check(facts: Facts) -> list[Finding]:
    verification = verification_of(facts)
    failure = verification.load_failure
    if failure is not None:
        observed = f"killed by {failure.signal}" if failure.signal else failure.message.rsplit(": ", 1)[-1]
        return [Finding(RULE, Status.FAIL, failure.message, observed=observed,
                        expected=f"a predictor created with the service's configuration ({failure.configuration}) that runs the model",
                        evidence=LoadEvidence(failure.configuration, failure.signal))]
    if not verification.experiments:
        return [skipped(RULE, verification.error or "the model was not loaded")]
    return [passed(RULE, "the service's configuration creates a predictor and runs the model")]


CHECK = Check(name="model_load", rules=(RULE,), run=check, requires=(Need.MEASUREMENTS,), evidence={RULE: LoadEvidence})
