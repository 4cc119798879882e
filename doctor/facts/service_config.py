"""The service's declared configuration around its fields (``ServiceConfig``, written from the table of
settings into facts/predictor.py): what it means, and where each value came from (``SettingOrigin``)."""


from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.vocabulary import Layout, Origin

PADDLE_DEFAULT_THREADS = 1  # what a predictor runs where the service sets no thread count


class ServiceBehaviour:
    """What ``ServiceConfig`` does, its base: the fields named here are the table's, read by these methods."""

    threads: int | None
    instances: int
    onednn: bool | None
    layout: Layout | None

    @property
    def math_threads(self) -> int:
        """Math threads per predictor: ``threads`` when said, else Paddle's default."""
        return self.threads if self.threads is not None else PADDLE_DEFAULT_THREADS


@dataclass(frozen=True)
class SettingOrigin:
    """Where the service's value of one setting came from. ``origin``: flag, config or source;
    ``value`` is None when the source sets it in a way the doctor cannot evaluate (``detail`` says
    where and why), and then Paddle's default or a lower-precedence value stands."""

    name: str
    value: Any
    origin: Origin
    detail: str


def serving_layout(service: ServiceBehaviour) -> Layout:
    """The service's layout, or the one its instance count implies."""
    return service.layout or (Layout.PROCESSES if service.instances > 1 else Layout.LOCK)
