"""Facts: everything the probes saw, as plain data.

Facts serialize to JSON and back without loss, so ``paddle-doctor facts > snap.json`` on one
machine and ``paddle-doctor check --facts snap.json`` on another give the same findings.
Checks read Facts and nothing else.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .serde import decode_document, load_json_file, to_data

SCHEMA_VERSION = 1


class FactsError(ValueError):
    """A facts file that cannot be used; the message names the file and what is wrong."""


@dataclass
class ProbeIssue:
    """Something a probe could not read; recorded instead of raised."""

    probe: str
    path: str | None
    reason: str


@dataclass
class HostFacts:
    hostname: str | None = None
    kernel: str | None = None
    machine: str | None = None
    python: str | None = None


@dataclass
class ContainerFacts:
    detected: bool = False
    runtime: str | None = None
    evidence: list[str] = field(default_factory=list)


@dataclass
class CpuFacts:
    source: str | None = None
    arch: str | None = None
    vendor: str | None = None
    model_name: str | None = None
    logical_cpus: int | None = None
    online_cpus: list[int] | None = None
    flags: list[str] = field(default_factory=list)


@dataclass
class CgroupFacts:
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


@dataclass
class MemoryFacts:
    limit_bytes: int | None = None
    usage_bytes: int | None = None
    limit_file: str | None = None
    shm_bytes: int | None = None


@dataclass
class Mount:
    mountpoint: str
    fstype: str
    source: str
    root: str
    options: list[str]
    super_options: list[str]


@dataclass
class ProcessFacts:
    affinity: list[int] | None = None
    affinity_source: str | None = None
    euid: int | None = None
    groups: list[int] = field(default_factory=list)


@dataclass
class PaddleFacts:
    """What the Paddle probe child saw. ``status``: ok, missing, crashed, failed, timeout, not_probed."""

    status: str = "not_probed"
    reason: str | None = None
    python: str | None = None
    distribution: str | None = None
    version: str | None = None
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


@dataclass
class GpuProcess:
    pid: int
    used_memory_bytes: int | None = None


@dataclass
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


@dataclass
class GpuFacts:
    """What NVML said, plus the kernel driver's traces under the root.

    ``status``: ok, library_not_found, driver_not_loaded, driver_mismatch, no_permission,
    no_device, failed, timeout, no_pynvml, not_probed.
    """

    status: str = "not_probed"
    reason: str | None = None
    nvml_error: str | None = None
    driver_version: str | None = None
    cuda_driver_version: str | None = None
    devices: list[GpuDevice] = field(default_factory=list)
    kernel_driver: str | None = None
    device_nodes: list[str] = field(default_factory=list)
    seconds: float | None = None


@dataclass
class SharedLibrary:
    path: str
    version: str | None = None


@dataclass
class LibraryFacts:
    """CUDA libraries in the loader's view: per name, every copy in search order (the first one loads)."""

    searched: list[str] = field(default_factory=list)
    found: dict[str, list[SharedLibrary]] = field(default_factory=dict)


@dataclass
class TrtCacheFacts:
    """Where ``use_static`` TensorRT engines go, and what is there. ``status``: probed, not_probed."""

    status: str = "not_probed"
    reason: str | None = None
    directory: str | None = None
    source: str | None = None
    exists: bool = False
    engines: list[str] = field(default_factory=list)
    checked_path: str | None = None
    mode: int | None = None
    uid: int | None = None
    gid: int | None = None
    stamp: dict[str, str] | None = None
    stamp_error: str | None = None
    shape_file: str | None = None
    shape_file_exists: bool | None = None


@dataclass
class TensorRTSettings:
    """The service's ``enable_tensorrt_engine`` arguments (GPU only)."""

    enabled: bool = False
    use_static: bool = False
    precision: str = "fp32"
    min_subgraph_size: int = 3
    max_batch_size: int = 1
    workspace_mb: int = 1024
    dynamic_shape_file: str | None = None


@dataclass
class ServiceFacts:
    """How the service configures Paddle Inference: from --config service.yaml and flags, never probed.

    ``None`` means "not said", and Paddle's own default applies.
    """

    model: str | None = None
    device: str = "cpu"
    threads: int | None = None
    instances: int = 1
    concurrency: int | None = None
    layout: str | None = None
    onednn: bool | None = None
    onednn_cache_capacity: int | None = None
    ir_optim: bool | None = None
    precision: str = "fp32"
    feed_fetch_ops: bool | None = None
    memory_optim: bool | None = None
    optim_cache_dir: str | None = None
    save_optim_model: bool | None = None
    use_optimized_model: bool | None = None
    warmup_runs: int | None = None
    batch_size: int = 1
    gpu_device_id: int = 0
    gpu_memory_pool_mb: int | None = None
    delete_passes: list[str] = field(default_factory=list)
    tensorrt: TensorRTSettings = field(default_factory=TensorRTSettings)


@dataclass
class ArmResult:
    """One predictor configuration (or serving layout, under load) as measured: latency in
    milliseconds; ``throughput_rps`` (requests per second) for a layout under concurrent load."""

    label: str
    config: dict[str, Any]
    create_ms: float | None = None
    first_ms: float | None = None
    runs: int = 0
    p50: float | None = None
    p90: float | None = None
    p99: float | None = None
    mean: float | None = None
    cv: float | None = None
    throughput_rps: float | None = None


