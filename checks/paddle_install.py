"""Paddle installation: is Paddle importable in the service's Python, and does the import survive?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import PaddleStatus
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.registry import Check

MISSING, CRASHED, FAILED = "PD-PADDLE-001", "PD-PADDLE-002", "PD-PADDLE-003"


@evidence
class MissingEvidence(Evidence):
    python: str | None


@evidence
class CrashEvidence(Evidence):
    signal: str | None
    returncode: int | None
    stderr_tail: str | None


@evidence
class ImportEvidence(Evidence):
    status: PaddleStatus
    stderr_tail: str | None


def check(facts: Facts) -> list[Finding]:
    paddle = facts.paddle
    label = f"{paddle.distribution} {paddle.version}" if paddle.version else "Paddle"
    if paddle.status == PaddleStatus.NOT_PROBED:
        reason = paddle.reason or "the Paddle probe did not run"
        return [skipped(rule, reason) for rule in (MISSING, CRASHED, FAILED)]
    if paddle.status == PaddleStatus.MISSING:
        return [
            Finding(MISSING, Status.FAIL, f"no Paddle distribution is installed for {paddle.python}",
                    observed="import paddle: ModuleNotFoundError", expected="paddlepaddle or paddlepaddle-gpu installed",
                    evidence=MissingEvidence(paddle.python)),
            skipped(CRASHED, "Paddle is not installed"),
            skipped(FAILED, "Paddle is not installed"),
        ]
    installed = passed(MISSING, f"{label} is installed for {paddle.python}")
    if paddle.status == PaddleStatus.CRASHED:
        hint = " (illegal instruction: the wheel uses instructions this CPU lacks)" if paddle.signal == "SIGILL" else ""
        return [
            installed,
            Finding(CRASHED, Status.FAIL, f"importing {label} killed the process with {paddle.signal}{hint}",
                    observed=f"killed by {paddle.signal} during 'import paddle'", expected="the import completes",
                    evidence=CrashEvidence(paddle.signal, paddle.returncode, paddle.stderr_tail)),
            skipped(FAILED, "the import crashed; see PD-PADDLE-002"),
        ]
    survived = passed(CRASHED, f"'import paddle' completed in {paddle.import_seconds} s" if paddle.import_seconds else "'import paddle' completed")
    if paddle.status in (PaddleStatus.FAILED, PaddleStatus.TIMEOUT):
        return [
            installed,
            survived if paddle.status == PaddleStatus.FAILED else skipped(CRASHED, "the import did not finish"),
            Finding(FAILED, Status.FAIL, paddle.reason or f"importing {label} failed",
                    observed=paddle.reason, expected="the import completes",
                    evidence=ImportEvidence(paddle.status, paddle.stderr_tail)),
        ]
    return [installed, survived, passed(FAILED, f"{label} imports cleanly")]


CHECK = Check(name="paddle_install", rules=(MISSING, CRASHED, FAILED), run=check,
              evidence={MISSING: MissingEvidence, CRASHED: CrashEvidence, FAILED: ImportEvidence})
