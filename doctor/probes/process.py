"""The running service process, from /proc/PID under the probe root.

Each fact keeps the file it came from. The process belongs to a deployment (:mod:`.deployment`: a
master and its workers), whose every process is listed with its threads and memory. Without a pid
the probe picks the one deployment of processes that have Paddle's native library mapped (the
doctor itself, its ancestors and its children are never candidates); none, or several unrelated
ones, is said, with the candidates. Reading another user's process needs
root with CAP_SYS_PTRACE (which containers drop): /proc/PID/environ, maps and exe are then
denied, which is one line in the facts saying what would let the doctor read them, and what is
world-readable (threads, memory, affinity, cgroup) is still read. /proc mounted with hidepid
hides another user's process altogether, and the line for a pid that is not there says so.
"""

from __future__ import annotations

import os
import posixpath
import sys
import time
from dataclasses import replace
from typing import Any

from ..base.cpus import parse_cpu_list
from ..base.interpreter import Interpreter, RunAs
from ..base.redact import redact_arguments, redact_environment
from ..base.vocabulary import LibraryKind, ProcessStatus
from ..facts import DeployedProcess, MappedLibrary, ServiceProcessFacts
from ..facts.launcher import LauncherFacts
from ..source.launchers import Service, launched
from .context import ProbeContext
from .deployment import Deployment, ProcessTable, deployed_processes, deployment_of, deployments
from .libraries import SHARED_OBJECT
from .mounts import MOUNTINFO, parse_mountinfo_line

LIBRARY_KINDS = (
    ("libpaddle", "paddle"), ("libphi", "paddle"), ("libdnnl", "onednn"), ("libmkldnn", "onednn"),
    ("libmklml", "mkl"), ("libmkl_", "mkl"), ("libiomp5", "mkl"), ("libcudart", "cuda"), ("libcublas", "cuda"),
    ("libcudnn", "cudnn"), ("libnvinfer", "tensorrt"),
)
PF_KTHREAD = 0x00200000
CAP_SYS_PTRACE = 19
HIDEPID_OFF = ("hidepid=0", "hidepid=off")
BUSY_SHARE = 0.05
DEFAULT_SAMPLE_S = 1.0
NOT_PROBED = "the Paddle probe was not run"
ASK_FOR_PYTHON = "run the doctor as root, or give --python with an interpreter you trust (it runs as the doctor)"


class ProcessGone(Exception):
    """The process exited (or never existed) while it was read."""


def open_service_process(ctx: ProbeContext, pid: int | None,
                         sample_s: float = DEFAULT_SAMPLE_S) -> tuple[ServiceProcessFacts, ThreadSample | None]:
    """The process's facts, with the deployment it belongs to (its master and workers), and the busy-thread
    sample begun (live only) for the caller to finish: the wait costs no CPU, so the doctor probes the rest
    of the container meanwhile. Without a pid, the one deployment of processes with Paddle mapped; none, or
    several unrelated ones, is said (status not_found, several) with the candidates."""
    table = ProcessTable(ctx, _own_family(ctx))
    if pid is None:
        found = deployments(table)
        if not found:
            return ServiceProcessFacts(status=ProcessStatus.NOT_FOUND, reason="no process in this container has Paddle (libpaddle) mapped; "
                                                                  "name the service's process with --pid"), None
        if len(found) > 1:
            candidates = sorted(pid for deployment in found for pid in deployment.pids)
            said = "; ".join(deployment.describe() for deployment in found)
            return ServiceProcessFacts(status=ProcessStatus.SEVERAL, candidates=candidates,
                                       reason=f"{len(found)} unrelated services have Paddle mapped, each a parent and program "
                                              f"of its own ({said}); choose one with --pid"), None
        deployment = found[0]
        pid = _first_mapping(table, deployment)
        chosen = (f"the only process with Paddle mapped (libpaddle in /proc/{pid}/maps)" if deployment.pids == (pid,) else
                  f"a worker of the only service with Paddle mapped ({deployment.describe()})")
    else:
        deployment = deployment_of(table, pid)
        named = pid
        if pid == deployment.master and deployment.workers:
            pid = _first_mapping(table, deployment)
        chosen = "named with --pid" if pid == named else f"a worker of the master {named} named with --pid ({deployment.describe()})"
    facts = ServiceProcessFacts(status=ProcessStatus.PROBED, pid=pid, chosen_because=chosen)
    try:
        facts = _read_process(ctx, facts)
        if facts.status not in (ProcessStatus.PROBED, ProcessStatus.NO_PERMISSION):
            return facts, None
        facts = _launched_by_master(ctx, facts, deployment.master)
        others = tuple(worker for worker in deployment.workers if worker != pid) if ctx.is_live else ()
        sample = ThreadSample(ctx, f"/proc/{pid}", sample_s, others)
    except ProcessGone as gone:
        hidepid = _hidepid(ctx) if chosen == "named with --pid" else None
        hint = (f"; /proc is mounted with {hidepid}, which hides other users' processes: run the doctor "
                "as the service's user, or as root with CAP_SYS_PTRACE") if hidepid else ""
        return _vanished(facts, gone, hint), None
    facts = replace(facts, threads=len(sample.first), threads_source=f"/proc/{pid}/task/*/stat",
                    deployment=_deployment_words(deployment), processes=deployed_processes(ctx, table, deployment))
    return facts, (sample if ctx.is_live else None)


