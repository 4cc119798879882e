"""The Paddle probe: imports Paddle in a child process with a timeout.

The import runs in a child because it can kill the process (SIGILL from an AVX wheel on a CPU
without AVX), costs about a second and 300 MB, and must not poison the doctor.
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.vocabulary import PaddleStatus
from ..facts import PaddleFacts
from .common import last_line, tagged_lines
from .context import ProbeContext

if TYPE_CHECKING:
    from ..base.interpreter import Interpreter

CHILD_SCRIPT = Path(__file__).with_name("paddle_child.py")
STDERR_TAIL_CHARS = 800
METADATA_FILE = ".dist-info/METADATA"
PADDLE_FIELDS = {field.name for field in fields(PaddleFacts)}


def probe_paddle(ctx: ProbeContext, interpreter: Interpreter, timeout: float) -> PaddleFacts:
    """What ``interpreter`` imports as Paddle, run as the user it runs as."""
    result = ctx.run([interpreter.path, "-c", CHILD_SCRIPT.read_text(encoding="utf-8")], timeout, **interpreter.spawn_options())
    run_as = interpreter.run_as
    payloads = tagged_lines(result.stdout, ("META", "RESULT"))
    meta = payloads.get("META", {})
    metadata = meta.get("metadata_file")  # a path the child names: the baseline and the healthcheck read it
    facts = PaddleFacts(python=interpreter.path, import_seconds=None, ran_as_uid=run_as.uid if run_as else None,
                        ran_as_gid=run_as.gid if run_as else None, distribution=meta.get("distribution"), version=meta.get("version"),
                        metadata_file=metadata if isinstance(metadata, str) and metadata.endswith(METADATA_FILE) else None,
                        stderr_tail=result.stderr[-STDERR_TAIL_CHARS:].strip() or None, returncode=result.returncode)
    if result.timed_out:
        return replace(facts, status=PaddleStatus.TIMEOUT, reason=f"importing Paddle did not finish within {timeout:g} s")
    if result.signal_name:
        return replace(facts, status=PaddleStatus.CRASHED, signal=result.signal_name,
                       reason=f"the Python process importing Paddle was killed by {result.signal_name}")
    outcome = payloads.get("RESULT")
    if outcome is None:
        return replace(facts, status=PaddleStatus.FAILED,
                       reason=f"importing Paddle failed (exit code {result.returncode}): {last_line(result.stderr)}")
    said = {key: value for key, value in outcome.items() if key in PADDLE_FIELDS}  # the child's own names: PaddleFacts'
    facts = replace(facts, **{"reason": None, **said, "status": outcome["status"]})
    return replace(facts, stderr_tail=None) if facts.status == "ok" else facts
