"""Where a command's output goes: a file (checked writable before any work, written atomically) or
stdout (a stdout that cannot take it is an OutputError). ``check``, ``facts`` and ``fleet`` write
through it alike; the baseline, the cache stamp and the collected reports write their files with
:func:`write_text_atomically` too."""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


# Devices and pipes check_writable opened before the work, by path, for write_text_atomically to write.
_OPENED: dict[str, int] = {}


class OutputError(ValueError):
    """A report or facts file that cannot be written; the message names the file and why."""


def check_writable(path: str | Path, error: type[ValueError], kind: str) -> None:
    """``error`` unless :func:`write_text_atomically` can write ``path``: checked before any work.

    Missing folders are created when written, so the nearest folder that exists must be writable.
    """
    if not str(path).strip():
        raise error(f"the file to write the {kind} to is an empty name; give a path (or, where it may, leave the option out for stdout)")
    target = Path(path)
    try:
        if target.is_dir():
            raise error(f"{path}: is a folder; expected the file to write the {kind} to")
        if target.exists() and not target.is_file():  # a device or pipe (/dev/stdout) is written in place
            fd = _open_in_place(target)
            try:
                os.write(fd, b"")  # what the device answers to a write, without writing: /dev/full refuses it
            except OSError:
                os.close(fd)
                raise
            with contextlib.suppress(KeyError, OSError):
                os.close(_OPENED.pop(str(path)))
            _OPENED[str(path)] = fd  # held until written: closing it would end a FIFO's reader
            return
        folder = target.absolute().parent
        while not folder.exists():
            folder = folder.parent
    except OSError as exc:
        raise error(_cannot_write(path, kind, exc)) from None
    if not folder.is_dir():
        raise error(f"{path}: cannot write the {kind}: {folder} is a file, not a folder")
    import tempfile

    try:  # a real file, at once removed: permissions, a read-only mount and /proc all answer truly
        tempfile.TemporaryFile(dir=folder).close()
    except OSError as exc:
        raise error(f"{path}: cannot write the {kind}: the folder {folder} is not writable ({exc.strerror or exc})") from None


def write_text_atomically(path: str | Path, text: str, error: type[ValueError], kind: str) -> None:
    """Written to a temporary file beside ``path`` and renamed, so a reader never sees half a file;
    missing folders are created. A device or pipe (``/dev/stdout``) is written in place.
    ``error`` names the file and why it could not be written."""
    target = Path(path)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        if target.exists() and not target.is_file() and not target.is_dir():
            fd = _OPENED.pop(str(path), None)
            with open(_open_in_place(target) if fd is None else fd, "w", encoding="utf-8") as handle:
                handle.write(text)
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    except OSError as exc:
        with contextlib.suppress(OSError):
            partial.unlink()
        raise error(_cannot_write(path, kind, exc)) from None


def _open_in_place(target: Path) -> int:
    """A device or pipe opened to write without waiting (a FIFO that nothing reads is an error, not
    a wait for ever); the writes then wait for a slow reader, as a pipe's writer does."""
    fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    os.set_blocking(fd, True)
    return fd


def _cannot_write(path: str | Path, kind: str, exc: OSError) -> str:
    if exc.errno == errno.ENXIO and Path(path).is_fifo():
        return f"{path}: cannot write the {kind}: it is a FIFO (named pipe) that nothing reads; expected a file, or a pipe being read"
    return f"{path}: cannot write the {kind} ({exc.strerror or exc})"


def check_output(path: str | None, kind: str) -> None:
    """Before any work: the file to write the ``kind`` to can be written (its missing folders are created)."""
    if path is not None:
        check_writable(path, OutputError, kind)


def write_rendered(render: Callable[[Console], None], path: str | None, kind: str) -> None:
    """Text for people, drawn by ``render`` on a rich Console: into ``path`` (atomically, 100
    columns, no colour) or onto the terminal."""
    if path:
        from rich.console import Console

        from .terminal import strip_trailing_spaces

        buffer = io.StringIO()
        render(Console(file=buffer, width=100, color_system=None))
        write_output(strip_trailing_spaces(buffer.getvalue()), path, kind)
    else:
        from .terminal import terminal_console

        write_stdout(lambda: render(terminal_console()), kind)


def write_output(text: str, path: str | None, kind: str) -> None:
    """``text`` into ``path`` (atomically), or onto stdout as UTF-8 whatever the locale (machine formats)."""
    if path:
        write_text_atomically(path, text, OutputError, kind)
    else:
        write_stdout(lambda: _write_bytes(text.encode("utf-8")), kind)


def _write_bytes(data: bytes) -> None:
    """``data`` onto stdout's bytes, after whatever its text layer holds."""
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def write_stdout(write: Callable[[], None], kind: str) -> None:
    """Run ``write``; a stdout that cannot take it (a full disk, a closed pipe) is an OutputError."""
    try:
        write()
        sys.stdout.flush()
    except OSError as exc:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # what is still buffered goes nowhere at exit
        raise OutputError(f"stdout: cannot write the {kind} ({exc.strerror or exc})") from None