def read_process(ctx: ProbeContext, pid: int) -> ServiceProcessFacts:
    """Another process of the deployment read as the service's is (its user, environment, working
    directory: where its record is); vanished where it exited meanwhile."""
    facts = ServiceProcessFacts(status=ProcessStatus.PROBED, pid=pid, chosen_because="a process of the service's deployment")
    try:
        return _read_process(ctx, facts)
    except ProcessGone as gone:
        return _vanished(facts, gone)


def _first_mapping(table: ProcessTable, deployment: Deployment) -> int:
    """The deployment's first worker with Paddle mapped (its first where none has yet): the one read in depth."""
    return next((worker for worker in deployment.workers if table.entries[worker].paddle), deployment.workers[0])


def _deployment_words(deployment: Deployment) -> str:
    if deployment.master is None and len(deployment.workers) == 1:
        return f"{deployment.describe()}, alone: no other process of its parent runs its program"
    parent = "its master" if deployment.master is not None else "one parent that runs another program"
    return f"{deployment.describe()}: the processes with Paddle mapped of one program under {parent} ({deployment.master_source or '/proc/PID/stat and cmdline'})"


class ThreadSample:
    """Per-thread CPU time read twice, ``seconds`` apart: the threads that burn CPU, in the process and
    in each other worker of its deployment (``workers``)."""

    def __init__(self, ctx: ProbeContext, proc: str, seconds: float, workers: tuple[int, ...] = ()):
        self.ctx, self.proc, self.seconds = ctx, proc, seconds
        self.started = time.monotonic()
        self.first = _cpu_ticks(ctx, proc)
        self.workers = {pid: _ticks_or_none(ctx, f"/proc/{pid}") for pid in workers}

    def finish(self, facts: ServiceProcessFacts) -> ServiceProcessFacts:
        """The facts with the busy threads, the rest of the sample waited out; a process that exited meanwhile is vanished."""
        time.sleep(max(0.0, self.seconds - (time.monotonic() - self.started)))
        try:
            second = _cpu_ticks(self.ctx, self.proc)
            if _process_stat(self.ctx, self.proc)[0] == "Z":
                raise ProcessGone(f"{self.proc}/stat: it became a zombie")
        except ProcessGone as gone:
            vanished = _vanished(facts, gone)
            return replace(facts, status=vanished.status, reason=vanished.reason)
        elapsed = time.monotonic() - self.started
        threshold = BUSY_SHARE * os.sysconf("SC_CLK_TCK") * elapsed
        busy = _busy(self.first, second, threshold)
        processes = [self._sampled(process, facts.pid, busy, threshold) for process in facts.processes]
        return replace(facts, threads=len(second), busy_threads=busy, sample_s=round(elapsed, 1), processes=processes)

    def _sampled(self, process: DeployedProcess, own: int | None, busy: int, threshold: float) -> DeployedProcess:
        if process.pid == own:
            return replace(process, busy_threads=busy)
        first = self.workers.get(process.pid)
        second = _ticks_or_none(self.ctx, f"/proc/{process.pid}") if first is not None else None
        return replace(process, busy_threads=_busy(first, second, threshold)) if first is not None and second is not None else process


