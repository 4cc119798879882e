"""A writable home for the children that import Paddle.

Importing Paddle creates ``~/.cache/paddle/dataset``, or, where HOME is not writable (a non-root
service user, a read-only image), ``.cache/paddle`` in the temporary folder, which nobody removes.
The doctor gives its Paddle children a home of their own then, in a temporary folder it removes
when it exits: one for its own children, one owned by the service's user for the children that run
as that user.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import tempfile
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .interpreter import RunAs

_made: dict[tuple[int, int] | None, str] = {}
_lock = threading.Lock()  # the Paddle probe runs in a thread beside the NVML one


def paddle_child_env(run_as: RunAs | None = None) -> dict[str, str]:
    """The environment of a child that imports Paddle (this process's, or that of the user it runs
    as), with HOME writable for the user it runs as."""
    env = dict(os.environ if run_as is None else run_as.environ)
    home = env.get("HOME") or (os.path.expanduser("~") if run_as is None else "")
    if not _writable(home, run_as):  # Paddle's own test (paddle/dataset/common.py)
        env["HOME"] = _temporary_home(run_as)
    return env


def folder_for(run_as: RunAs | None, prefix: str) -> str:
    """A new temporary folder, owned by the user ``run_as`` names where it names one; the caller removes it."""
    folder = tempfile.mkdtemp(prefix=prefix)
    if run_as is not None:
        os.chown(folder, run_as.uid, run_as.gid)
    return folder


def _writable(home: str, run_as: RunAs | None) -> bool:
    """Whether the user the child runs as may write into ``home`` (its mode bits: that user has no other groups)."""
    if run_as is None:
        return bool(home) and os.access(home, os.W_OK)
    try:
        info = os.stat(home)
    except (OSError, ValueError):
        return False
    if not stat.S_ISDIR(info.st_mode):
        return False
    if run_as.uid == 0:
        return True
    bits = stat.S_IWUSR if info.st_uid == run_as.uid else stat.S_IWGRP if info.st_gid == run_as.gid else stat.S_IWOTH
    return bool(info.st_mode & bits)


def _temporary_home(run_as: RunAs | None) -> str:
    key = None if run_as is None else (run_as.uid, run_as.gid)
    with _lock:
        if key not in _made:
            _made[key] = folder_for(run_as, "paddle-doctor-home-")
            atexit.register(shutil.rmtree, _made[key], True)
        return _made[key]
