"""Whether anything opened a folder (listed it) while a block ran: the kernel's own record (inotify)."""

from __future__ import annotations

import contextlib
import ctypes
import os

IN_OPEN = 0x20
_libc = ctypes.CDLL(None, use_errno=True)


@contextlib.contextmanager
def folder_openings(folder):
    """Yields a list that holds, once the block ends, one entry per time ``folder`` was opened in it."""
    descriptor = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if descriptor < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    openings: list[bytes] = []
    try:
        if _libc.inotify_add_watch(descriptor, os.fsencode(folder), IN_OPEN) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
        yield openings
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(descriptor, 65536):
                openings.append(chunk)
    finally:
        os.close(descriptor)