def _busy(first: dict[str, int], second: dict[str, int], threshold: float) -> int:
    return sum(1 for tid, ticks in second.items() if ticks - first.get(tid, ticks) >= threshold)


def _ticks_or_none(ctx: ProbeContext, proc: str) -> dict[str, int] | None:
    try:
        return _cpu_ticks(ctx, proc)
    except ProcessGone:
        return None


def _vanished(facts: ServiceProcessFacts, gone: ProcessGone, hint: str = "") -> ServiceProcessFacts:
    return ServiceProcessFacts(status=ProcessStatus.VANISHED, pid=facts.pid, chosen_because=facts.chosen_because,
                               reason=f"process {facts.pid} does not exist or exited while it was read ({gone}){hint}")


def service_interpreter(ctx: ProbeContext, process: ServiceProcessFacts) -> tuple[Interpreter | None, str | None]:
    """The interpreter whose Paddle the doctor probes and measures: the process's Python, run as the
    process's user where that is another one (the doctor as root); the doctor's own where the process
    runs no Python or was not read. (None, the line that says why) where the doctor cannot become
    the process's user: nothing of that user's is run then."""
    doctor, uid, pid = os.geteuid(), process.uid, process.pid
    other = uid is not None and pid is not None and uid != doctor
    if other and doctor != 0:
        return None, (f"{NOT_PROBED}: the service's process {pid} runs as uid {uid} and the doctor, as uid {doctor}, "
                      f"cannot run its interpreter as that user; {ASK_FOR_PYTHON}")
    python = _python(process)
    if python is None:
        return Interpreter(sys.executable), None
    if not other:
        return Interpreter(python), None
    try:
        run_as = _run_as(ctx, process)
    except (ProcessGone, OSError) as exc:
        return None, f"{NOT_PROBED}: the user and environment of process {pid} could not be read again ({exc}); {ASK_FOR_PYTHON}"
    return Interpreter(python, run_as), None


def _python(process: ServiceProcessFacts) -> str | None:
    """The process's Python; None when it is not a Python."""
    interpreter = process.interpreter or ""
    name = posixpath.basename(interpreter)
    return interpreter if name.startswith(("python", "pypy")) and os.path.exists(interpreter) else None


def _run_as(ctx: ProbeContext, process: ServiceProcessFacts) -> RunAs:
    """The process's user and its environment, unredacted, read again now; OSError when it is no
    longer the user the facts say (its pid taken by another process meanwhile)."""
    proc = f"/proc/{process.pid}"
    now = _read_status(ctx, f"{proc}/status")
    uid, gid = now.get("uid"), now.get("gid")
    environ = _environment(_read(ctx, f"{proc}/environ"))
    if (uid, gid) != (process.uid, process.gid) or uid is None or gid is None:
        raise OSError(f"it runs as uid {uid}, gid {gid} now, not as it did when it was read")
    return RunAs(uid, gid, environ)


def _environment(text: str) -> dict[str, str]:
    """/proc/PID/environ's variables."""
    return {name: value for name, _, value in (entry.partition("=") for entry in text.split("\0") if "=" in entry)}


