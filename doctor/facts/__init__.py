"""Facts: everything the probes saw, as plain data.

Facts serialize to JSON and back without loss, so ``paddle-doctor facts > snap.json`` on one
machine and ``paddle-doctor check --facts snap.json`` on another give the same findings
(:mod:`.document` reads them back). Checks read Facts and nothing else.

The sections only a measurement or a service's record fills (``verification``, ``graph``,
``service_record``) have modules of their own, imported by the code that fills or reads them, and
Facts names their types through those modules (``verification.VerificationFacts``): the
healthcheck, which runs every few seconds and never measures, never loads them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..base.constraints import Count, version_field
from ..base.deferred import deferred_dataclass
from ..base.serde import to_data
from ..base.vocabulary import (
    CacheStatus,
    GpuStatus,
    LibraryKind,
    Origin,
    PaddleStatus,
    ProcessRole,
    ProcessStatus,
    SourcePatternKind,
    SourceStatus,
    SourceStop,
)
from .baseline import BaselineFacts
from .environment import SourceEnvironment
from .launcher import LauncherFacts
from .predictor import ServiceConfig, TensorRTSettings  # noqa: F401 (one namespace of facts)
from .service_config import PADDLE_DEFAULT_THREADS, SettingOrigin  # noqa: F401 (one namespace of facts)

if TYPE_CHECKING:  # the measured sections: loaded by whoever fills or decodes them (.document)
    from . import graph, service_record, verification

SCHEMA_VERSION = 2


PADDLE_STATUS_WORDS = {"not_probed": "Paddle not probed", "missing": "Paddle not installed", "crashed": "Paddle crashes on import",
                       "failed": "Paddle fails to import", "timeout": "Paddle import hangs"}


def paddle_status_words(status: str) -> str:
    """The Paddle probe's status (PaddleFacts.status) in words, for people."""
    return PADDLE_STATUS_WORDS.get(status, f"Paddle {status}")


class FactsError(ValueError):
    """A facts file that cannot be used; the message names the file and what is wrong."""


CANNOT_READ = "cannot read: "


@dataclass(frozen=True)
class ProbeIssue:
    """Something a probe could not read; recorded instead of raised."""

    probe: str
    path: str | None
    reason: str

    @property
    def unreadable(self) -> bool:
        """The path is there but this user cannot read it (permissions, a symlink loop), as opposed to missing or malformed."""
        return self.reason.startswith(CANNOT_READ)

    def describe(self) -> str:
        if self.unreadable:
            return f"cannot read {self.path}: {self.reason.removeprefix(CANNOT_READ)}"
        return f"{self.path}: {self.reason}"


@dataclass(frozen=True)
class HostFacts:
    """The machine as uname and the interpreter describe it; ``boot_id`` changes at every boot of the host."""

    hostname: str | None = None
    kernel: str | None = None
    machine: str | None = None
    python: str | None = None
    boot_id: str | None = None


@dataclass(frozen=True)
class ContainerFacts:
    """Whether the doctor runs in a container, which runtime, and the files that say so."""

    detected: bool = False
    runtime: str | None = None
    evidence: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CpuFacts:
    """The CPU as /proc/cpuinfo and /sys describe it: model, online CPUs, instruction-set flags."""

    source: str | None = None
    arch: str | None = None
    vendor: str | None = None
    model_name: str | None = None
    logical_cpus: int | None = None
    online_cpus: list[int] | None = None
    flags: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CgroupFacts:
    """The cgroup that limits this process's CPU: quota, period, cpuset and throttling counters, each with its file."""

    version: int | None = None
    cpu_dir: str | None = None
    quota_us: int | None = None
    period_us: int | None = None
    quota_file: str | None = None
    cpuset: list[int] | None = None
    cpuset_file: str | None = None
    nr_periods: int | None = None
    nr_throttled: int | None = None
    throttled_usec: int | None = None


@dataclass(frozen=True)
class MemoryFacts:
    """The cgroup memory limit and usage, and the size of /dev/shm."""

    limit_bytes: int | None = None
    usage_bytes: int | None = None
    limit_file: str | None = None
    shm_bytes: int | None = None


@dataclass(frozen=True)
class Mount:
    """One line of /proc/self/mountinfo."""

    mountpoint: str
    fstype: str
    source: str
    root: str
    options: list[str]
    super_options: list[str]


