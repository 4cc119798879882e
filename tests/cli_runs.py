"""The doctor's command line as the tests run it.

``run_doctor`` calls the CLI's entry function, as ``python -m paddle_doctor`` does, in a forked copy
of the test session: the doctor is imported once, not by every run. ``run_doctor_process`` starts a
new interpreter, for what happens before the entry function runs (locale, encoding, ``-m``, imports).
"""

from __future__ import annotations

import atexit
import io
import locale
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path

import paddle_doctor
from paddle_doctor.entry import main as entry_main

ENTRY_SCRIPT = str(Path(paddle_doctor.__file__).with_name("__main__.py"))

# Variables the interpreter itself reads as it starts: a doctor given one of them needs a new interpreter.
INTERPRETER_START_VARIABLES = re.compile(r"^(LANG|LC_[A-Z_]+|PYTHON(?!PATH$)[A-Z0-9_]+)$")


def run_doctor(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
               unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """The CLI's entry function, as ``python -m paddle_doctor`` calls it, in a forked copy of this process.

    The copy starts with the doctor already imported, so a run costs no interpreter start-up; it gets
    the environment, arguments and standard streams a new process would (``unset`` drops variables of
    the test's own environment) and its own exit code. What happens before the entry function runs
    (the interpreter's locale and encoding, ``-m``) is tested through ``run_doctor_process``.
    """
    if any(INTERPRETER_START_VARIABLES.match(name) for name in env or {}):
        return run_doctor_process(*args, env=env, timeout=timeout, unset=unset)
    argv = [sys.executable, "-m", "paddle_doctor", *args]
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        pid = os.fork()
        if pid == 0:
            _run_entry_in_child(list(args), env or {}, unset, stdout.fileno(), stderr.fileno())
        returncode = _wait(pid, timeout, argv)
        return subprocess.CompletedProcess(argv, returncode, _read(stdout), _read(stderr))


def _run_entry_in_child(args: list[str], env: dict[str, str], unset: tuple[str, ...], stdout: int, stderr: int) -> None:
    """Never returns: exits with the entry function's exit code, as the interpreter would."""
    code = 1
    try:
        for name in unset:
            os.environ.pop(name, None)
        os.environ.update(env)
        sys.path[:0] = [entry for entry in env.get("PYTHONPATH", "").split(os.pathsep) if entry]
        tempfile.tempdir = None  # TMPDIR is read again
        atexit._clear()  # this process's own exit handlers are the test session's
        os.dup2(stdout, 1)
        os.dup2(stderr, 2)
        encoding = locale.getpreferredencoding(False)
        sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding=encoding)
        sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding=encoding,
                                      errors="backslashreplace", line_buffering=True)
        sys.stdin = open(os.devnull)
        sys.argv = [ENTRY_SCRIPT, *args]
        try:
            entry_main(args)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else _said(exc.code))
        except BaseException:
            traceback.print_exc()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def _said(message: object) -> int:
    """``sys.exit("text")``: the interpreter prints the text and exits 1."""
    print(message, file=sys.stderr)
    return 1


def _wait(pid: int, timeout: float, argv: list[str]) -> int:
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            raise subprocess.TimeoutExpired(argv, timeout)
        time.sleep(0.005)


def _read(stream) -> str:
    stream.seek(0)
    return stream.read().decode(locale.getpreferredencoding(False), errors="replace")


def import_what_a_run_imports(root: Path) -> None:
    """Reports on the recorded tree ``root``, here in the test session, so that every forked run finds the doctor imported."""
    streams = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = (io.TextIOWrapper(io.BytesIO(), encoding="utf-8") for _ in streams)
    try:
        for output in ("--json", "-v"):
            try:
                entry_main([output, "--no-paddle", "--no-gpu", "--root", str(root)])
            except SystemExit:
                pass
    finally:
        sys.stdout, sys.stderr = streams


def run_doctor_process(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
                       unset: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """The installed CLI in a new interpreter, exactly as a user runs it; ``unset`` drops variables of the test's own environment."""
    full_env = {name: value for name, value in os.environ.items() if name not in unset}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "paddle_doctor", *args],
        capture_output=True, text=True, env=full_env, timeout=timeout,
    )