def _read_process(ctx: ProbeContext, facts: ServiceProcessFacts) -> ServiceProcessFacts:
    """The process's facts, read from /proc/PID (``facts`` names it)."""
    pid = facts.pid
    proc = f"/proc/{pid}"
    stat = _process_stat(ctx, proc)
    if stat[0] == "Z":
        return replace(facts, status=ProcessStatus.ZOMBIE, reason=f"process {pid} is a zombie: it has exited and its parent has not reaped it")
    if int(stat[6]) & PF_KTHREAD:
        return replace(facts, status=ProcessStatus.KERNEL_THREAD, reason=f"process {pid} is a kernel thread, not a service")
    read = _read_status(ctx, f"{proc}/status")
    denied: list[tuple[str, OSError]] = []
    argv = redact_arguments(_read(ctx, f"{proc}/cmdline").split("\0"))  # --password=..., --password X, URLs with credentials
    exe = _readable(denied, lambda: os.readlink(ctx.path(f"{proc}/exe")), f"{proc}/exe")
    environ = _readable(denied, lambda: _read(ctx, f"{proc}/environ"), f"{proc}/environ")
    variables = {}
    if environ is not None:
        variables = _environment(environ)
        read.update(environ=redact_environment(variables), environ_source=f"{proc}/environ")
    if exe is not None:
        read["interpreter"], read["interpreter_source"] = _interpreter(ctx, proc, exe, argv[0], variables.get("PATH"))
    maps = _readable(denied, lambda: _read(ctx, f"{proc}/maps"), f"{proc}/maps")
    if maps is not None:
        read.update(libraries=mapped_libraries(maps), libraries_source=f"{proc}/maps")
        if not any(library.kind == "paddle" for library in read["libraries"]):
            read["reason"] = f"process {pid} has no Paddle library mapped (no libpaddle in {proc}/maps); is it the service?"
    launcher = _launcher(ctx, proc, argv, variables, read.get("interpreter"))
    read.update(script=launcher.entry, script_source=launcher.entry_source, launcher=launcher,
                cgroup=_read(ctx, f"{proc}/cgroup").strip() or None, cgroup_source=f"{proc}/cgroup")
    facts = replace(facts, **read)
    if denied:
        return replace(facts, status=ProcessStatus.NO_PERMISSION, reason=_refused(ctx, facts, denied))
    return facts


def _refused(ctx: ProbeContext, facts: ServiceProcessFacts, denied: list[tuple[str, OSError]]) -> str:
    """What could not be read, and what would let the doctor read it: root does not help where it already is."""
    permission = all(isinstance(error, PermissionError) for _, error in denied)
    paths = ", ".join(path if isinstance(error, PermissionError) else f"{path} ({error.strerror})" for path, error in denied)
    said = f"permission denied reading {paths}" if permission else f"cannot read {paths}"
    user = "the service's user" + (f" (uid {facts.uid})" if facts.uid is not None else "")
    if not ctx.is_live or os.geteuid() != 0:
        return f"{said}: run the doctor as root or as {user}"
    if not _capable(ctx, CAP_SYS_PTRACE):
        return (f"{said}: the doctor runs as root but without CAP_SYS_PTRACE, which reading another process needs "
                "(containers drop it): add it (docker run --cap-add SYS_PTRACE; Kubernetes "
                f"securityContext.capabilities.add: [SYS_PTRACE]) or run the doctor as {user}")
    return (f"{said}, although the doctor runs as root with CAP_SYS_PTRACE: the kernel refuses it for process "
            f"{facts.pid} (a process of another user namespace, or a security module such as AppArmor, SELinux or "
            "Yama), and no user the doctor runs as changes that")


def _capable(ctx: ProbeContext, capability: int) -> bool:
    """Whether the doctor's own process has ``capability`` in its effective set (/proc/self/status CapEff)."""
    try:
        status = ctx.read_text("/proc/self/status")
    except (OSError, UnicodeDecodeError):
        return False
    effective = next((line.split(":", 1)[1].strip() for line in status.splitlines() if line.startswith("CapEff:")), "0")
    return bool(int(effective, 16) >> capability & 1)


def _hidepid(ctx: ProbeContext) -> str | None:
    """``hidepid=2`` (or ``invisible``) where /proc is mounted hiding other users' processes; None otherwise."""
    try:
        lines = ctx.read_text(MOUNTINFO).splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for mount in filter(None, map(parse_mountinfo_line, lines)):
        if mount.mountpoint == "/proc" and mount.fstype == "proc":
            return next((option for option in mount.super_options + mount.options
                         if option.startswith("hidepid=") and option not in HIDEPID_OFF), None)
    return None


