"""Facts read from the model's program (``--model``): fusion instances, coverage and the optimised
program Paddle runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..base.schema import Count, NonNegative
from ..base.vocabulary import BreakerKind, FusionStatus, ModelFormat, ProgramStatus


@dataclass(frozen=True)
class ChainBreaker:
    """What stops a fusion between two matched ops: ``op``, an op no pass accepts there (a custom
    or unknown op), or ``consumer``, a second use of the intermediate value outside the pattern."""

    kind: BreakerKind
    op: str
    position: int
    variable: str | None = None
    after: str | None = None
    before: str | None = None
    custom: bool = False


@dataclass(frozen=True)
class FusionInstance:
    """One fusible pattern in the original program. ``status``: fused (one op in the optimised
    program), partial, unfused, or unknown (not found in the optimised program); ``ops`` name
    each matched op with its position (``conv2d #1``), ``variables`` their outputs."""

    pattern: str
    status: FusionStatus
    ops: list[str] = field(metadata={"schema": {"minItems": 2}})
    variables: list[str]
    params: list[str] = field(default_factory=list)
    became: list[str] = field(default_factory=list)
    reason: str | None = None
    breakers: list[ChainBreaker] = field(default_factory=list)


@dataclass(frozen=True)
class PatternCoverage:
    """``coverage`` = fused / (fusible - unknown); None when nothing could be counted."""

    pattern: str
    title: str
    fusible: Count
    fused: Count
    partial: Count
    unfused: Count
    unknown: Count = 0
    coverage: NonNegative | None = None


@dataclass(frozen=True)
class PassRejection:
    """A pass that looked at an op and refused it: ``check`` is what failed, e.g. ``Attr(axis)``."""

    pass_name: str
    op: str
    check: str


@dataclass(frozen=True)
class TensorRTShare:
    engines: Count
    ops_inside: Count
    ops_outside: Count
    share: NonNegative | None
    outside: dict[str, Count] = field(default_factory=dict)


@dataclass(frozen=True)
class OptimisedProgram:
    """The program the predictor runs for the service's config. ``status``: read, skipped (cannot
    be produced here; reason says why) or error (Paddle failed; reason says how)."""

    status: ProgramStatus
    reason: str | None = None
    pipeline: str | None = None
    config: list[str] = field(default_factory=list)
    format: ModelFormat | None = None
    ops: Count = 0
    histogram: dict[str, Count] = field(default_factory=dict)
    removed: dict[str, Count] = field(default_factory=dict)
    added: dict[str, Count] = field(default_factory=dict)
    passes: list[str] | None = None
    rejections: list[PassRejection] = field(default_factory=list)
    create_ms: NonNegative | None = None
    tensorrt: TensorRTShare | None = None


@dataclass(frozen=True)
class GraphFacts:
    """The model's program read without running it, and its fusion coverage. ``error``: the program
    cannot be read (names the file, and the version when known); nothing else is filled then."""

    program: str
    format: ModelFormat | None = None
    version: int | None = None
    error: str | None = None
    ops: Count = 0
    histogram: dict[str, Count] = field(default_factory=dict)
    feed_fetch: dict[str, Count] = field(default_factory=dict)
    optimised: OptimisedProgram | None = None
    attribute_types: dict[str, list[str]] = field(default_factory=dict)  # per op type, the types of its attributes (known_issues.yaml asks)
    instances: list[FusionInstance] = field(default_factory=list)
    coverage: list[PatternCoverage] = field(default_factory=list)
    total: PatternCoverage | None = None
    dropout: list[str] = field(default_factory=list)
    dropout_left: Count | None = None
    seconds: float = 0.0
