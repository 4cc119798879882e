"""What the parent and the predictor worker say to each other: one dataclass per request, one
per reply, and the JSON lines they travel as, written and read here only.

Both sides import this module: the parent as part of the doctor, the worker in the service's own
interpreter (``session.worker_program``), so it imports only the standard library and the doctor's
modules in ``session.WORKER_IMPORTS``. A request line is ``{"cmd": <command>, <its fields>}``; a
reply line is ``{"ok": true, <its fields>}`` or ``{"ok": false, "error": <why>}``; the worker's
first line is its ``Hello``.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, TypeVar

from ..base.vocabulary import Layout
from ..facts.predictor import Call, PredictorConfig


class ProtocolError(ValueError):
    """A line that is no request or reply of this protocol."""


@dataclass(frozen=True)
class Hello:
    """The worker's first line: it imported Paddle, this version."""

    paddle: str | None


@dataclass(frozen=True)
class Done:
    """A request that answers nothing but that it was carried out."""


@dataclass(frozen=True)
class FeedShapes:
    """The shape of every input of every sample prepared."""

    shapes: list[dict[str, list[int]]]


@dataclass(frozen=True)
class Loaded:
    create_ms: float
    first_ms: float


@dataclass(frozen=True)
class Rejection:
    """A pass that refused an op: ``check`` is what failed, e.g. ``Attr(axis)``."""

    check: str
    op: str
    pass_name: str


@dataclass(frozen=True)
class Created:
    """A predictor created with Paddle's log read: the passes that ran and the ops they refused."""

    create_ms: float
    passes: list[str]
    rejections: list[Rejection]

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Created:
        return cls(data["create_ms"], data["passes"], [Rejection(**r) for r in data["rejections"]])


@dataclass(frozen=True)
class Runs:
    """Milliseconds of each run and the sample it fed."""

    ms: list[float]
    samples: list[int]


@dataclass(frozen=True)
class Drift:
    """How far two predictors' outputs of the first sample are apart."""

    max_abs_diff: float
    cosine: float
    top1_agreement: float | None


@dataclass(frozen=True)
class Memory:
    """The worker's resident memory in MiB."""

    rss_mb: float


@dataclass(frozen=True)
class MemoryAfterShapes:
    """The worker's resident memory in MiB after each set of input shapes."""

    rss_mb: list[float]


@dataclass(frozen=True)
class LayoutReady:
    create_ms: float


@dataclass(frozen=True)
class Failed:
    """The request failed in the worker (Paddle raised); ``error`` says why."""

    error: str


@dataclass(frozen=True)
class Window:
    """Every request's latency in ms in a load window, and the seconds until the last one finished."""

    ms: list[float]
    seconds: float


R = TypeVar("R")


class Request(Generic[R]):
    """A request whose reply is an ``R``; ``command`` is its name on the wire."""

    command: ClassVar[str]
    reply: type[R]

    def read_reply(self, data: dict[str, Any]) -> R:
        reader = getattr(self.reply, "from_data", None)
        return reader(data) if reader is not None else self.reply(**data)

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Request[Any]:
        return cls(**data)


@dataclass(frozen=True)
class Model(Request[Done]):
    """The model every predictor of this worker is created from (``params`` None: a legacy folder)."""

    command = "model"
    reply = Done
    program: str
    params: str | None
    directory: str


@dataclass(frozen=True)
class FeedSpec:
    """One input of one sample: synthetic values of this shape and dtype (integers in [low, high)),
    or the array of the same name in the sample's .npz file."""

    dtype: str
    shape: list[int]
    low: int | None = None
    high: int | None = None
    lod: list[list[int]] | None = None


@dataclass(frozen=True)
class Feeds(Request[FeedShapes]):
    """The inputs every run feeds in turn, one {input name: spec} per sample; ``npz`` the files
    of real samples, one per sample."""

    command = "feeds"
    reply = FeedShapes
    samples: list[dict[str, FeedSpec]]
    npz: list[str] | None = None
    seed: int = 0

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Feeds:
        samples = [{name: FeedSpec(**spec) for name, spec in sample.items()} for sample in data["samples"]]
        return cls(samples, data.get("npz"), data.get("seed", 0))


@dataclass(frozen=True)
class Load(Request[Loaded]):
    """Create the predictor ``config`` builds, keep it as ``arm`` and run it once."""

    command = "load"
    reply = Loaded
    arm: str
    config: PredictorConfig

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Load:
        return cls(data["arm"], PredictorConfig(**data["config"]))


