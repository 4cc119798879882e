"""The parent's side of a predictor worker: one child process, the requests and replies of
``protocol``, a deadline per request.

A worker that dies (SIGSEGV, SIGILL, abort) raises ``WorkerDied`` with the signal named; one that
overruns its deadline is killed and raises ``WorkerTimedOut``. The process group is always killed
on close (through ``children``, which also ends it on SIGTERM or SIGINT), so no orphan process is
left behind.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from ..base import children
from ..base.interpreter import Interpreter
from ..base.redact import redacted_tail
from .protocol import Exit, Failed, ProtocolError, Request, read_hello, read_reply, request_line

CHILD_SCRIPT = Path(__file__).with_name("worker_child.py")
STDERR_TAIL = 600
# The doctor's modules the worker imports, each after those it imports: the standard library only besides.
WORKER_IMPORTS = ("base.vocabulary", "base.quoting", "facts.knobs", "facts.service_config", "facts.predictor",
                  "verify.protocol")
PACKAGE = __name__.split(".")[0]
# Installs the modules in sys.modules under their own names, in packages that hold nothing else (so
# that no other module of the doctor, or of anything on sys.path, can be imported), then runs the worker.
BOOT = """\
import sys, types
sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]

def install(name, path, text):
    parts = name.split(".")
    for depth in range(1, len(parts)):
        package = ".".join(parts[:depth])
        if package not in sys.modules:
            sys.modules[package] = types.ModuleType(package)
            sys.modules[package].__path__ = []
    module = sys.modules[name] = types.ModuleType(name)
    module.__file__, module.__package__ = path, name.rpartition(".")[0]
    exec(compile(text, path, "exec"), module.__dict__)

for module in {modules!r}:
    install(*module)
__package__ = {package!r}
exec(compile({worker!r}, {worker_path!r}, "exec"))
"""

R = TypeVar("R")


def worker_program(worker: Path = CHILD_SCRIPT) -> str:
    """The text for ``python -c`` that runs ``worker`` (a module of this folder) after the doctor's modules it imports."""
    root = Path(__file__).resolve().parent.parent
    modules = [(f"{PACKAGE}.{name}", str(path), path.read_text(encoding="utf-8"))
               for name in WORKER_IMPORTS for path in [root.joinpath(*name.split(".")).with_suffix(".py")]]
    return BOOT.format(modules=modules, package=f"{PACKAGE}.verify", worker=worker.read_text(encoding="utf-8"),
                       worker_path=str(worker))


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
    """One predictor worker: ``interpreter`` run as the user it runs as, ``env`` over its environment."""

    def __init__(self, interpreter: Interpreter, start_timeout: float = 120.0, env: dict[str, str] | None = None):
        self.interpreter = interpreter
        self.proc = children.spawn(
            [interpreter.path, "-c", worker_program()],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            bufsize=1,
            **interpreter.spawn_options(**{"GLOG_minloglevel": "2", **(env or {})}),
        )
        self.stdin, self.stdout, self.stderr = _stream(self.proc.stdin), _stream(self.proc.stdout), _stream(self.proc.stderr)
        self._pending = b""
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.stdout, selectors.EVENT_READ)
        hello = self._read(start_timeout, "starting the predictor worker", read_hello)
        self.paddle_version = hello.paddle

    def request(self, timeout: float, request: Request[R]) -> R:
        """Send one request; returns the reply or raises WorkerError / WorkerDied."""
        self.send(request)
        return self.receive(timeout, request)

    def send(self, request: Request[Any]) -> None:
        """Send a request without waiting, so that several workers can work at once; see ``receive``."""
        try:
            self.stdin.write(request_line(request))
            self.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._death(f"'{request.command}'") from None

    def receive(self, timeout: float, request: Request[R]) -> R:
        """The reply to ``request``, sent last, or WorkerError / WorkerDied."""
        reply = self._read(timeout, f"'{request.command}'", lambda line: read_reply(request, line))
        if isinstance(reply, Failed):
            raise WorkerError(reply.error)
        return reply

    def _read(self, timeout: float, what: str, parse: Callable[[bytes], R]) -> R:
        """The next line that ``parse`` reads. Bytes are read from the pipe directly and split here: a
        buffered reader could hold several replies that select() no longer sees."""
        deadline = time.monotonic() + timeout
        while True:
            line, newline, rest = self._pending.partition(b"\n")
            if newline:
                self._pending = rest
                try:
                    return parse(line)
                except ProtocolError:
                    continue
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not self._selector.select(remaining):
                self.close()
                raise WorkerTimedOut(f"the predictor worker did not answer {what} within {timeout:.3g} s and was stopped", timeout)
            chunk = os.read(self.stdout.fileno(), 1 << 16)
            if not chunk:
                raise self._death(what)
            self._pending += chunk

    def _death(self, what: str) -> WorkerDied:
        try:
            code = self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.close()
            code = self.proc.returncode
        stderr = redacted_tail(self.stderr.read() or "", STDERR_TAIL).strip()
        self.close()
        if code is not None and code < 0:
            name = children.signal_name(-code)
            return WorkerDied(f"the predictor worker was killed by {name} during {what}", name)
        last = stderr.splitlines()[-1] if stderr else "no error output"
        return WorkerDied(f"the predictor worker exited with code {code} during {what}: {last}")

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.stdin.write(request_line(Exit()))
                self.stdin.flush()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                pass
        children.end(self.proc)
        self._selector.close() if self._selector.get_map() is not None else None
        for stream in (self.stdin, self.stdout, self.stderr):
            try:
                stream.close()
            except (OSError, ValueError):
                pass

    def __enter__(self) -> WorkerSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stream(stream: IO[Any] | None) -> IO[Any]:
    if stream is None:
        raise ValueError("the predictor worker was started without a pipe")
    return stream

