"""A doctor started as a user starts it (a new interpreter, ``python -m paddle_doctor``), whose stderr
is read as it comes, so that a test can wait for the doctor to say it has reached a phase (``-v``
announces each) before it sends a signal; and the process tree below it, to prove nothing is left."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

LIFETIME_S = 300.0  # no doctor a test starts outlives this


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (workers run in sessions of their own, but stay its children)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pids: set[int]) -> set[int]:
    still = set()
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as handle:
                if handle.read().rsplit(")", 1)[1].split()[0] != "Z":
                    still.add(pid)
        except OSError:
            pass
    return still


class RunningDoctor:
    """``paddle-doctor ARGS`` running; ``wait_for`` a line on stderr, then ``stop`` it with a signal."""

    def __init__(self, *args: str, env: dict[str, str] | None = None):
        self.proc = subprocess.Popen([sys.executable, "-m", "paddle_doctor", *args], stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, env={**os.environ, **(env or {})})
        self.stderr_lines: list[str] = []
        self.stdout = ""
        self.tree_at_signal: set[int] = set()
        self._said = threading.Condition()
        self._readers = [threading.Thread(target=self._read_stderr, daemon=True),
                         threading.Thread(target=self._read_stdout, daemon=True)]
        for reader in self._readers:
            reader.start()
        self._killer = threading.Timer(LIFETIME_S, self.proc.kill)
        self._killer.daemon = True
        self._killer.start()

    def _read_stderr(self) -> None:
        for line in self.proc.stderr:
            with self._said:
                self.stderr_lines.append(line.rstrip("\n"))
                self._said.notify_all()
        with self._said:
            self._said.notify_all()

    def _read_stdout(self) -> None:
        self.stdout = self.proc.stdout.read()

    def wait_for(self, text: str, timeout: float = 120.0) -> None:
        """Until a line on stderr holds ``text``; fails if the doctor ends or ``timeout`` passes first."""
        deadline = time.monotonic() + timeout
        with self._said:
            while not any(text in line for line in self.stderr_lines):
                left = deadline - time.monotonic()
                if self.proc.poll() is not None and not self._readers[0].is_alive():
                    raise AssertionError(f"the doctor ended before saying {text!r}: {self.stderr_lines}")
                if left <= 0:
                    raise AssertionError(f"the doctor did not say {text!r} within {timeout:g} s: {self.stderr_lines}")
                self._said.wait(min(left, 0.5))

    def stop(self, number: int, timeout: float = 30.0) -> tuple[int, float, set[int]]:
        """Send ``number``; the exit code, the seconds the doctor took to end, and the processes of its
        tree (as they were at the signal) still alive after it ended."""
        tree = self.tree_at_signal = descendants(self.proc.pid)
        sent = time.monotonic()
        self.proc.send_signal(number)
        code = self.proc.wait(timeout)
        took = time.monotonic() - sent
        for reader in self._readers:
            reader.join(10)
        return code, took, alive(tree)

    @property
    def last_line(self) -> str:
        return self.stderr_lines[-1] if self.stderr_lines else ""

    def __enter__(self) -> RunningDoctor:
        return self

    def __exit__(self, *exc: object) -> None:
        self._killer.cancel()
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        for reader in self._readers:
            reader.join(10)