@dataclass(frozen=True)
class Create(Request[Created]):
    """Create a predictor from these Config calls (the service's, on its device) with Paddle's log read, and drop it."""

    command = "create"
    reply = Created
    calls: list[Call]

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Create:
        return cls([(method, args) for method, args in data["calls"]])


@dataclass(frozen=True)
class Run(Request[Runs]):
    """``n`` runs of ``arm`` over the samples in turn, from sample number ``start``."""

    command = "run"
    reply = Runs
    arm: str
    n: int
    start: int = 0


@dataclass(frozen=True)
class DriftOf(Request[Drift]):
    """How far the first-run outputs of arm ``b`` are from arm ``a``'s."""

    command = "drift"
    reply = Drift
    a: str
    b: str


@dataclass(frozen=True)
class Shapes(Request[MemoryAfterShapes]):
    """Run ``arm`` once on synthetic inputs of each set of shapes; the memory after each."""

    command = "shapes"
    reply = MemoryAfterShapes
    arm: str
    shapes: list[dict[str, list[int]]]
    high: int = 10


@dataclass(frozen=True)
class Drop(Request[Done]):
    command = "drop"
    reply = Done
    arm: str


@dataclass(frozen=True)
class ServeLayout(Request[LayoutReady]):
    """Set up ``instances`` predictors of ``config`` arranged as ``kind`` (a lock, clones, a pool), and
    ``clients`` threads to load them; kept as ``name``."""

    command = "layout"
    reply = LayoutReady
    name: str
    kind: Layout
    instances: int
    config: PredictorConfig
    clients: int

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> ServeLayout:
        return cls(data["name"], Layout(data["kind"]), data["instances"], PredictorConfig(**data["config"]), data["clients"])


@dataclass(frozen=True)
class LoadWindow(Request[Window]):
    """Load layout ``name`` from ``start_at`` (time.monotonic, which every process of the machine
    shares) for ``seconds``, and for at least ``min_requests`` requests per client."""

    command = "window"
    reply = Window
    name: str
    start_at: float
    seconds: float
    min_requests: int


@dataclass(frozen=True)
class Rss(Request[Memory]):
    command = "rss"
    reply = Memory


@dataclass(frozen=True)
class Crash(Request[Done]):
    """Kill the worker with this signal (the tests' crash)."""

    command = "crash"
    reply = Done
    signal: str


@dataclass(frozen=True)
class Exit(Request[Done]):
    command = "exit"
    reply = Done


REQUESTS: dict[str, type[Request[Any]]] = {kind.command: kind for kind in (
    Model, Feeds, Load, Create, Run, DriftOf, Shapes, Drop, ServeLayout, LoadWindow, Rss, Crash, Exit)}


def _data(value: Any) -> dict[str, Any]:
    return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}


def _line(payload: dict[str, Any]) -> str:
    """One JSON line; dataclasses inside become objects (enums their values, tuples lists)."""
    return json.dumps(payload, default=_data) + "\n"


def _object(line: str | bytes, what: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except ValueError:
        raise ProtocolError(f"not a JSON {what}: {line[:80]!r}") from None
    if not isinstance(data, dict):
        raise ProtocolError(f"not a JSON object as a {what}: {line[:80]!r}")
    return data


def request_line(request: Request[Any]) -> str:
    return _line({"cmd": request.command, **_data(request)})


def read_request(line: str) -> Request[Any]:
    data = _object(line, "request")
    kind = REQUESTS.get(data.pop("cmd", None))
    if kind is None:
        raise ProtocolError(f"unknown command in {line[:80]!r}")
    return kind.from_data(data)


def reply_line(reply: Any) -> str:
    return _line({"ok": True, **_data(reply)})


def failure_line(error: str) -> str:
    return _line({"ok": False, "error": error})


def hello_line(hello: Hello) -> str:
    return _line({"ready": True, **_data(hello)})


def read_hello(line: bytes) -> Hello:
    data = _object(line, "greeting")
    return Hello(data.get("paddle"))


def read_reply(request: Request[R], line: bytes) -> R | Failed:
    """The reply to ``request``, or why it failed."""
    data = _object(line, "reply")
    if not data.pop("ok", False):
        return Failed(str(data.get("error", "unknown error")))
    return request.read_reply(data)
