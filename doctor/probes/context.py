"""Where probes meet the machine.

Every path a probe reads resolves under one root (``/`` for the live system, a recorded fixture
tree in tests, a mounted container filesystem for offline inspection), and every subprocess runs
through :meth:`ProbeContext.run`, which always has a timeout and kills the whole process group
when it expires (through ``children``, which also ends it on SIGTERM or SIGINT).
"""

from __future__ import annotations

import errno
import os
import posixpath
import stat
import time
from pathlib import Path
from typing import Any

from ..base.deferred import deferred_dataclass
from ..base.inputs import SYSTEM_BYTES, read_text, what_it_is
from ..base.redact import redacted_tail

MAX_STDERR_CHARS = 64 * 1024  # of a child's error output, the end is kept: its last lines say what failed
MAX_LINKS = 40  # as the kernel's path walk allows


@deferred_dataclass(frozen=True)
class RunResult:
    """A finished (or killed) child process: exit code, output, time taken, and whether it timed out."""

    argv: tuple[str, ...]
    returncode: int | None
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool

    @property
    def signal_name(self) -> str | None:
        """Name of the signal that killed the child (``SIGILL``), or None if it exited."""
        if self.returncode is None or self.returncode >= 0:
            return None
        from ..base.children import signal_name

        return signal_name(-self.returncode)


class RootError(ValueError):
    """--root names no folder; the message says what it names and what was expected."""


def checked_root(root: str | os.PathLike) -> Path:
    """``root`` if it is a folder; RootError, before anything is read under it, if it is not."""
    try:
        mode = os.stat(root).st_mode
        reason = None if stat.S_ISDIR(mode) else "is a file" if stat.S_ISREG(mode) else f"is {what_it_is(mode)}"
    except (FileNotFoundError, NotADirectoryError):
        reason = "no such folder"
    except (OSError, ValueError) as exc:  # a loop, no permission, a NUL character
        reason = f"cannot be looked at: {getattr(exc, 'strerror', None) or exc}"
    if reason is not None:
        raise RootError(f"--root {os.fspath(root)}: {reason}; expected a folder "
                        "(a container's file system mounted here, or / for this machine)")
    return Path(root)


class ProbeContext:
    def __init__(self, root: str | os.PathLike = "/"):
        self.root = checked_root(root)
        self.is_live = os.path.realpath(self.root) == "/"  # a root that loops is not the live system, and not an error

    def path(self, path: str) -> Path:
        """``path`` (absolute, as seen inside the container) resolved under the root."""
        return self.root / str(path).lstrip("/")

    def resolve(self, path: str) -> str:
        """``path`` with every symbolic link followed as the container sees it: an absolute link
        target is read under the root, not on the machine the doctor runs on. OSError on a loop."""
        parts = [part for part in path.split("/") if part][::-1]
        resolved, links = "/", 0
        while parts:
            part = parts.pop()
            if part in (".", ".."):
                resolved = posixpath.dirname(resolved) if part == ".." else resolved
                continue
            candidate = posixpath.join(resolved, part)
            try:
                target = os.readlink(self.path(candidate))
            except OSError:
                resolved = candidate
                continue
            links += 1
            if links > MAX_LINKS:
                raise OSError(errno.ELOOP, f"{path}: too many levels of symbolic links")
            parts.extend(part for part in reversed(target.split("/")) if part)
            resolved = "/" if target.startswith("/") else resolved
        return resolved

    def contained(self, path: str) -> Path:
        """``path`` under the root with its links followed as the container sees them, so that no link leads
        out of the root; on a loop, the path as given (opening it then fails)."""
        try:
            return self.path(self.resolve(path))
        except OSError:
            return self.path(path)

    def exists(self, path: str) -> bool:
        """Whether ``path`` names something, links followed as the container sees them."""
        try:
            return os.path.lexists(self.path(self.resolve(path)))
        except OSError:
            return False

    def read_text(self, path: str, errors: str = "strict") -> str:
        """A regular file's text, within the bound for system files; raises OSError (missing,
        unreadable; ``inputs.Refused`` for a FIFO, a device or a file too large) or UnicodeDecodeError."""
        return read_text(self.path(path), SYSTEM_BYTES, errors)

    def listdir(self, path: str) -> list[str]:
        return sorted(os.listdir(self.path(path)))

    def run(self, argv: list[str], timeout: float, stdin_text: str | None = None, **spawn_options: Any) -> RunResult:
        """Run a command with a hard timeout; never raises for the child's failures. ``spawn_options``
        (its environment, the user it runs as) go to ``children.spawn``."""
        import subprocess  # here: the healthcheck never runs one, and the import costs its start-up

        from ..base import children

        start = time.perf_counter()
        try:
            proc = children.spawn(
                argv,
                stdin=subprocess.PIPE if stdin_text is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                **spawn_options,
            )
        except OSError as exc:
            return RunResult(tuple(argv), 127, "", str(exc), time.perf_counter() - start, False)
        try:
            stdout, stderr = proc.communicate(stdin_text, timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            children.end(proc)
            stdout, stderr = proc.communicate()
            timed_out = True
        except BaseException:
            children.end(proc)
            raise
        children.end(proc)
        return RunResult(
            tuple(argv),
            None if timed_out else proc.returncode,
            stdout,
            redacted_tail(stderr, MAX_STDERR_CHARS),  # recorded as the reason and evidence of a failure
            time.perf_counter() - start,
            timed_out,
        )

