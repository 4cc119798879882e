"""The service's settings from every place that states them, and where each came from: one function.

Precedence: flags > ``--config`` > the service's record of what it runs (``paddle-doctor record``)
> the launcher that starts the service (gunicorn's workers, from its command line, ``GUNICORN_CMD_ARGS`` or
``gunicorn.conf.py``: the instances) > the source (``--source``, or the script of ``--pid``) > Paddle's defaults. The process enters through the source: a setting read from
``os.environ.get(NAME, default)`` takes the live value from the process's environment.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any, TypeVar

from ..base.redact import redact_text
from ..base.serde import DecodeError, decode_as, field_types, load_yaml_file
from ..base.vocabulary import Origin
from ..facts import SourceFacts
from ..facts.launcher import LauncherKnob
from ..facts.predictor import ServiceConfig, TensorRTSettings
from ..facts.service_config import SettingOrigin
from .config import KEYS_HINT, ServiceConfigError, ServiceOptions, service_from_data, validate_service
from .sources import source_origins

NO_OPTIONS = ServiceOptions()
PRECEDENCE = (Origin.SOURCE, Origin.LAUNCHER, Origin.RECORD, Origin.CONFIG, Origin.FLAG)  # each over the ones before it
D = TypeVar("D", ServiceConfig, TensorRTSettings)


def resolve_service(options: ServiceOptions = NO_OPTIONS, source: SourceFacts | None = None, *,
                    base: ServiceConfig | None = None, environ_source: str | None = None,
                    recorded: Iterable[SettingOrigin] = ()) -> tuple[ServiceConfig, list[SettingOrigin]]:
    """The service settings over ``base`` (Paddle's defaults when None), and the origin of each one that is not
    Paddle's default.

    Raises ServiceConfigError for a --config file or flags the doctor cannot use; a source value
    that does not fit is recorded in its origin and left out."""
    service = base or ServiceConfig()
    origins: dict[str, SettingOrigin] = {}
    service = _over_source(service, origins, source or SourceFacts(), environ_source)
    service = _over_launcher(service, origins, source or SourceFacts())
    for origin in recorded:
        service = with_setting(service, origin.name, origin.value)
        origins[origin.name] = origin
    if options.config:
        service = _over_config_file(service, origins, options.config)
    service = _over_flags(service, origins, options)
    validate_service(service, _stated_by(origins.values()))
    return service, [origins[name] for name in sorted(origins)]


def _over_source(service: ServiceConfig, origins: dict[str, SettingOrigin], source: SourceFacts,
                 environ_source: str | None) -> ServiceConfig:
    """``service`` with the settings the source states, each origin put in ``origins``; a value that does
    not fit is left out, its origin saying so."""
    for origin in source_origins(source, environ_source):
        if origin.value is not None:
            fitted = _fitted(service, origin.name, origin.value)
            if fitted is None:
                origin = SettingOrigin(origin.name, None, Origin.SOURCE, f"{origin.detail}; the value {origin.value!r} does not fit, not used")
            else:
                service = fitted
        origins[origin.name] = origin
    return service


def _over_launcher(service: ServiceConfig, origins: dict[str, SettingOrigin], source: SourceFacts) -> ServiceConfig:
    """``service`` with the instances the launcher starts (its workers: each runs the service's code, its own
    predictors), the origin put in ``origins``; a count the doctor cannot read stands as an origin without a value."""
    workers = source.launcher.setting(LauncherKnob.WORKERS) if source.launcher is not None else None
    if workers is None:
        return service
    detail = f"{source.launcher.launcher if source.launcher else 'the launcher'}'s workers: {workers.detail}"
    fitted = _fitted(service, "instances", workers.value) if isinstance(workers.value, int) and workers.value > 0 else None
    origins["instances"] = SettingOrigin("instances", workers.value if fitted is not None else None, Origin.LAUNCHER, detail)
    return fitted or service


def _over_config_file(service: ServiceConfig, origins: dict[str, SettingOrigin], path: str) -> ServiceConfig:
    """``service`` with the settings of the ``--config`` file, each origin put in ``origins``."""
    config = load_yaml_file(path, ServiceConfigError, "service config", KEYS_HINT) or {}
    service_from_data(config, path)
    for name, value in _flatten(config):
        value = redact_text(value) if isinstance(value, str) else value  # a model URL with its credentials
        service = with_setting(service, name, value)
        origins[name] = SettingOrigin(name, value, Origin.CONFIG, path)
    return service


def _over_flags(service: ServiceConfig, origins: dict[str, SettingOrigin], options: ServiceOptions) -> ServiceConfig:
    """``service`` with the settings the flags give (``options``' fields given, in the order the origins name them),
    each origin put in ``origins`` with the flag as typed (``--threads``, ``--no-onednn``); a flag that differs from
    what the service's record says it runs says both."""
    for field in dataclasses.fields(options):
        value = getattr(options, field.name)
        if field.name == "config" or value is None:
            continue
        flag = SettingOrigin(field.name, value, Origin.FLAG, f"--no-{field.name}" if value is False else f"--{field.name}")
        service = with_setting(service, flag.name, flag.value)
        before = origins.get(flag.name)
        if before is not None and before.origin == Origin.RECORD and before.value != flag.value:  # the flag is judged, not what runs
            flag = dataclasses.replace(flag, detail=f"{flag.detail}: judged as {flag.value}; the service runs {before.value} "
                                                    f"({before.origin}: {before.detail})")
        origins[flag.name] = flag
    return service


def _stated_by(origins: Iterable[SettingOrigin]) -> str:
    """What states the settings, as an error about them names it: the files (or the service), and the flags."""
    said = [origin for origin in origins if origin.value is not None]
    files = sorted({origin.detail if origin.origin == Origin.CONFIG else origin.origin for origin in said if origin.origin != Origin.FLAG})
    flags_given = [origin.detail for origin in said if origin.origin == Origin.FLAG]
    what = " and ".join(files) or "the service"
    return f"{what} with {', '.join(flags_given)}" if flags_given else what


def predictor_view(service: ServiceConfig, origins: list[SettingOrigin],
                   own: list[SettingOrigin]) -> tuple[ServiceConfig, list[SettingOrigin]]:
    """The service as one recorded predictor runs it: ``service`` and its ``origins`` (as resolved, the busiest
    predictor's record deciding where it does) with that predictor's own recorded settings ``own`` where nothing
    above the record says otherwise; a setting another predictor's record decides and this one's leaves unsaid
    is Paddle's default for it."""
    winning = {origin.name: origin for origin in origins}
    below = PRECEDENCE[:PRECEDENCE.index(Origin.RECORD) + 1]
    mine = {origin.name: origin for origin in own}
    taken = {name: origin for name, origin in mine.items() if winning.get(name) is None or winning[name].origin in below}
    unsaid = {name for name, origin in winning.items() if origin.origin == Origin.RECORD and name not in mine}
    values = {name: _default(name) for name in unsaid} | {name: origin.value for name, origin in taken.items()}
    view = {name: origin for name, origin in {**winning, **taken}.items() if name not in unsaid}
    return with_settings(service, values), [view[name] for name in sorted(view)]


def _default(name: str) -> Any:
    value: Any = ServiceConfig()
    for part in name.split("."):
        value = getattr(value, part)
    return value


def with_setting(settings: D, name: str, value: Any) -> D:
    """``settings`` (a ServiceConfig, or a section of it) with the setting ``name`` (``tensorrt.enabled``
    for a nested one) set to ``value``, decoded as its field's type; DecodeError when it does not fit."""
    head, _, rest = name.partition(".")
    types = field_types(type(settings))
    if head not in types:
        raise DecodeError(f"service: unknown field {name!r}")
    if rest:
        return dataclasses.replace(settings, **{head: with_setting(getattr(settings, head), rest, value)})
    return dataclasses.replace(settings, **{head: decode_as(types[head], value, f"service.{name}")})


def with_settings(service: ServiceConfig, values: Mapping[str, Any]) -> ServiceConfig:
    """``service`` with the settings ``values`` names (``tensorrt.enabled`` for a nested one) set."""
    for name, value in values.items():
        service = with_setting(service, name, value)
    return service


def merge_origins(recorded: list[SettingOrigin], newer: list[SettingOrigin]) -> list[SettingOrigin]:
    """Recorded origins (``check --facts``) with the ones flags and --config give now taking their place."""
    merged = {origin.name: origin for origin in recorded}
    merged.update({origin.name: origin for origin in newer})
    return [merged[name] for name in sorted(merged)]


def _fitted(service: ServiceConfig, name: str, value: Any) -> ServiceConfig | None:
    """``service`` with the source's value of ``name``, or None when that value does not fit it."""
    try:
        trial = with_setting(service, name, value)
        validate_service(trial, "source")
    except (DecodeError, ServiceConfigError):
        return None
    return trial


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items = []
    for key, value in data.items():
        if isinstance(value, dict):
            items.extend(_flatten(value, f"{prefix}{key}."))
        else:
            items.append((f"{prefix}{key}", value))
    return items
