"""Baseline, cache: is the optimisation / TensorRT engine cache still there, full and on its volume?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.facts.pinned import baseline_cache
from paddle_doctor.judge.findings import Finding, Status, passed, skipped
from paddle_doctor.judge.registry import Check, Need, baseline_of

RULE = "PD-HEALTH-006"


def check(facts: Facts) -> list[Finding]:
    before, now = baseline_of(facts).cache, baseline_cache(facts)
    if before is None:
        return [skipped(RULE, "the baseline records no cache")]
    where = f"cache {before.path}"
    if now is None or now.path != before.path:
        problem = f"the service no longer uses {where} (its config changed since baseline); re-create the baseline"
    elif now.error:
        problem = now.error
    elif before.exists and not now.exists:
        problem = f"{where} is gone (baseline: {before.files} files, {before.engines} engines)"
    elif before.engines and not now.engines:
        problem = f"{where} lost its {before.engines} TensorRT engines"
    elif before.files and not now.files:
        problem = f"{where} was emptied (baseline: {before.files} files)"
    elif before.persisted and not now.persisted:
        problem = f"{where} is no longer on its volume ({before.mountpoint}, {before.fstype}); now on {now.fstype}"
    else:
        return [passed(RULE, f"{where}: {now.files} files, {now.engines} engines" if now.exists else f"{where} absent, as at baseline")]
    return [Finding(RULE, Status.FAIL, problem)]


CHECK = Check(name="baseline_cache", rules=(RULE,), run=check, requires=(Need.BASELINE,))
