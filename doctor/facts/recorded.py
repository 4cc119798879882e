"""The record a service writes about its predictors (``paddle-doctor record``), one JSON file per
process: what each predictor was built with, read back through its Config's getters at the moment
``create_predictor`` was called, where it was built, and how its ``run()`` was used.

Its schema is generated from these types (``doctor/schemas/record.schema.json``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import PurePosixPath

from ..base.schema import Count, NonNegative, version_field
from ..base.vocabulary import BuiltBy, Device, Precision, Recorder
from .predictor import PredictorConfig

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Frame:
    """A place in the service's code. ``package`` and ``version`` name the installed distribution the
    file belongs to, and ``path`` is the file inside it; both are null for the service's own code."""

    file: str
    line: Count
    function: str
    package: str | None = None
    version: str | None = None
    path: str | None = None

    def where(self) -> str:
        """``paddleocr 2.7.3 tools/infer/utility.py:263``, or ``/app/app.py:12`` for the service's own code."""
        if self.package:
            return f"{self.package} {self.version} {self.path}:{self.line}" if self.version else f"{self.package} {self.path}:{self.line}"
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class BuildSite:
    """Where a predictor was built: ``builder`` is the first frame outside Paddle (often a wrapper
    package's), ``service`` the service's own frame that led there (the same place when the service
    builds it itself); ``threads_set_at`` where ``set_cpu_math_library_num_threads`` was called."""

    builder: Frame | None
    service: Frame | None
    threads_set_at: Frame | None = None


@dataclass(frozen=True)
class RecordedConfig:
    """A predictor's configuration as its Config's getters (and ``summary()``) read it back. ``cpu``
    holds what a CPU predictor runs; on the GPU its threads and oneDNN are what Paddle keeps for the
    CPU part. ``tensorrt_use_static`` and ``cpu.optim_cache_dir`` have no getter: they are the
    arguments of the last call that set them (null when none was seen)."""

    cpu: PredictorConfig
    device: Device
    gpu_device_id: int | None = None
    gpu_memory_pool_mb: int | None = None
    tensorrt: bool = False
    tensorrt_precision: Precision | None = None
    tensorrt_use_static: bool | None = None
    tensorrt_dynamic_shape: bool | None = None
    summary: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ModelFiles:
    """The model the predictor loaded: a program and parameters file, or a model folder; ``in_memory``
    when it was handed over as buffers (``set_model_buffer``)."""

    model_dir: str | None
    prog_file: str | None
    params_file: str | None
    in_memory: bool = False

    def name(self) -> str:
        """The model's folder name (``det``), for people."""
        if self.model_dir:
            return PurePosixPath(self.model_dir).name
        return PurePosixPath(self.prog_file).parent.name if self.prog_file else "a model in memory"


@dataclass(frozen=True)
class TensorSeen:
    shape: list[int]
    dtype: str


@dataclass(frozen=True)
class InputsSeen:
    """One combination of input shapes and dtypes ``run()`` was called with, in input order, and how often."""

    inputs: list[TensorSeen]
    runs: Count


@dataclass(frozen=True)
class RunStats:
    """How ``run()`` was used. Latencies come from a histogram with buckets 12.5% wide (a percentile
    is within about 6% of the exact one); ``busy_s`` is the time spent inside ``run()``, ``span_s``
    from the start of the first run to the end of the last; ``gap_p50_ms`` the median time between
    the end of one run and the start of the next; ``peak_concurrency`` the most threads inside this
    predictor's ``run()`` at once. ``shapes`` keeps the first 32 combinations seen, most frequent
    first; ``shapes_not_kept`` counts the runs with others."""

    runs: Count
    first_run_ms: NonNegative | None
    p50_ms: NonNegative | None
    p90_ms: NonNegative | None
    p99_ms: NonNegative | None
    busy_s: NonNegative
    span_s: NonNegative
    gap_p50_ms: NonNegative | None
    peak_concurrency: Count
    shapes: list[InputsSeen]
    shapes_not_kept: Count


