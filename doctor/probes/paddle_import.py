"""The Paddle probe: imports Paddle in a child process with a timeout.

The import runs in a child because it can kill the process (SIGILL from an AVX wheel on a CPU
without AVX), costs about a second and 300 MB, and must not poison the doctor.
"""

from __future__ import annotations

from pathlib import Path

from ..base.interpreter import Interpreter
from ..base.vocabulary import PaddleStatus
from ..facts import PaddleFacts
from .common import last_line, tagged_lines
from .context import ProbeContext

CHILD_SCRIPT = Path(__file__).with_name("paddle_child.py")
STDERR_TAIL_CHARS = 800
METADATA_FILE = ".dist-info/METADATA"


def probe_paddle(ctx: ProbeContext, interpreter: Interpreter, timeout: float) -> PaddleFacts:
    """What ``interpreter`` imports as Paddle, run as the user it runs as."""
    result = ctx.run([interpreter.path, "-c", CHILD_SCRIPT.read_text(encoding="utf-8")], timeout, **interpreter.spawn_options())
    run_as = interpreter.run_as
    facts = PaddleFacts(python=interpreter.path, import_seconds=None, ran_as_uid=run_as.uid if run_as else None,
                        ran_as_gid=run_as.gid if run_as else None)
    payloads = tagged_lines(result.stdout, ("META", "RESULT"))
    meta = payloads.get("META", {})
    facts.distribution = meta.get("distribution")
    facts.version = meta.get("version")
    metadata = meta.get("metadata_file")  # a path the child names: the baseline and the healthcheck read it
    facts.metadata_file = metadata if isinstance(metadata, str) and metadata.endswith(METADATA_FILE) else None
    facts.stderr_tail = result.stderr[-STDERR_TAIL_CHARS:].strip() or None
    facts.returncode = result.returncode
    if result.timed_out:
        facts.status = PaddleStatus.TIMEOUT
        facts.reason = f"importing Paddle did not finish within {timeout:g} s"
        return facts
    if result.signal_name:
        facts.status = PaddleStatus.CRASHED
        facts.signal = result.signal_name
        facts.reason = f"the Python process importing Paddle was killed by {result.signal_name}"
        return facts
    outcome = payloads.get("RESULT")
    if outcome is None:
        facts.status = PaddleStatus.FAILED
        facts.reason = f"importing Paddle failed (exit code {result.returncode}): {last_line(result.stderr)}"
        return facts
    facts.status = outcome.pop("status")
    facts.reason = outcome.pop("reason", None)
    for key, value in outcome.items():
        setattr(facts, key, value)
    if facts.status == "ok":
        facts.stderr_tail = None
    return facts

