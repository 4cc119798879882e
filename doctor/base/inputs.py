"""Reading a file the doctor is given or finds: a regular file only, and never more than a bound.

Every input file goes through :func:`read_bytes`: options (``--facts``, ``--config``, ``--settings``,
``--rules``, a baseline, fleet reports, a model's program), the service's source, and what the
probes read under ``--root``; an ``.npz`` of real inputs, read as a zip archive, through
:func:`open_regular`, which read_bytes opens with. It never blocks and never reads without end: what is not a regular
file (a FIFO, which would wait for a writer forever; a device such as ``/dev/zero``, which never
ends; a socket, a folder) is refused without being opened, and a file larger than the bound for its
kind is refused unread. Files of /proc and cgroupfs say they are empty; they are read up to the bound.
What another user may have planted (a service's record) is read through :func:`read_private`: only
a regular file, no link, that no user but its owner could have written.

A refusal is :class:`Refused`, an OSError whose text is the reason alone (``is a FIFO (named pipe),
not a regular file``), so that code reporting an OSError's ``strerror`` says it as it is. Only the
standard library is imported here: the healthcheck reads through it.
"""

from __future__ import annotations

import errno
import json
import os
import stat
import sys
from typing import Any, BinaryIO

MiB = 1 << 20
# Bounds per kind of file, far above what a real one holds.
DOCUMENT_BYTES = 64 * MiB  # facts, reports, baselines: real ones are under 1 MiB
YAML_BYTES = 4 * MiB  # --config, --settings, --rules: the bundled rules.yaml is 60 KiB
SOURCE_BYTES = 2 * MiB  # one Python file of the service
SYSTEM_BYTES = 16 * MiB  # a file under --root: /proc, /sys, cgroup, a METADATA file, a cache stamp
PROGRAM_BYTES = 1024 * MiB  # a model's program (its weights are not read)
SAMPLE_BYTES = 1024 * MiB  # an .npz of real inputs (--inputs), and the arrays it holds: a batch of images is tens of MiB
MAX_DEPTH = 200  # levels of nesting the doctor's code walks: JSON and YAML documents (real ones have under 20), Python source
CHUNK = 1 << 16