@dataclass(frozen=True)
class ProcessFacts:
    """The CPU affinity the checks judge, the service's where its process was read (``affinity_source``
    names /proc/PID/status), else the doctor's own; and the doctor's effective user and groups."""

    affinity: list[int] | None = None
    affinity_source: str | None = None
    euid: int | None = None
    groups: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class PaddleFacts:
    """What the Paddle probe child saw. ``status``: ok, missing, crashed, failed, timeout, not_probed.
    ``ran_as_uid``/``ran_as_gid``: the service's user the child ran as (the doctor as root, the service
    another user's); None where it ran as the doctor. ``metadata_file``: the distribution's METADATA."""

    status: PaddleStatus = PaddleStatus.NOT_PROBED
    reason: str | None = None
    python: str | None = None
    ran_as_uid: int | None = None
    ran_as_gid: int | None = None
    distribution: str | None = None
    version: str | None = None
    metadata_file: str | None = None
    with_cuda: bool | None = None
    cuda_version: str | None = None
    cudnn_version: str | None = None
    compiled_with_avx: bool | None = None
    compiled_with_mkldnn: bool | None = None
    mkldnn_default_on: bool | None = None
    default_threads: int | None = None
    supports: dict[str, bool] = field(default_factory=dict)
    trt_compile_version: list[int] | None = None
    trt_runtime_version: list[int] | None = None
    tensorrt_version: str | None = None
    cuda_archs: list[int] | None = None
    cuda_lib_dirs: list[str] = field(default_factory=list)
    import_seconds: float | None = None
    returncode: int | None = None
    signal: str | None = None
    stderr_tail: str | None = None


@deferred_dataclass(frozen=True)
class GpuProcess:
    """A process NVML sees on a GPU, with the GPU memory it holds."""

    pid: int
    used_memory_bytes: int | None = None


@deferred_dataclass(frozen=True)
class GpuDevice:
    """One GPU as NVML reports it; ``None`` where NVML could not tell (listed in ``unsupported``)."""

    index: int
    name: str | None = None
    compute_capability: str | None = None
    memory_total_bytes: int | None = None
    memory_used_bytes: int | None = None
    memory_free_bytes: int | None = None
    processes: list[GpuProcess] | None = None
    persistence_mode: bool | None = None
    throttle_reasons: list[str] | None = None
    mig_mode: bool | None = None
    unsupported: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class GpuFacts:
    """What NVML said, plus the kernel driver's traces under the root.

    ``status``: ok, library_not_found, driver_not_loaded, driver_mismatch, no_permission,
    no_device, failed, timeout, no_pynvml, not_probed.
    """

    status: GpuStatus = GpuStatus.NOT_PROBED
    reason: str | None = None
    nvml_error: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    devices: list[GpuDevice] = field(default_factory=list)
    kernel_driver: str | None = None
    device_nodes: list[str] = field(default_factory=list)
    seconds: float | None = None


@deferred_dataclass(frozen=True)
class SharedLibrary:
    """A copy of a CUDA, cuDNN or TensorRT library the loader would find, with the version its file name gives."""

    path: str
    version: str | None = None


@dataclass(frozen=True)
class LibraryFacts:
    """CUDA libraries in the loader's view: per name, every copy in search order (the first one loads)."""

    searched: list[str] = field(default_factory=list)
    found: dict[str, list[SharedLibrary]] = field(default_factory=dict)


STAMP_FILE = "paddle-doctor-cache.json"  # beside the TensorRT engines: what built them (paddle-doctor stamp-cache)


@dataclass(frozen=True)
class TrtCacheFacts:
    """The optimisation cache folder, where Paddle saves the optimised model (``save_optim_model``)
    and serialized TensorRT engines (``use_static``), and what is there. ``status``: probed,
    not_probed (the service uses no cache; ``reason`` says why). ``files``: entries in the folder;
    ``list_error``: why the folder could not be listed."""

    status: CacheStatus = CacheStatus.NOT_PROBED
    reason: str | None = None
    directory: str | None = None
    source: str | None = None
    exists: bool = False
    engines: list[str] = field(default_factory=list)
    files: int = 0
    list_error: str | None = None
    checked_path: str | None = None
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    stamp: dict[str, str] | None = None
    stamp_error: str | None = None
    shape_file: str | None = None
    shape_file_exists: bool | None = None


@deferred_dataclass(frozen=True)
class SourceLocation:
    """A line of the service's source: ``app.py:42``."""

    file: str
    line: Count

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@deferred_dataclass(frozen=True)
class SourceSetting:
    """One Config setting the service's source makes. ``name`` is the ServiceConfig field it sets
    (``threads``, ``tensorrt.use_static``); ``value`` is None when ``evaluated`` is False: the
    expression is one the doctor cannot evaluate, and it never guesses. A value read from the
    environment names the variable, its default in the source and, with --pid, the live value."""

    name: str
    value: int | bool | str | None
    evaluated: bool
    location: SourceLocation
    code: str
    env_var: str | None = None
    env_default: str | None = None
    env_live: str | None = None
    host_cpu_count: bool = False
    condition: str | None = None
    predictors: list[Count] = field(default_factory=list)
    function: str | None = None  # the function the call is in (``Engine.build``), None at the top level

    @property
    def conditional(self) -> bool:
        """Made only when ``condition`` holds, which the source alone does not tell (the other branch
        of the ``if`` is then another setting, with the opposite condition); a branch known not to
        run is never a setting, and a condition known to hold is no condition."""
        return self.condition is not None