def _interpreter(ctx: ProbeContext, proc: str, exe: str, argv0: str, search_path: str | None) -> tuple[str, str]:
    """The program the process runs. A virtual environment's ``python`` is a symbolic link that
    /proc/PID/exe resolves to the base interpreter, which lacks the environment's packages; the
    command's first word keeps the environment: as an absolute path, relative to the process's
    working directory, or found on the PATH the process was started with (``CMD ["python", ...]``
    with ``ENV PATH=/venv/bin:$PATH``) — when it is the same file as /proc/PID/exe."""
    candidates: list[tuple[str, str]] = []
    if argv0.startswith("/"):
        candidates.append((argv0, f"{proc}/cmdline"))
    elif "/" in argv0:
        cwd = _link(ctx, f"{proc}/cwd")
        if cwd:
            candidates.append((posixpath.normpath(posixpath.join(cwd, argv0)), f"{proc}/cmdline and {proc}/cwd"))
    elif argv0 and search_path:
        found = next((posixpath.join(folder, argv0) for folder in search_path.split(":")
                      if folder.startswith("/") and ctx.exists(posixpath.join(folder, argv0))), None)
        if found:
            candidates.append((found, f"{proc}/cmdline and the PATH in {proc}/environ"))
    for path, source in candidates:
        if path != exe and _same_file(ctx, path, exe):
            return path, source
    return exe, f"{proc}/exe"


def _same_file(ctx: ProbeContext, one: str, other: str) -> bool:
    """Whether two paths name one file that exists, links followed as the container sees them."""
    try:
        return ctx.resolve(one) == ctx.resolve(other) and ctx.exists(one)
    except OSError:
        return False


def _link(ctx: ProbeContext, path: str) -> str | None:
    try:
        return os.readlink(ctx.path(path))
    except OSError:
        return None


def _read(ctx: ProbeContext, path: str) -> str:
    try:
        return ctx.read_text(path, errors="replace")
    except (FileNotFoundError, ProcessLookupError) as exc:
        raise ProcessGone(f"{path}: {exc.strerror or exc}") from None


def _readable(denied: list[tuple[str, OSError]], read, path: str):
    try:
        return read()
    except (FileNotFoundError, ProcessLookupError) as exc:
        raise ProcessGone(f"{path}: {exc.strerror}") from None
    except OSError as exc:
        denied.append((path, exc))
    return None


def _process_stat(ctx: ProbeContext, proc: str) -> list[str]:
    """The process's stat fields; ProcessGone when the file is gone or empty (it exits as it is read)."""
    fields = _stat_fields(_read(ctx, f"{proc}/stat"))
    if len(fields) < 13:
        raise ProcessGone(f"{proc}/stat: empty or cut short")
    return fields


def _stat_fields(text: str) -> list[str]:
    """/proc/PID/stat after the command name (which may hold spaces and parentheses): state first."""
    end = text.rfind(")")
    return text[end + 2:].split() if end >= 0 else []


def _read_status(ctx: ProbeContext, path: str) -> dict[str, Any]:
    """What /proc/PID/status says of the process, as the fields of ServiceProcessFacts it fills."""
    read: dict[str, Any] = {}
    for line in _read(ctx, path).splitlines():
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "Uid":  # the real ids (the first of four): the user the service was started as
            read["uid"] = int(value.split()[0])
        elif key == "Gid":
            read["gid"] = int(value.split()[0])
        elif key == "VmRSS":
            read.update(rss_bytes=int(value.split()[0]) * 1024, rss_source=path)
        elif key == "Cpus_allowed_list":
            try:
                read.update(affinity=parse_cpu_list(value), affinity_source=path)
            except ValueError:
                pass
    return read


