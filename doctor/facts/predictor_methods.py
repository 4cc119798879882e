"""What a predictor configuration does (``PredictorConfig``, in facts/predictor.py, whose fields the table of
settings writes): its name for people, its key, the ``paddle.inference.Config`` calls that build it and the
snippet that prints them, a variation of it.

The configuration itself travels to the predictor worker (``verify/protocol.py``), which builds Paddle's
Config from the same calls the recommended snippet prints, so what is measured is exactly what is
recommended. This module runs in the worker too, in the service's interpreter: it imports only the
standard library, ``vocabulary``, ``quoting`` and the table (``verify/session.py`` WORKER_IMPORTS).
"""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from ..base.quoting import python_call
from ..base.vocabulary import Precision
from .knobs import PREDICTOR_FIELDS, TRT_PRECISION_NAMES, Call, labels, predictor_calls

if TYPE_CHECKING:
    from typing_extensions import Self

    from .service_config import ServiceBehaviour

TENSORRT_PRECISIONS = {Precision(ours): theirs for theirs, ours in TRT_PRECISION_NAMES.items()}  # the doctor's -> PrecisionType


class _ProbedPaddle(Protocol):
    @property
    def mkldnn_default_on(self) -> bool | None: ...


class Probed(Protocol):
    """What :meth:`PredictorBehaviour.of_service` reads of the facts: the service's declared configuration and the probed Paddle."""

    @property
    def service(self) -> ServiceBehaviour: ...

    @property
    def paddle(self) -> _ProbedPaddle: ...


class PredictorBehaviour:
    """What ``PredictorConfig`` does, its base: the fields are the table's (facts/knobs.py); the two named
    here are the ones these methods read by name."""

    precision: Precision
    delete_passes: tuple[str, ...]
    __dataclass_fields__: ClassVar[dict[str, Any]]  # a dataclass, as each configuration is

    def __post_init__(self) -> None:
        """Its precision a Precision and its passes a tuple, however they were given (JSON gives a list)."""
        object.__setattr__(self, "precision", Precision(self.precision))
        object.__setattr__(self, "delete_passes", tuple(self.delete_passes))

    @classmethod
    def of_service(cls, facts: Probed) -> Self:
        """The service's configuration as a CPU predictor runs it: what it leaves unset is Paddle's default
        (oneDNN's, the one the probed Paddle says it turns on)."""
        service = facts.service
        onednn_default = facts.paddle.mkldnn_default_on if facts.paddle.mkldnn_default_on is not None else True
        values = {field.name: field.from_service(service) for field in PREDICTOR_FIELDS if field.from_service is not None}
        values["onednn"] = onednn_default if service.onednn is None else service.onednn
        return cls(**values)

    def vary(self, **changes: Any) -> Self:
        """This configuration with ``changes``; bf16 runs on oneDNN only, so it turns oneDNN on."""
        if changes.get("precision", self.precision) == Precision.BF16:
            changes["onednn"] = True
        return dataclasses.replace(self, **changes)

    def changes_from(self, other: Self) -> dict[str, Any]:
        """The settings in which this configuration differs from ``other``."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) != getattr(other, f.name)}

    def label(self, relative_to: Self | None = None) -> str:
        """``threads=2, oneDNN on``: only what differs from ``relative_to`` when given."""
        parts = [show(getattr(self, name)) for name, show in labels()
                 if relative_to is None or getattr(self, name) != getattr(relative_to, name)]
        return ", ".join(parts) or "same as baseline"

    def key(self) -> str:
        """The same text for equal configurations: the name a worker keeps its predictor under."""
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    def config_calls(self) -> list[Call]:
        """The Config method calls, in order, that build this configuration on the CPU."""
        return predictor_calls(self)

    def snippet(self, program: str, params: str | None) -> str:
        """Ready-to-paste Python that builds this configuration."""
        model_args = [program, params] if params else [str(program).rsplit("/", 1)[0]]
        lines = ["import paddle.inference as paddle_infer", "", f"config = {python_call('paddle_infer.Config', model_args)}"]
        lines += [f"config.{python_call(method, args)}" for method, args in self.config_calls()]
        lines.append("predictor = paddle_infer.create_predictor(config)")
        return "\n".join(lines) + "\n"
