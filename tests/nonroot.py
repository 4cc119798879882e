"""Running the doctor as an unprivileged user, where the tests run as root: real permission checks."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

NOBODY = 65534


def can_drop_root() -> bool:
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


needs_root = pytest.mark.skipif(not can_drop_root(), reason="needs root and setpriv to run the doctor as another user")


def run_doctor_as_nobody(*args: str, env: dict[str, str] | None = None, cwd: str | None = None,
                         timeout: float = 120) -> subprocess.CompletedProcess:
    """The CLI as uid/gid 65534 with no supplementary groups; ``env`` is the whole environment."""
    argv = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-m", "paddle_doctor", *args]
    return subprocess.run(argv, capture_output=True, text=True, env=env if env is not None else dict(os.environ),
                          cwd=cwd, timeout=timeout)


@pytest.fixture
def shared_tmp():
    """A folder every user can enter (pytest's own is root's alone), removed afterwards."""
    import tempfile
    from pathlib import Path

    folder = Path(tempfile.mkdtemp(prefix="paddle-doctor-test-"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)
