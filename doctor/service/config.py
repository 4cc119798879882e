"""The two places a command declares the service (``ServiceConfig``, whose keys
facts/service_config.py lists): its service flags (``ServiceOptions``, each a declaration with origin
``flag``), and the ``--config service.yaml`` file, checked here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..base.serde import DecodeError, from_data
from ..base.vocabulary import Layout, Precision
from ..facts.knobs import KNOBS
from ..facts.predictor import ServiceConfig

POSITIVE = tuple(row.name for row in KNOBS if row.positive)  # the counts: at least 1
KEYS_HINT = "see doctor/facts/service_config.py for the keys"

@dataclass(frozen=True)
class ServiceOptions:
    """What a command's options declare of the service: ``--config FILE`` and the service flags,
    typed, ``None`` where not given. ``check``, ``facts``, ``baseline`` and ``healthcheck`` build the
    service from them through :func:`paddle_doctor.service.resolve.resolve_service` alike."""

    config: str | None = None
    model: str | None = None  # --model: the model the service serves, and the one measured
    threads: int | None = None
    instances: int | None = None
    onednn: bool | None = None
    precision: Precision | None = None
    concurrency: int | None = None
    layout: Layout | None = None


class ServiceConfigError(ValueError):
    """A service config that cannot be used; names the file and the field."""


def service_from_data(data: Any, source: str) -> ServiceConfig:
    try:
        service = from_data(ServiceConfig, data, "service")
    except DecodeError as exc:
        raise ServiceConfigError(f"{source}: {exc}") from None
    validate_service(service, source)
    return service


def validate_service(service: ServiceConfig, source: str) -> None:
    def fail(field: str, message: str) -> ServiceConfigError:
        return ServiceConfigError(f"{source}: field '{field}' {message}")

    for name in POSITIVE:
        value = getattr(service, name)
        if value is not None and value < 1:
            raise fail(name, f"is {value}; expected a whole number of at least 1")
    if service.warmup_runs is not None and service.warmup_runs < 0:
        raise fail("warmup_runs", f"is {service.warmup_runs}; expected 0 or more")
    if service.layout is not None and service.layout.single_predictor and service.instances > 1:
        raise fail("layout", f"is {service.layout.value!r}, one predictor, but instances is {service.instances}; "
                             "use processes, clone or pool for several predictors")


