"""What a command's options say of the service: ``--config FILE`` and the service flags, typed,
``None`` where not given. ``check``, ``facts``, ``baseline`` and ``healthcheck`` build the service
from them through :func:`paddle_doctor.service.resolve.resolve_service` alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..vocabulary import Layout, Precision

FlagValue = str | int | bool | Layout | Precision
PidChoice = int | Literal["auto", "none"]  # --pid: a process, the one found, or none


@dataclass(frozen=True)
class ServiceOptions:
    config: str | None = None
    model: str | None = None  # --model: the model the service serves, and the one measured
    threads: int | None = None
    instances: int | None = None
    onednn: bool | None = None
    precision: Precision | None = None
    concurrency: int | None = None
    layout: Layout | None = None

    def flags(self) -> list[tuple[str, FlagValue]]:
        """The service flags given, by setting name, in the order the origins name them."""
        given: list[tuple[str, FlagValue | None]] = [
            ("model", self.model), ("threads", self.threads), ("instances", self.instances), ("onednn", self.onednn),
            ("precision", self.precision), ("concurrency", self.concurrency), ("layout", self.layout)]
        return [(name, value) for name, value in given if value is not None]


def pid_choice(text: str) -> PidChoice:
    """``--pid``: a process id, ``auto`` or ``none``; ValueError saying what was expected."""
    choice = text.strip().lower()
    if choice in ("auto", "none"):
        return "auto" if choice == "auto" else "none"
    if choice.isdigit() and int(choice) > 0:
        return int(choice)
    raise ValueError(f"{text!r} is not a process id; expected a number, auto or none")