@deferred_dataclass(frozen=True)
class SourcePredictor:
    """One Config the source builds, a predictor of its own: ``id`` (from 1, in reading order, what
    each SourceSetting's ``predictors`` names), where the Config is built, in which function, and
    the calls that lead there (the outermost caller first; ``caller`` the function that outermost
    call is in, None at a module's top level). ``package``, ``version`` and ``path``: the installed
    distribution the Config's file belongs to (its ``.dist-info`` beside it) and the file inside it;
    null for the service's own code."""

    id: Count
    location: SourceLocation
    function: str | None = None
    chain: list[SourceLocation] = field(default_factory=list)
    caller: str | None = None
    package: str | None = None
    version: str | None = None
    path: str | None = None


@deferred_dataclass(frozen=True)
class SourcePattern:
    """How the source serves its predictor, where the source lint checks look. """

    kind: SourcePatternKind
    location: SourceLocation
    detail: str


@deferred_dataclass(frozen=True)
class SourceError:
    """A file the source reader could not parse or read, at the line where it failed."""

    location: SourceLocation
    message: str


@dataclass(frozen=True)
class SourceFacts:
    """The service's Python source read with ``ast`` (never imported or run). ``status``: read,
    not_read (no --source and no script from --pid; ``reason`` says why). ``left_out``: Python
    files found past the most the doctor reads in one run (``files`` are those it read, ``imported``
    those among them read because a file given imports them). ``stopped``: why the read ended before
    the end of the folders given (then it did not look for more files, and ``left_out`` counts none)."""

    status: SourceStatus = SourceStatus.NOT_READ
    reason: str | None = None
    paths: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    configs: list[SourceLocation] = field(default_factory=list)
    predictors: list[SourcePredictor] = field(default_factory=list)
    settings: list[SourceSetting] = field(default_factory=list)
    patterns: list[SourcePattern] = field(default_factory=list)
    errors: list[SourceError] = field(default_factory=list)
    left_out: Count = 0
    imported: list[str] = field(default_factory=list)  # files read because the files given import them (--pid)
    imports_left_out: Count = 0  # modules imported and found past the bounds of that reading
    imports_from: str | None = None  # where the imports were looked for (whose sys.path); None: not followed
    stopped: SourceStop | None = None
    launcher: LauncherFacts | None = None  # what runs the source, and its settings (--pid's command line, or a folder's gunicorn.conf.py)
    environment: list[SourceEnvironment] = field(default_factory=list)  # where the source sets the thread variables and FLAGS_*

    @property
    def unread(self) -> list[SourceError]:
        """The files the doctor did not read (not a regular file, too large, nested too deeply,
        unreadable), as opposed to files Python itself cannot parse."""
        return [error for error in self.errors if error.message.startswith(CANNOT_READ)]


@deferred_dataclass(frozen=True)
class MappedLibrary:
    """A shared library the service process has mapped; ``kind``: paddle, onednn, mkl, cuda, cudnn, tensorrt."""

    kind: LibraryKind
    path: str
    version: str | None = None


@deferred_dataclass(frozen=True)
class DeployedProcess:
    """One process of the service's deployment (``ServiceProcessFacts.processes``): its role, its parent,
    the program it runs, and what its own files say, each with the file: whether it maps Paddle
    (``/proc/PID/maps``; None where that cannot be read), its threads (``/proc/PID/task``; ``busy_threads``
    those that used CPU over the service's sample, live only), its resident
    memory (``/proc/PID/status`` VmRSS), and its own record (``record`` the file read, ``record_reason``
    why none was): the predictors it holds and the math threads they run at once (``math_threads``)."""

    pid: int
    role: ProcessRole
    parent: int | None = None
    program: str | None = None
    program_source: str | None = None
    maps_paddle: bool | None = None
    maps_source: str | None = None
    threads: int | None = None
    threads_source: str | None = None
    busy_threads: int | None = None
    rss_bytes: int | None = None
    rss_source: str | None = None
    record: str | None = None
    record_reason: str | None = None
    predictors: int | None = None
    math_threads: int | None = None
    math_threads_source: str | None = None