@dataclass
class ComparisonResult:
    """Candidate against baseline: ratio > 1 means the candidate is faster."""

    baseline: str
    candidate: str
    ratio: float
    ci_low: float
    ci_high: float
    verdict: str
    rounds: int
    confidence: float = 0.95
    drift: dict[str, Any] | None = None
    changes_outputs: bool | None = None


@dataclass
class ExperimentResult:
    """``status``: measured, skipped (cannot run here: reason says why) or error (reason says why)."""

    name: str
    status: str
    reason: str | None = None
    seconds: float = 0.0
    arms: list[ArmResult] = field(default_factory=list)
    comparisons: list[ComparisonResult] = field(default_factory=list)
    noisy: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Recommendation:
    config: dict[str, Any]
    snippet: str
    steps: list[str]
    baseline: ArmResult
    recommended: ArmResult
    comparison: ComparisonResult | None


@dataclass
class ModelFacts:
    path: str
    format: str
    program: str
    params: str | None
    inputs: dict[str, dict[str, Any]]


@dataclass
class VerificationFacts:
    model: ModelFacts
    budget_s: float
    min_effect: float
    max_drift: float
    seconds: float = 0.0
    baseline: dict[str, Any] = field(default_factory=dict)
    experiments: list[ExperimentResult] = field(default_factory=list)
    recommendation: Recommendation | None = None
    error: str | None = None

    def experiment(self, name: str) -> ExperimentResult | None:
        return next((e for e in self.experiments if e.name == name), None)


@dataclass
class ChainBreaker:
    """What stops a fusion between two matched ops: ``op``, an op no pass accepts there (a custom
    or unknown op), or ``consumer``, a second use of the intermediate value outside the pattern."""

    kind: str
    op: str
    position: int
    variable: str | None = None
    after: str | None = None
    before: str | None = None
    custom: bool = False


@dataclass
class FusionInstance:
    """One fusible pattern in the original program. ``status``: fused (one op in the optimised
    program), partial, unfused, or unknown (not found in the optimised program); ``ops`` name
    each matched op with its position (``conv2d #1``), ``variables`` their outputs."""

    pattern: str
    status: str
    ops: list[str]
    variables: list[str]
    params: list[str] = field(default_factory=list)
    became: list[str] = field(default_factory=list)
    reason: str | None = None
    breakers: list[ChainBreaker] = field(default_factory=list)


@dataclass
class PatternCoverage:
    """``coverage`` = fused / (fusible - unknown); None when nothing could be counted."""

    pattern: str
    title: str
    fusible: int
    fused: int
    partial: int
    unfused: int
    unknown: int = 0
    coverage: float | None = None


@dataclass
class PassRejection:
    """A pass that looked at an op and refused it: ``check`` is what failed, e.g. ``Attr(axis)``."""

    pass_name: str
    op: str
    check: str


@dataclass
class TensorRTShare:
    engines: int
    ops_inside: int
    ops_outside: int
    share: float | None
    outside: dict[str, int] = field(default_factory=dict)


@dataclass
class OptimisedProgram:
    """The program the predictor runs for the service's config. ``status``: read, skipped (cannot
    be produced here; reason says why) or error (Paddle failed; reason says how)."""

    status: str
    reason: str | None = None
    pipeline: str | None = None
    config: list[str] = field(default_factory=list)
    format: str | None = None
    ops: int = 0
    histogram: dict[str, int] = field(default_factory=dict)
    removed: dict[str, int] = field(default_factory=dict)
    added: dict[str, int] = field(default_factory=dict)
    passes: list[str] | None = None
    rejections: list[PassRejection] = field(default_factory=list)
    create_ms: float | None = None
    tensorrt: TensorRTShare | None = None


@dataclass
class GraphFacts:
    """The model's program read without running it, and its fusion coverage. ``error``: the program
    cannot be read (names the file, and the version when known); nothing else is filled then."""

    program: str
    format: str | None = None
    version: int | None = None
    error: str | None = None
    ops: int = 0
    histogram: dict[str, int] = field(default_factory=dict)
    feed_fetch: dict[str, int] = field(default_factory=dict)
    optimised: OptimisedProgram | None = None
    instances: list[FusionInstance] = field(default_factory=list)
    coverage: list[PatternCoverage] = field(default_factory=list)
    total: PatternCoverage | None = None
    dropout: list[str] = field(default_factory=list)
    dropout_left: int | None = None
    seconds: float = 0.0


@dataclass
class Facts:
    schema_version: int = SCHEMA_VERSION
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
    service: ServiceFacts = field(default_factory=ServiceFacts)
    paddle: PaddleFacts = field(default_factory=PaddleFacts)
    verification: VerificationFacts | None = None
    gpu: GpuFacts = field(default_factory=GpuFacts)
    libraries: LibraryFacts = field(default_factory=LibraryFacts)
    trt_cache: TrtCacheFacts = field(default_factory=TrtCacheFacts)
    graph: GraphFacts | None = None
    issues: list[ProbeIssue] = field(default_factory=list)

    def issues_for(self, probe: str) -> list[ProbeIssue]:
        return [issue for issue in self.issues if issue.probe == probe]

    def to_json(self) -> str:
        return json.dumps(to_data(self), indent=2, sort_keys=True) + "\n"


def facts_from_data(data: Any, source: str = "facts") -> Facts:
    return decode_document(Facts, data, source, "facts", SCHEMA_VERSION, FactsError,
                           "record the facts again with this version ('paddle-doctor facts')")


def load_facts(path: str | Path) -> Facts:
    data = load_json_file(path, FactsError, "facts", "expected the output of 'paddle-doctor facts'")
    return facts_from_data(data, str(path))
