"""The words the doctor's data uses, each defined once: where a service runs, how concurrent
requests reach predictors, in which precision, what became of an experiment and of a measured
comparison, what a check found and what the measurement of its fix said. They are ``str`` enums, so JSON, YAML and click choices carry the plain
value (``"cpu"``, ``"lock"``) and a member compares equal to it.
"""

from __future__ import annotations

from enum import Enum


class Word(str, Enum):
    """A member prints as its value (``f"{Layout.LOCK}"`` is ``lock``), for people and for files."""

    def __str__(self) -> str:
        return self.value

    @classmethod
    def values(cls) -> list[str]:
        return [member.value for member in cls]

    @classmethod
    def listing(cls) -> str:
        """``cpu, gpu``: for an error that says what was expected."""
        return ", ".join(cls.values())


class Severity(Word):
    """How much a failing rule matters, least first; ``--fail-on`` counts it and those above."""

    INFO = "info"
    WARNING = "warning"
    ERROR = "error"

    @property
    def rank(self) -> int:
        return list(Severity).index(self)


class Device(Word):
    CPU = "cpu"
    GPU = "gpu"


class Layout(Word):
    """How concurrent requests reach predictors: one process per predictor, ``clone()``d
    predictors in threads, a pool of predictors, one predictor behind a lock, or one predictor
    shared by threads without a lock."""

    PROCESSES = "processes"
    CLONE = "clone"
    POOL = "pool"
    LOCK = "lock"
    SHARED = "shared"

    @property
    def single_predictor(self) -> bool:
        return self in (Layout.LOCK, Layout.SHARED)


class Precision(Word):
    FP32 = "fp32"
    BF16 = "bf16"
    FP16 = "fp16"
    INT8 = "int8"


class ExperimentStatus(Word):
    """``measured``; ``skipped``: it cannot run here (the reason says why); ``error``: it failed."""

    MEASURED = "measured"
    SKIPPED = "skipped"
    ERROR = "error"


class Experiment(Word):
    """A fix measured on the predictor (``recommend``: the search for the configuration to run);
    a rule's ``experiment:`` in rules.yaml names one."""

    THREADS = "threads"
    ONEDNN = "onednn"
    IR_OPTIM = "ir_optim"
    FEED_FETCH = "feed_fetch"
    BF16 = "bf16"
    ONEDNN_CACHE = "onednn_cache"
    OPTIM_CACHE = "optim_cache"
    WARMUP = "warmup"
    TRT_CACHE = "trt_cache"
    FP16 = "fp16"
    LAYOUTS = "layouts"
    RECOMMEND = "recommend"


class Effect(Word):
    """What a comparison of a candidate with its baseline measured."""

    IMPROVED = "improved"
    REGRESSED = "regressed"
    NO_EFFECT = "no measurable effect"
    UNDECIDED = "undecided"


class FixSafety(Word):
    """What applying a rule's fix may change (rules.yaml's ``fix.safety``): ``safe``, the service computes the
    same outputs (threads, cache bounds, warm-up); ``unsafe``, its outputs or behaviour may change (a precision,
    IR passes, a Paddle pin, the worker count). ``paddle-doctor fix`` applies the unsafe ones only with
    ``--unsafe-fixes``, and a fix whose measured outputs drifted past the tolerance is unsafe whatever it says."""

    SAFE = "safe"
    UNSAFE = "unsafe"


class Lifecycle(Word):
    """A rule's place in its life (rules.yaml's ``status``): checked, in the checklist with no check yet,
    or retired (its id is never reused)."""

    STABLE = "stable"
    PLANNED = "planned"
    REMOVED = "removed"


class Origin(Word):
    """Where the service's value of a setting came from."""

    FLAG = "flag"
    CONFIG = "config"
    RECORD = "record"
    LAUNCHER = "launcher"  # the server or task queue that starts the service's code (gunicorn's workers)
    SOURCE = "source"


class RecordStatus(Word):
    """What looking for the service's record (``paddle-doctor record``) gave: ``read``; ``not_found``
    (the service does not record, or has not built a predictor yet); ``unreadable`` (truncated, not
    a record, another schema); ``not_asked`` (no service process was picked)."""

    READ = "read"
    NOT_FOUND = "not_found"
    UNREADABLE = "unreadable"
    NOT_ASKED = "not_asked"


class Recorder(Word):
    """What noted a service's runs: the C recorder built with the package (``native``), or the
    Python one where it was not built or ``PADDLE_DOCTOR_RECORD_NATIVE=0`` (``python``: several
    microseconds more per ``run()``)."""

    NATIVE = "native"
    PYTHON = "python"


class BuiltBy(Word):
    """How a recorded predictor came to be: ``create_predictor``, ``clone()`` of another, a
    ``PredictorPool``; ``unseen``: its ``run()`` was seen but not its building; ``source``: nothing
    was recorded, and the service's source builds its Config (its settings, each with the condition
    it is made under, are the source's settings naming its id)."""

    CREATE_PREDICTOR = "create_predictor"
    CLONE = "clone"
    POOL = "pool"
    UNSEEN = "unseen"
    SOURCE = "source"


class PaddleStatus(Word):
    """What importing Paddle in a child process gave."""

    OK = "ok"
    MISSING = "missing"
    CRASHED = "crashed"
    FAILED = "failed"
    TIMEOUT = "timeout"
    NOT_PROBED = "not_probed"


