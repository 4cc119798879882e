"""A writable home for the children that import Paddle.

Importing Paddle creates ``~/.cache/paddle/dataset``, or, where HOME is not writable (a non-root
service user, a read-only image), ``.cache/paddle`` in the temporary folder, which nobody removes.
The doctor gives its Paddle children a home of their own then, in a temporary folder it removes
when it exits.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading

_made: list[str] = []
_lock = threading.Lock()  # the Paddle probe runs in a thread beside the NVML one


def paddle_child_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) for a child that imports Paddle, with HOME writable."""
    env = dict(os.environ if environ is None else environ)
    home = env.get("HOME") or os.path.expanduser("~")
    if not os.access(home, os.W_OK):  # Paddle's own test (paddle/dataset/common.py)
        env["HOME"] = _temporary_home()
    return env


def _temporary_home() -> str:
    with _lock:
        if not _made:
            _made.append(tempfile.mkdtemp(prefix="paddle-doctor-home-"))
            atexit.register(shutil.rmtree, _made[0], True)
        return _made[0]