def mapped_libraries(maps: str) -> list[MappedLibrary]:
    """Paddle, oneDNN, MKL, CUDA, cuDNN and TensorRT libraries among the mapped files, once each;
    the version comes from the file name (``libcudnn.so.9`` is 9)."""
    seen: dict[str, MappedLibrary] = {}
    for line in maps.splitlines():
        fields = line.split(None, 5)
        if len(fields) < 6 or not fields[5].startswith("/"):
            continue
        path = fields[5].strip()
        kind = library_kind(posixpath.basename(path))
        if kind and path not in seen:
            match = SHARED_OBJECT.match(posixpath.basename(path))
            seen[path] = MappedLibrary(LibraryKind(kind), path, match.group("version") if match else None)
    return sorted(seen.values(), key=lambda library: (library.kind, library.path))


def library_kind(name: str) -> str | None:
    return next((kind for prefix, kind in LIBRARY_KINDS if name.startswith(prefix)), None)


def _launched_by_master(ctx: ProbeContext, facts: ServiceProcessFacts, master: int | None) -> ServiceProcessFacts:
    """A worker whose command line names no code of the service (uvicorn's and multiprocessing's spawned
    workers run ``python -c 'from multiprocessing.spawn import spawn_main...'``) runs its master's: the
    launcher read from the master's command line, environment and working directory."""
    if master is None or master == facts.pid or facts.launcher is None or facts.launcher.entry is not None:
        return facts
    proc = f"/proc/{master}"
    try:
        argv = redact_arguments(_read(ctx, f"{proc}/cmdline").split("\0"))
        environ = _environment(_read(ctx, f"{proc}/environ"))
    except (ProcessGone, OSError):
        return facts
    launcher = _launcher(ctx, proc, argv, environ, facts.interpreter)
    if launcher.entry is None:
        return facts
    return replace(facts, script=launcher.entry, script_source=launcher.entry_source, launcher=launcher)


def _launcher(ctx: ProbeContext, proc: str, argv: list[str], environ: dict[str, str], interpreter: str | None) -> LauncherFacts:
    """What the command line launches (:mod:`..source.launchers`): the file of the service's code (a script,
    ``-m pkg``, ``gunicorn app:app``, a console script's entry point) found on the service interpreter's
    sys.path under the root, or why none, and the launcher's settings."""
    cwd = _link(ctx, f"{proc}/cwd")
    service = Service(proc, cwd, environ, interpreter, lambda path: str(ctx.contained(posixpath.normpath(posixpath.join("/", path)))))
    return launched(service, argv)


def cpu_seconds(ctx: ProbeContext, pid: int) -> float | None:
    """The CPU time the process has used so far (its threads', user + system); None when it is gone."""
    try:
        return sum(_cpu_ticks(ctx, f"/proc/{pid}").values()) / os.sysconf("SC_CLK_TCK")
    except ProcessGone:
        return None


def _cpu_ticks(ctx: ProbeContext, proc: str) -> dict[str, int]:
    """Per thread, user + system CPU time in clock ticks; a thread that ends meanwhile is left out."""
    try:
        tids = ctx.listdir(f"{proc}/task")
    except FileNotFoundError as exc:
        raise ProcessGone(f"{proc}/task: {exc.strerror}") from None
    ticks = {}
    for tid in tids:
        try:
            fields = _stat_fields(ctx.read_text(f"{proc}/task/{tid}/stat"))
            ticks[tid] = int(fields[11]) + int(fields[12])
        except (OSError, ValueError, IndexError):
            continue
    return ticks


def _proc_entries(ctx: ProbeContext) -> list[str]:
    try:
        return [name for name in ctx.listdir("/proc") if name.isdigit()]
    except OSError:
        return []


def _own_family(ctx: ProbeContext) -> set[int]:
    """The doctor, its ancestors and its children (the Paddle probe child maps libpaddle too)."""
    if not ctx.is_live:
        return set()
    family, pid = {os.getpid()}, os.getppid()
    while pid > 1 and pid not in family:
        family.add(pid)
        try:
            pid = int(_stat_fields(ctx.read_text(f"/proc/{pid}/stat"))[1])
        except (OSError, ValueError, IndexError):
            break
    for name in _proc_entries(ctx):
        try:
            if int(_stat_fields(ctx.read_text(f"/proc/{name}/stat"))[1]) == os.getpid():
                family.add(int(name))
        except (OSError, ValueError, IndexError):
            continue
    return family