class GpuStatus(Word):
    """What asking NVML gave."""

    OK = "ok"
    LIBRARY_NOT_FOUND = "library_not_found"
    DRIVER_NOT_LOADED = "driver_not_loaded"
    DRIVER_MISMATCH = "driver_mismatch"
    NO_PERMISSION = "no_permission"
    NO_DEVICE = "no_device"
    FAILED = "failed"
    TIMEOUT = "timeout"
    NO_PYNVML = "no_pynvml"
    NOT_PROBED = "not_probed"


class CacheStatus(Word):
    PROBED = "probed"
    NOT_PROBED = "not_probed"


class SourceStatus(Word):
    READ = "read"
    NOT_READ = "not_read"


class SourceStop(Word):
    """Why the source read stopped before the end of what it was given: it found more Python files
    than it reads in one run, or its time ran out."""

    FILES = "files"
    TIME = "time"


class SourcePatternKind(Word):
    """How a service's source serves its predictor, as the source lint checks look for it."""

    PREDICTOR_PER_REQUEST = "predictor_per_request"
    SHARED_PREDICTOR_THREADS = "shared_predictor_threads"
    ONE_REQUEST_AT_A_TIME = "one_request_at_a_time"  # a predictor made once, that requests reach one at a time (no race)
    NO_WARMUP = "no_warmup"


class LibraryKind(Word):
    """A shared library a service maps that decides how Paddle computes."""

    PADDLE = "paddle"
    ONEDNN = "onednn"
    MKL = "mkl"
    CUDA = "cuda"
    CUDNN = "cudnn"
    TENSORRT = "tensorrt"


class ProcessRole(Word):
    """A process's place in the service's deployment: the ``master`` that forks or spawns the workers
    (gunicorn's arbiter, uvicorn's supervisor, a ``multiprocessing`` parent), or a ``worker`` that serves
    (a process alone is its own one worker)."""

    MASTER = "master"
    WORKER = "worker"


class ProcessStatus(Word):
    """What reading the service's process from /proc gave."""

    PROBED = "probed"
    NOT_PROBED = "not_probed"
    NOT_FOUND = "not_found"
    SEVERAL = "several"
    VANISHED = "vanished"
    ZOMBIE = "zombie"
    KERNEL_THREAD = "kernel_thread"
    NO_PERMISSION = "no_permission"


class ModelFormat(Word):
    """How a model's program is stored: a PIR ``.json`` program (Paddle 3), a ``.pdmodel``
    ProgramDesc, or a legacy folder of ``__model__`` and parameter files."""

    PIR = "pir"
    PDMODEL = "pdmodel"
    LEGACY = "legacy"


class ProgramStatus(Word):
    """What became of reading the optimised program: ``skipped`` cannot be produced here (the reason
    says why); ``error``: Paddle failed (the reason says how)."""

    READ = "read"
    SKIPPED = "skipped"
    ERROR = "error"


class FusionStatus(Word):
    """One fusible pattern in the optimised program: one op (fused), fewer ops (partial), as many
    (unfused), or not found there (unknown)."""

    FUSED = "fused"
    PARTIAL = "partial"
    UNFUSED = "unfused"
    UNKNOWN = "unknown"


class BreakerKind(Word):
    """What stops a fusion: an op no pass accepts between two matched ops, or a second use
    (consumer) of an intermediate value outside the pattern."""

    OP = "op"
    CONSUMER = "consumer"


class ProblemKind(Word):
    """What a known problem (known_issues.yaml) does: kills or fails the predictor, gives wrong outputs,
    slows it, grows its memory, ignores a setting, or names an API that goes away; ``notice`` for a
    change of behaviour worth knowing. The kind decides the rule a matching entry is a finding of."""

    CRASH = "crash"
    WRONG_RESULT = "wrong_result"
    SLOW = "slow"
    MEMORY = "memory"
    IGNORED_SETTING = "ignored_setting"
    DEPRECATED = "deprecated"
    NOTICE = "notice"

    @property
    def rule(self) -> str:
        """The rule a matching entry of this kind is a finding of."""
        return _RULE_OF_KIND[self]


_RULE_OF_KIND = {
    ProblemKind.CRASH: "PD-PADDLE-004", ProblemKind.WRONG_RESULT: "PD-PADDLE-004",
    ProblemKind.SLOW: "PD-PADDLE-005", ProblemKind.MEMORY: "PD-PADDLE-005", ProblemKind.IGNORED_SETTING: "PD-PADDLE-005",
    ProblemKind.DEPRECATED: "PD-PADDLE-006", ProblemKind.NOTICE: "PD-PADDLE-006",
}


class RaceEnd(Word):
    """Why a race of serving layouts stopped: every comparison decided, the budget spent, or the most rounds run."""

    DECIDED = "decided"
    BUDGET = "budget"
    MAX_ROUNDS = "max rounds"


class Status(Word):
    """What a check found about one rule: ``error`` means the doctor could not carry the check out."""

    PASS = "pass"
    FAIL = "fail"
    WARN = "warn"
    SKIP = "skip"
    ERROR = "error"

    @property
    def is_problem(self) -> bool:
        """Counts towards the exit code (an error means a rule could not be verified)."""
        return self in (Status.FAIL, Status.WARN, Status.ERROR)


class Verdict(Word):
    """What the measurement of a finding's own fix said about it."""

    CONFIRMED = "confirmed"
    REFUTED = "refuted"
    UNDECIDED = "undecided"
