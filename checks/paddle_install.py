"""Paddle installation: is Paddle importable in the service's Python, and does the import survive?

Why: a doctor for Paddle inference has to work exactly where Paddle does not. A missing wheel,
an import that dies from a signal (SIGILL: the wheel needs instructions the CPU lacks), or an
import that raises or hangs each stops the service before the first request.
Fix: install Paddle into the interpreter that serves the model; for a crash, see the CPU rules.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.registry import Check

MISSING, CRASHED, FAILED = "PD-PADDLE-001", "PD-PADDLE-002", "PD-PADDLE-003"


def check(facts: Facts) -> list[Finding]:
    paddle = facts.paddle
    label = f"{paddle.distribution} {paddle.version}" if paddle.version else "Paddle"
    if paddle.status == "not_probed":
        reason = paddle.reason or "the Paddle probe did not run"
        return [skipped(rule, reason) for rule in (MISSING, CRASHED, FAILED)]
    if paddle.status == "missing":
        return [
            Finding(MISSING, Status.FAIL, f"no Paddle distribution is installed for {paddle.python}",
                    observed="import paddle: ModuleNotFoundError", expected="paddlepaddle or paddlepaddle-gpu installed",
                    evidence={"python": paddle.python}),
            skipped(CRASHED, "Paddle is not installed"),
            skipped(FAILED, "Paddle is not installed"),
        ]
    installed = passed(MISSING, f"{label} is installed for {paddle.python}")
    if paddle.status == "crashed":
        hint = " (illegal instruction: the wheel uses instructions this CPU lacks)" if paddle.signal == "SIGILL" else ""
        return [
            installed,
            Finding(CRASHED, Status.FAIL, f"importing {label} killed the process with {paddle.signal}{hint}",
                    observed=f"killed by {paddle.signal} during 'import paddle'", expected="the import completes",
                    evidence={"signal": paddle.signal, "returncode": paddle.returncode, "stderr_tail": paddle.stderr_tail}),
            skipped(FAILED, "the import crashed; see PD-PADDLE-002"),
        ]
    survived = passed(CRASHED, f"'import paddle' completed in {paddle.import_seconds} s" if paddle.import_seconds else "'import paddle' completed")
    if paddle.status in ("failed", "timeout"):
        return [
            installed,
            survived if paddle.status == "failed" else skipped(CRASHED, "the import did not finish"),
            Finding(FAILED, Status.FAIL, paddle.reason or f"importing {label} failed",
                    observed=paddle.reason, expected="the import completes",
                    evidence={"status": paddle.status, "stderr_tail": paddle.stderr_tail}),
        ]
    return [installed, survived, passed(FAILED, f"{label} imports cleanly")]


CHECK = Check(name="paddle_install", rules=(MISSING, CRASHED, FAILED), run=check)
