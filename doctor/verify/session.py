"""The parent's side of a predictor worker: one child process, JSON lines, a deadline per request.

A worker that dies (SIGSEGV, SIGILL, abort) raises ``WorkerDied`` with the signal named; one that
overruns its deadline is killed and raises ``WorkerTimedOut``. The process group is always killed
on close (through ``children``, which also ends it on SIGTERM or SIGINT), so no orphan process is
left behind.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import time
from pathlib import Path
from typing import Any

from .. import children
from ..paddle_home import paddle_child_env
from ..redact import redacted_tail

CHILD_SCRIPT = Path(__file__).with_name("worker_child.py")
STDERR_TAIL = 600


class WorkerDied(RuntimeError):
    """The worker process ended or hung; ``signal_name`` is set when a signal killed it."""

    def __init__(self, message: str, signal_name: str | None = None):
        super().__init__(message)
        self.signal_name = signal_name


class WorkerTimedOut(WorkerDied):
    """The worker did not answer within the request's deadline and was killed."""

    def __init__(self, message: str, timeout: float):
        super().__init__(message)
        self.timeout = timeout


class WorkerError(RuntimeError):
    """The worker is alive but the request failed (e.g. Paddle raised); the message says why."""


class WorkerSession:
    def __init__(self, python: str, start_timeout: float = 120.0, env: dict[str, str] | None = None):
        self.proc = children.spawn(
            [python, "-c", CHILD_SCRIPT.read_text(encoding="utf-8")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            env={**paddle_child_env(), "GLOG_minloglevel": "2", **(env or {})},
        )
        self._pending = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.proc.stdout, selectors.EVENT_READ)
        hello = self._read(start_timeout, "starting the predictor worker")
        self.paddle_version = hello.get("paddle")

    def request(self, timeout: float, **request: Any) -> dict[str, Any]:
        """Send one request; returns the reply or raises WorkerError / WorkerDied."""
        self.send(**request)
        return self.receive(timeout, request.get("cmd"))

    def send(self, **request: Any) -> None:
        """Send a request without waiting, so that several workers can work at once; see ``receive``."""
        try:
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._death(f"'{request.get('cmd')}'") from None

    def receive(self, timeout: float, command: str | None) -> dict[str, Any]:
        """The reply to the request sent last, or WorkerError / WorkerDied."""
        reply = self._read(timeout, f"'{command}'")
        if not reply.get("ok"):
            raise WorkerError(reply.get("error", "unknown error"))
        return reply

    def _read(self, timeout: float, what: str) -> dict[str, Any]:
        """The next reply line. Bytes are read from the pipe directly and split here: a buffered
        reader could hold several replies that select() no longer sees."""
        deadline = time.monotonic() + timeout
        while True:
            line, newline, rest = self._pending.partition(b"\n")
            if newline:
                self._pending = rest
                try:
                    return json.loads(line)
                except json.JSONDecodeError:
                    continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                self.close()
                raise WorkerTimedOut(f"the predictor worker did not answer {what} within {timeout:.3g} s and was stopped", timeout)
            chunk = os.read(self.proc.stdout.fileno(), 1 << 16)
            if not chunk:
                raise self._death(what)
            self._pending += chunk

    def _death(self, what: str) -> WorkerDied:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.close()
            code = self.proc.returncode
        stderr = redacted_tail(self.proc.stderr.read() or "", STDERR_TAIL).strip() if self.proc.stderr else ""
        self.close()
        if code is not None and code < 0:
            name = children.signal_name(-code)
            return WorkerDied(f"the predictor worker was killed by {name} during {what}", name)
        last = stderr.splitlines()[-1] if stderr else "no error output"
        return WorkerDied(f"the predictor worker exited with code {code} during {what}: {last}")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(json.dumps({"cmd": "exit"}) + "\n")
                self.proc.stdin.flush()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                pass
        children.end(self.proc)
        self._selector.close() if self._selector.get_map() is not None else None
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> WorkerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