KINDS = (
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


class Refused(OSError):
    """A path the doctor does not read: not a regular file, larger than its bound, or nested too deeply."""

    def __init__(self, path: str | os.PathLike, reason: str):
        super().__init__(errno.EINVAL, reason, os.fspath(path))
        self.reason = reason

    def __str__(self) -> str:
        return self.reason


class NotPrivate(Refused):
    """A file another user could have written: a symbolic link, or a file or folder not its owner's alone."""


def what_it_is(mode: int) -> str:
    """``a FIFO (named pipe)``, ``a character device``, ...: what a path that is not a regular file is."""
    return next((words for test, words in KINDS if test(mode)), "not a file")


def size_words(limit: int) -> str:
    return f"{limit // MiB} MiB" if limit >= MiB else f"{limit} bytes"


def read_bytes(path: str | os.PathLike, limit: int) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` of them; Refused for anything else,
    OSError as ``open`` raises it (missing, permission denied)."""
    with open_regular(path, limit) as handle:
        return _read_to_bound(handle, path, limit)


def _read_to_bound(handle: BinaryIO, path: str | os.PathLike, limit: int) -> bytes:
    chunks, size = [], 0
    while size <= limit:  # /proc and cgroup files say size 0: read to their end, up to the bound
        chunk = handle.read(min(CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > limit:
        raise Refused(path, f"is larger than {size_words(limit)}, the most the doctor reads of such a file")
    return b"".join(chunks)


def read_private(folder: str | os.PathLike, name: str, owner: int, limit: int) -> bytes:
    """The bytes of the regular file ``name`` in ``folder``, at most ``limit`` of them, if no user but
    ``owner`` (and root) could have put them there: neither the folder nor the file is a symbolic link,
    both belong to ``owner``, and neither is writable by its group or others. Refused saying which is
    not so (NotPrivate: ``is in a folder that belongs to uid 65534, not to uid 1000``); OSError as ``open`` raises it."""
    try:
        folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            if os.path.islink(folder):
                raise NotPrivate(folder, "is in a folder that is a symbolic link") from None
            raise Refused(folder, "is in a folder that is no folder") from None
        raise
    path = os.path.join(folder, name)
    try:
        _private(os.fstat(folder_fd), folder, "is in a folder that", owner)
        mode = os.stat(name, dir_fd=folder_fd, follow_symlinks=False).st_mode
        if not stat.S_ISREG(mode):  # looked at before opening: opening a device can do something
            raise (NotPrivate(path, "is a symbolic link") if stat.S_ISLNK(mode) else Refused(path, f"is {what_it_is(mode)}, not a regular file"))
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC, dir_fd=folder_fd)
    finally:
        os.close(folder_fd)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        status = os.fstat(fd)  # what was opened, which may not be what was looked at
        if not stat.S_ISREG(status.st_mode):
            raise Refused(path, f"is {what_it_is(status.st_mode)}, not a regular file")
        _private(status, path, "", owner)
        return _read_to_bound(handle, path, limit)


def _private(status: os.stat_result, path: str | os.PathLike, where: str, owner: int) -> None:
    """Refused unless what ``status`` describes belongs to ``owner`` and only its owner may write to it;
    the reason starts with ``where`` (``is in a folder that``)."""
    if status.st_uid != owner:
        raise NotPrivate(path, f"{where} belongs to uid {status.st_uid}, not to uid {owner}".lstrip())
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise NotPrivate(path, f"{where} is writable by users other than its owner (mode {stat.S_IMODE(status.st_mode):04o})".lstrip())


def open_regular(path: str | os.PathLike, limit: int) -> BinaryIO:
    """The regular file ``path`` opened for reading (a zip archive reads what it needs of it), if it
    says it holds at most ``limit`` bytes; Refused for anything else, OSError as ``open`` raises it."""
    try:
        mode = os.stat(path).st_mode
    except ValueError:  # a name read from a file (a baseline's METADATA path) may hold what no path can
        raise Refused(path, "is not a path (it holds a NUL character)") from None
    if not stat.S_ISREG(mode):  # looked at before opening: opening a device can do something
        raise Refused(path, f"is {what_it_is(mode)}, not a regular file")
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        status = os.fstat(fd)  # what was opened, which may not be what was looked at
        if not stat.S_ISREG(status.st_mode):
            raise Refused(path, f"is {what_it_is(status.st_mode)}, not a regular file")
        if status.st_size > limit:
            raise Refused(path, f"is larger than {size_words(limit)}, the most the doctor reads of such a file")
        return os.fdopen(fd, "rb", buffering=0)
    except BaseException:
        os.close(fd)
        raise


def read_text(path: str | os.PathLike, limit: int, errors: str = "strict") -> str:
    """:func:`read_bytes` as UTF-8; UnicodeDecodeError for what is not, unless ``errors`` says otherwise."""
    return read_bytes(path, limit).decode("utf-8", errors)


def parse_json(text: str | bytes, source: str | os.PathLike) -> Any:
    """JSON within :func:`within_bounds`; Refused beyond, and for an integer of more digits than Python
    turns into a number; json.JSONDecodeError for what is not JSON."""
    try:
        data = json.loads(text)
    except RecursionError:
        raise too_deep(source) from None
    except json.JSONDecodeError:
        raise
    except ValueError:  # past sys.get_int_max_str_digits(): int() refuses the digits
        raise Refused(source, f"holds an integer of more than {sys.get_int_max_str_digits()} digits, "
                              "more than the doctor reads") from None
    return within_bounds(data, source, len(text))


def within_bounds(data: Any, source: str | os.PathLike, size: int) -> Any:
    """``data``, parsed from ``size`` characters, if the doctor's code can walk it: Refused when it is
    nested more than MAX_DEPTH levels, holds more values than its text writes out (YAML aliases
    that repeat a part of it again and again), or text that is not Unicode (a lone surrogate, which
    JSON's ``\\ud800`` writes and no output can encode)."""
    pending, values = [(data, 1)], 0
    while pending:
        value, depth = pending.pop()
        values += 1
        if values > size + 1:
            raise Refused(source, "holds more values than its text writes out (aliases repeating a part of it), "
                                  "more than the doctor reads")
        if isinstance(value, str):
            _unicode(value, source)
        elif isinstance(value, (dict, list)):
            if depth > MAX_DEPTH:
                raise too_deep(source)
            if isinstance(value, dict):
                pending.extend((key, depth + 1) for key in value if isinstance(key, str))
            pending.extend((item, depth + 1) for item in (value.values() if isinstance(value, dict) else value))
    return data


def _unicode(text: str, source: str | os.PathLike) -> None:
    """Refused when ``text`` holds a lone surrogate (U+D800 to U+DFFF): no UTF-8 output can write it."""
    if text.isascii():
        return
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise Refused(source, f"holds text that is no Unicode (a lone surrogate, \\u{ord(text[exc.start]):04x})") from None


def too_deep(source: str | os.PathLike) -> Refused:
    return Refused(source, f"is nested more than {MAX_DEPTH} levels deep, the most the doctor reads")
