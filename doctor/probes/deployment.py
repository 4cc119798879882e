"""The service's deployment, from the process table under the probe root: a master and its workers.

A preforking server (gunicorn, uvicorn ``--workers``, hypercorn, celery prefork), a ``multiprocessing``
pool (fork or spawn) or a plain ``os.fork`` leaves workers that share a parent and a program: the same
executable and command line (a spawned child's command line is ``multiprocessing``'s own, the same for
every child). Those processes that map Paddle, grouped so, are the workers of one deployment; their
parent is its master where it runs the same program (it may map no Paddle itself: gunicorn's arbiter,
whose workers build their predictors in ``post_fork``), and the other children of that master of the
workers' program are workers too (one still starting). A parent running another program (an init,
a shell, a supervisor) is no master, and processes of different programs under it are unrelated
services. Nothing here is run: each fact is read from /proc/PID, with the file it came from.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass
from functools import cached_property

from ..base.command_line import python_target
from ..base.vocabulary import ProcessRole
from ..facts import DeployedProcess
from .context import ProbeContext

PADDLE_LIBRARY = "libpaddle"
SPAWNED = "--multiprocessing-fork"  # the last argument of every child multiprocessing spawns (spawn, forkserver)
SPAWN_PROGRAM = ("multiprocessing spawn child",)


@dataclass
class Entry:
    """One process of the table, each file read once, when first asked."""

    ctx: ProbeContext
    pid: int
    parent: int
    state: str

    @cached_property
    def argv(self) -> tuple[str, ...]:
        try:
            text = self.ctx.read_text(f"/proc/{self.pid}/cmdline", errors="replace")
        except OSError:
            return ()
        return tuple(text.rstrip("\0").split("\0")) if text.strip("\0") else ()

    @cached_property
    def exe(self) -> str | None:
        try:
            return os.readlink(self.ctx.path(f"/proc/{self.pid}/exe"))
        except OSError:  # another user's process, without root: the command line stands for it
            return None

    @cached_property
    def paddle(self) -> bool | None:
        """Whether it maps Paddle's native library; None where its maps cannot be read."""
        try:
            return f"/{PADDLE_LIBRARY}" in self.ctx.read_text(f"/proc/{self.pid}/maps")
        except (OSError, UnicodeDecodeError):
            return None

    @property
    def program(self) -> tuple[str, ...] | None:
        """What makes two processes one program: their command line (a spawned child's is multiprocessing's
        own); None where it is empty (a kernel thread, a zombie), which is no program to group by."""
        if not self.argv:
            return None
        return SPAWN_PROGRAM if self.argv[-1] == SPAWNED else self.argv

    def same_program(self, other: Entry) -> bool:
        """Whether ``other`` runs this process's executable (its command's first word where either cannot be read)."""
        if self.exe is not None and other.exe is not None:
            return self.exe == other.exe
        return bool(self.argv and other.argv) and self.argv[0] == other.argv[0]

    def name(self) -> str:
        """The program in words: the script or console script an interpreter runs (``gunicorn``, ``app.py``,
        ``-m pkg``), else the executable's name."""
        argv = self.argv
        if not argv:
            return f"process {self.pid}"
        if argv[-1] == SPAWNED:
            return "a multiprocessing child"
        target = python_target(argv)
        if target is not None:
            kind, value, _ = target
            words = {"-m": f"-m {(value.split() or ['(no module)'])[0]}", "-c": "-c CODE", "-": "- (its standard input)"}
            return words.get(kind) or posixpath.basename(value) or f"process {self.pid}"
        return posixpath.basename(argv[0]).split(":")[0] or f"process {self.pid}"


class ProcessTable:
    """The processes under the root (the doctor's own family left out), their parents read at once."""

    def __init__(self, ctx: ProbeContext, left_out: set[int]) -> None:
        self.entries: dict[int, Entry] = {}
        try:
            names = [name for name in ctx.listdir("/proc") if name.isdigit()]
        except OSError:
            names = []
        for name in names:
            pid = int(name)
            if pid in left_out:
                continue
            try:
                text = ctx.read_text(f"/proc/{pid}/stat", errors="replace")
                fields = text[text.rfind(")") + 2:].split()
                self.entries[pid] = Entry(ctx, pid, int(fields[1]), fields[0])
            except (OSError, ValueError, IndexError):
                continue

    def children(self, pid: int) -> list[Entry]:
        return [entry for entry in self.entries.values() if entry.parent == pid and entry.state != "Z"]

    def paddle(self) -> list[Entry]:
        return [entry for entry in self.entries.values() if entry.paddle and entry.state != "Z"]


@dataclass(frozen=True)
class Deployment:
    """A master (None where the workers' parent runs another program) and its workers, by PID."""

    master: int | None
    workers: tuple[int, ...]
    program: str
    master_source: str | None = None

    @property
    def pids(self) -> tuple[int, ...]:
        return ((self.master,) if self.master is not None else ()) + self.workers

    def describe(self) -> str:
        """``gunicorn: master 10 and 2 workers (11, 12)``."""
        count = len(self.workers)
        listed = f"{count} worker{'s' if count != 1 else ''} ({', '.join(map(str, self.workers))})"
        if self.master is None:
            return f"{self.program}: {listed}" if count > 1 else f"{self.program}: process {self.workers[0]}"
        return f"{self.program}: master {self.master} and {listed}"


