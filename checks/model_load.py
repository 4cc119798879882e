"""Model load: can the service's own configuration create a predictor and run the model?

Why: a configuration Paddle rejects (a thread count it cannot set, parameters that do not match
the program, a crash in native code while the predictor is created) fails the service at start,
before any request. With --model the doctor loads the model with the service's settings in a
worker process; what Paddle said, or the signal that killed the worker, is the evidence.
Fix: correct the setting or the files named in the message; the other findings still apply.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.registry import Check, Need

RULE = "PD-CFG-002"


def check(facts: Facts) -> list[Finding]:
    verification = facts.verification
    failure = verification.load_failure
    if failure is not None:
        observed = f"killed by {failure.signal}" if failure.signal else failure.message.rsplit(": ", 1)[-1]
        return [Finding(RULE, Status.FAIL, failure.message, observed=observed,
                        expected=f"a predictor created with the service's configuration ({failure.configuration}) that runs the model",
                        evidence={"configuration": failure.configuration, "signal": failure.signal})]
    if not verification.experiments:
        return [skipped(RULE, verification.error or "the model was not loaded")]
    return [passed(RULE, "the service's configuration creates a predictor and runs the model")]


CHECK = Check(name="model_load", rules=(RULE,), run=check, requires=(Need.MEASUREMENTS,))