@dataclass(frozen=True)
class CallingThreads:
    """The threads that called one method of a predictor, each by its number in the process (1 for
    the first thread that ran, copied into or asked for an output of any predictor, 2 for the next):
    the first 16, and how many others (``more``)."""

    threads: list[Count] = field(default_factory=list)
    more: Count = 0

    def count(self) -> int:
        return len(self.threads) + self.more


@dataclass(frozen=True)
class Sharing:
    """Which threads used a predictor: those that called its ``run()``, those whose inputs copied in
    (``copy_from_cpu``, on the thread that then called ``run()``) a run took, those that called its
    ``get_output_handle``; ``crossed`` counts the runs whose thread had copied its inputs in and
    another thread's ``run()`` of the same predictor began between the first of those copies and this
    run (its inputs may have been run, or overwritten, by the other thread's call: a race)."""

    run: CallingThreads = field(default_factory=CallingThreads)
    copy_from_cpu: CallingThreads = field(default_factory=CallingThreads)
    get_output_handle: CallingThreads = field(default_factory=CallingThreads)
    crossed: Count = 0

    def threads(self) -> int:
        """The most threads seen calling one of its methods."""
        return max(self.run.count(), self.copy_from_cpu.count(), self.get_output_handle.count())


@dataclass(frozen=True)
class RecordedPredictor:
    """One predictor the service built. ``config`` and ``model`` are null for one whose building was
    not seen (``built_by`` ``unseen``); ``clone_of`` is the id of the predictor it was cloned from;
    ``pool_size`` the size of the ``PredictorPool`` it belongs to; ``built`` how many predictors of
    the same site and configuration were folded into this one once the record kept 64; ``alive``
    whether the service still held it when the record was written; ``input_names`` its inputs, in
    the order of each entry of ``runs.shapes``; ``sharing`` the threads that used it (null in a record
    of a recorder that did not note them)."""

    id: Count
    built_by: BuiltBy
    config: RecordedConfig | None
    model: ModelFiles | None
    origin: BuildSite
    runs: RunStats
    clone_of: int | None = None
    pool_size: int | None = None
    built: Count = 1
    alive: bool = True
    input_names: list[str] = field(default_factory=list)
    sharing: Sharing | None = None

    def name(self) -> str:
        """``det``: the folder of its model, or ``predictor 3`` when its model was not seen."""
        return self.model.name() if self.model else f"predictor {self.id}"

    def built_at(self) -> str:
        """``paddleocr 2.7.3 tools/infer/utility.py:263``: the first place outside Paddle that built it."""
        return self.origin.builder.where() if self.origin.builder else "a place not seen"


@dataclass(frozen=True)
class Record:
    """A process's record of its predictors. ``start_ticks`` is the process's start time (field 22
    of /proc/PID/stat), so a record is never taken for another process that got the same PID;
    ``peak_concurrent_runs`` and ``peak_concurrent_threads`` are the most ``run()`` calls, and the
    most math threads of their predictors, inside ``run()`` at once across the process;
    ``errors`` the last failures of the recorder itself (a write that failed, a getter that raised);
    ``recorder`` what noted the runs: its C module, or Python where that was not built; ``environment``
    the thread variables and ``FLAGS_*`` (``facts.environment.noted``) as the process saw them when it
    began to import Paddle, before Paddle's own code ran (a variable absent was unset; null: not noted)."""

    pid: Count
    start_ticks: Count
    argv: list[str]
    paddle_version: str | None
    doctor_version: str
    written_at: NonNegative
    predictors: list[RecordedPredictor]
    predictors_not_kept: Count
    peak_concurrent_runs: Count
    peak_concurrent_threads: Count
    errors: list[str]
    recorder: Recorder = Recorder.PYTHON
    environment: dict[str, str] | None = None
    schema_version: int = version_field(SCHEMA_VERSION)