def _group_key(entry: Entry) -> tuple[int, tuple[str, ...]] | None:
    program = entry.program
    return (entry.parent, program) if program is not None else None


def deployments(table: ProcessTable) -> list[Deployment]:
    """Every deployment of a Paddle service in the table: its Paddle processes grouped by parent and
    program, each group with its master where the parent runs the same program, and a Paddle process that
    is the master of a group only its master."""
    groups: dict[object, list[Entry]] = {}
    for entry in table.paddle():
        groups.setdefault(_group_key(entry) or entry.pid, []).append(entry)
    masters = {key: _master(table, members[0]) for key, members in groups.items()}
    mastering = {master for master in masters.values() if master is not None}
    found = []
    for key, members in groups.items():
        master = masters[key]
        workers = [entry for entry in members if entry.pid not in mastering]
        if master is not None:  # its children of the workers' program, one still starting included
            workers += [child for child in table.children(master) if _group_key(child) == key and child not in workers]
        if workers:
            found.append(_deployment(table, master, workers))
    return sorted(found, key=lambda deployment: deployment.pids)


def deployment_of(table: ProcessTable, pid: int) -> Deployment:
    """The deployment ``pid`` belongs to, as its master or one of its workers; alone where it belongs to none."""
    found = deployments(table)
    mastered = [deployment for deployment in found if deployment.master == pid]
    if mastered:  # the master named: every worker it runs
        workers = sorted({worker for deployment in mastered for worker in deployment.workers})
        return Deployment(pid, tuple(workers), mastered[0].program, mastered[0].master_source)
    within = next((deployment for deployment in found if pid in deployment.workers), None)
    if within is not None:
        return within
    entry = table.entries.get(pid)
    if entry is None:
        return Deployment(None, (pid,), f"process {pid}")
    children = [child for child in table.children(pid) if child.paddle and child.program is not None and entry.same_program(child)]
    if children:  # a master whose workers map Paddle, of a program grouped under no other
        return _deployment(table, pid, children)
    siblings = next((deployment for deployment in found if any(_group_key(table.entries[worker]) == _group_key(entry)
                                                               for worker in deployment.workers if worker in table.entries)), None)
    if siblings is not None and _group_key(entry) is not None:  # a worker still starting, not mapping Paddle yet
        return Deployment(siblings.master, tuple(sorted((*siblings.workers, pid))), siblings.program, siblings.master_source)
    return _deployment(table, None, [entry])


def _master(table: ProcessTable, worker: Entry) -> int | None:
    """The worker's parent where it is the worker's master: it runs the worker's executable, and the worker is a
    child it spawned or one of the same program (a fork, or a retitled worker of the same server); a parent
    running another program of the same interpreter (a supervisor written in Python) is none."""
    parent = table.entries.get(worker.parent)
    if parent is None or worker.program is None or not parent.same_program(worker):
        return None
    return parent.pid if worker.program == SPAWN_PROGRAM or parent.name() == worker.name() else None


def _deployment(table: ProcessTable, master: int | None, workers: list[Entry]) -> Deployment:
    named = table.entries[master] if master is not None else workers[0]
    source = f"/proc/{master}/cmdline and the workers' /proc/PID/stat" if master is not None else None
    return Deployment(master, tuple(sorted(entry.pid for entry in workers)), named.name(), source)


def deployed_processes(ctx: ProbeContext, table: ProcessTable, deployment: Deployment) -> list[DeployedProcess]:
    """Each process of the deployment as its own /proc files say (threads, resident memory, Paddle mapped)."""
    return [_deployed(ctx, table.entries.get(pid), pid, ProcessRole.MASTER if pid == deployment.master else ProcessRole.WORKER)
            for pid in deployment.pids]


def _deployed(ctx: ProbeContext, entry: Entry | None, pid: int, role: ProcessRole) -> DeployedProcess:
    proc = f"/proc/{pid}"
    try:
        threads: int | None = len(ctx.listdir(f"{proc}/task"))
    except OSError:
        threads = None
    rss = None
    try:
        line = next((line for line in ctx.read_text(f"{proc}/status", errors="replace").splitlines() if line.startswith("VmRSS:")), None)
        rss = int(line.split()[1]) * 1024 if line else None
    except (OSError, ValueError, IndexError):
        pass
    paddle = entry.paddle if entry is not None else None
    return DeployedProcess(pid, role, parent=entry.parent if entry is not None else None,
                           program=entry.name() if entry is not None else None,
                           program_source=f"{proc}/cmdline" if entry is not None and entry.argv else None,
                           maps_paddle=paddle, maps_source=f"{proc}/maps" if paddle is not None else None,
                           threads=threads, threads_source=f"{proc}/task" if threads is not None else None,
                           rss_bytes=rss, rss_source=f"{proc}/status" if rss is not None else None)