@dataclass(frozen=True)
class ServiceProcessFacts:
    """The running service process, read from /proc/PID under the root; each fact with the file it came from.

    ``status``: probed, not_probed, not_found (no process has Paddle mapped), several (more than one
    has; ``candidates`` lists them), vanished, zombie, kernel_thread, no_permission. ``busy_threads``:
    threads that used CPU during ``sample_s`` seconds (the real compute threads). ``processes``: the
    deployment the process belongs to (its master and its workers: the same parent and program),
    ``deployment`` how it was found, in words; ``pid`` is the process read in depth, a worker where
    the master named maps no Paddle.
    """

    status: ProcessStatus = ProcessStatus.NOT_PROBED
    reason: str | None = None
    pid: int | None = None
    chosen_because: str | None = None
    candidates: list[int] = field(default_factory=list)
    uid: int | None = None
    gid: int | None = None
    interpreter: str | None = None
    interpreter_source: str | None = None
    script: str | None = None
    script_source: str | None = None
    launcher: LauncherFacts | None = None
    environ: dict[str, str] = field(default_factory=dict)
    environ_source: str | None = None
    cgroup: str | None = None
    cgroup_source: str | None = None
    affinity: list[int] | None = None
    affinity_source: str | None = None
    libraries: list[MappedLibrary] = field(default_factory=list)
    libraries_source: str | None = None
    threads: int | None = None
    busy_threads: int | None = None
    threads_source: str | None = None
    sample_s: float | None = None
    rss_bytes: int | None = None
    rss_source: str | None = None
    deployment: str | None = None
    processes: list[DeployedProcess] = field(default_factory=list)

    def workers(self) -> list[DeployedProcess]:
        """The deployment's workers: the processes that serve (a process alone is its own one worker)."""
        return [process for process in self.processes if process.role == ProcessRole.WORKER]


@dataclass(frozen=True)
class Facts:
    """The only input of the checks: everything the probes saw, and apart from it the service's
    declared configuration (``service``: what its flags, --config and source ask of Paddle, with
    ``service_origins`` saying where each value came from; never probed)."""

    schema_version: int = version_field(SCHEMA_VERSION)
    doctor_version: str = ""
    root: str = "/"
    host: HostFacts = field(default_factory=HostFacts)
    container: ContainerFacts = field(default_factory=ContainerFacts)
    cpu: CpuFacts = field(default_factory=CpuFacts)
    cgroup: CgroupFacts = field(default_factory=CgroupFacts)
    memory: MemoryFacts = field(default_factory=MemoryFacts)
    process: ProcessFacts = field(default_factory=ProcessFacts)
    mounts: list[Mount] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    service: ServiceConfig = field(default_factory=ServiceConfig)
    paddle: PaddleFacts = field(default_factory=PaddleFacts)
    verification: verification.VerificationFacts | None = None
    gpu: GpuFacts = field(default_factory=GpuFacts)
    libraries: LibraryFacts = field(default_factory=LibraryFacts)
    trt_cache: TrtCacheFacts = field(default_factory=TrtCacheFacts)
    graph: graph.GraphFacts | None = None
    service_source: SourceFacts = field(default_factory=SourceFacts)
    service_process: ServiceProcessFacts = field(default_factory=ServiceProcessFacts)
    service_origins: list[SettingOrigin] = field(default_factory=list)
    service_record: service_record.ServiceRecord | None = None  # what the service recorded (paddle-doctor record), when it did
    baseline: BaselineFacts | None = None  # what `paddle-doctor baseline` recorded, given to the healthcheck

    def unknown_setting(self, name: str) -> str | None:
        """Why the service's value of ``name`` is not known although its source sets it (``set at
        app.py:31 from an expression the doctor cannot evaluate``); None when known or not set."""
        origin = next((o for o in self.service_origins if o.name == name), None)  # one per setting, the one that won
        return origin.detail if origin is not None and origin.value is None else None

    def lines_deciding(self, name: str) -> list[SourceLocation]:
        """The source lines the service's value of ``name`` comes from (no flag or --config said
        otherwise); empty when it comes from elsewhere. The check judging that value reports them,
        and the source lint rule for the same call stays silent: one line of code, one finding."""
        origin = next((o for o in self.service_origins if o.name == name), None)
        if origin is None or origin.origin != Origin.SOURCE or origin.value is None:
            return []
        return [setting.location for setting in self.service_source.settings if setting.name == name and setting.evaluated]

    def said_by(self, name: str) -> str | None:
        """Where the service's value of setting ``name`` came from, for people: the flag, the
        --config file, or the source line (with the variable and its default); None when not recorded."""
        origin = next((o for o in self.service_origins if o.name == name and o.value is not None), None)
        if origin is None:
            return None
        return f"--config {origin.detail}" if origin.origin == "config" else origin.detail
    issues: list[ProbeIssue] = field(default_factory=list)

    def issues_for(self, probe: str) -> list[ProbeIssue]:
        return [issue for issue in self.issues if issue.probe == probe]

    def to_json(self) -> str:
        return json.dumps(to_data(self), indent=2, sort_keys=True) + "\n"

