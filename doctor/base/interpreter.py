"""The Python whose Paddle the doctor probes and measures, and the user its children run as.

The service's own interpreter runs whatever that user's environment holds (a ``.pth``, a
``sitecustomize``, a ``paddle`` package) as whoever starts it: a root doctor starts it as the
service's user (its uid and gid, no supplementary groups, its environment as /proc/PID/environ
gave it), and a doctor that cannot become that user does not start it. An interpreter the user
names (``--python``), the doctor's own, and one the service runs as the doctor's user run as the
doctor, with its environment.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class RunAs:
    """Another user a child runs as: its uid and gid, no supplementary groups, and its whole
    environment, unredacted (it goes to the child only, never to any output)."""

    uid: int
    gid: int
    environ: dict[str, str] = field(repr=False)


@dataclass(frozen=True)
class Interpreter:
    """A Python the doctor starts children of, and as whom: the doctor (``run_as`` None) or the service's user."""

    path: str
    run_as: RunAs | None = None

    def spawn_options(self, **variables: str) -> dict[str, Any]:
        """How a child of this interpreter that imports Paddle is started (``children.spawn``): as its
        user, in its environment with HOME writable for that user, ``variables`` over it."""
        from .paddle_home import paddle_child_env  # here: its shutil and tempfile cost the healthcheck

        options: dict[str, Any] = {"env": {**paddle_child_env(self.run_as), **variables}}
        if self.run_as is not None:
            options.update(user=self.run_as.uid, group=self.run_as.gid, extra_groups=[])
        return options

    def scratch_folder(self, prefix: str) -> str:
        """A new temporary folder that this interpreter's children can write into; the caller removes it."""
        from .paddle_home import folder_for

        return folder_for(self.run_as, prefix)
