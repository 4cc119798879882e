"""The service's settings from every place that states them, and where each came from.

Precedence: flags > ``--config`` > the service's record of what it runs (``paddle-doctor record``)
> the source (``--source``, or the script of ``--pid``) > Paddle's defaults. The process enters through the source: a setting read from
``os.environ.get(NAME, default)`` takes the live value from the process's environment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .facts import Facts, ServiceConfig, ServiceProcessFacts, SettingOrigin, SourceFacts, SourceLocation, SourceSetting
from .redact import REDACTED, redact_text
from .serde import DecodeError, from_data, load_yaml_file, to_data
from .vocabulary import BuiltBy, Origin

if TYPE_CHECKING:
    from .record.document import RecordedPredictor
from .service import ServiceConfigError, service_from_data, validate_service

FLAG_NAMES = {"onednn": ("--onednn", "--no-onednn")}
SERVICE_FLAGS = ("threads", "instances", "onednn", "precision", "concurrency", "layout")


def service_from_options(options: dict[str, Any], base: ServiceConfig | None = None, source: SourceFacts | None = None,
                         environ_source: str | None = None,
                         recorded: list[SettingOrigin] | None = None) -> tuple[ServiceConfig, list[SettingOrigin]]:
    """The service as a command's options describe it (``service_config`` and the service flags that
    were given), over ``base``: the one service builder of ``check``, ``facts``, ``baseline`` and ``healthcheck``."""
    flags = {name: options[name] for name in SERVICE_FLAGS if options.get(name) is not None}
    return resolve_service(base, options.get("service_config"), flags, source or SourceFacts(), environ_source, recorded)


def resolve_service(base: ServiceConfig | None, config_path: str | None, flags: dict[str, Any],
                    source: SourceFacts, environ_source: str | None = None,
                    recorded: list[SettingOrigin] | None = None) -> tuple[ServiceConfig, list[SettingOrigin]]:
    """The service settings and the origin of each one that is not Paddle's default.

    Raises ServiceConfigError for a --config file or flags the doctor cannot use; a source value
    that does not fit is recorded in its origin and left out."""
    data = to_data(base or ServiceConfig())
    origins: dict[str, SettingOrigin] = {}
    for origin in source_origins(source, environ_source):
        if origin.value is not None and not _fits(data, origin.name, origin.value):
            origin = SettingOrigin(origin.name, None, Origin.SOURCE, f"{origin.detail}; the value {origin.value!r} does not fit, not used")
        if origin.value is not None:
            _set(data, origin.name, origin.value)
        origins[origin.name] = origin
    for origin in recorded or ():
        _set(data, origin.name, origin.value)
        origins[origin.name] = origin
    if config_path:
        config = load_yaml_file(config_path, ServiceConfigError, "service config", "see doctor/service.py for the keys") or {}
        service_from_data(config, config_path)
        for name, value in _flatten(config):
            value = redact_text(value) if isinstance(value, str) else value  # a model URL with its credentials
            _set(data, name, value)
            origins[name] = SettingOrigin(name, value, Origin.CONFIG, config_path)
    for name, value in flags.items():
        _set(data, name, value)
        shown = FLAG_NAMES.get(name, (f"--{name}", f"--{name}"))[value is False]
        before = origins.get(name)
        if before is not None and before.origin == Origin.RECORD and before.value != value:  # the flag is judged, not what runs
            shown = f"{shown}: judged as {value}; the service runs {before.value} ({before.origin}: {before.detail})"
        origins[name] = SettingOrigin(name, value, Origin.FLAG, shown)
    service = from_data(ServiceConfig, data, "service")
    said = [origin for origin in origins.values() if origin.value is not None]
    files = sorted({origin.detail if origin.origin == Origin.CONFIG else origin.origin for origin in said if origin.origin != Origin.FLAG})
    flags_given = [origin.detail for origin in said if origin.origin == Origin.FLAG]
    what = " and ".join(files) or "the service"
    validate_service(service, f"{what} with {', '.join(flags_given)}" if flags_given else what)
    return service, [origins[name] for name in sorted(origins)]


def source_origins(source: SourceFacts, environ_source: str | None = None) -> list[SettingOrigin]:
    """One origin per setting the source makes; a setting made in several places counts only where they all agree."""
    by_name: dict[str, list[SourceSetting]] = {}
    for setting in source.settings:
        by_name.setdefault(setting.name, []).append(setting)
    return [_origin(name, settings, environ_source) for name, settings in sorted(by_name.items())]


def _origin(name: str, settings: list[SourceSetting], environ_source: str | None) -> SettingOrigin:
    if any(setting.conditional for setting in settings):
        return SettingOrigin(name, None, Origin.SOURCE, f"depends on a branch the source alone does not settle: {branches(settings)}")
    unknown = [setting for setting in settings if not setting.evaluated]
    if unknown:
        first = unknown[0]
        if first.host_cpu_count:
            why = "os.cpu_count(), the host's CPUs (not the container's quota)"
        elif first.env_var and first.env_live and REDACTED in first.env_live:
            why = f"{first.env_var}, whose live value looks like a secret and was redacted"
        else:
            why = "an expression the doctor cannot evaluate"
        return SettingOrigin(name, None, Origin.SOURCE, f"set at {first.location} from {why}: {first.code}")
    values = {repr(setting.value) for setting in settings}
    if len(values) > 1:
        places = ", ".join(f"{setting.location} ({setting.value!r})" for setting in settings)
        return SettingOrigin(name, None, Origin.SOURCE, f"set to different values at {places}")
    setting = settings[-1]
    return SettingOrigin(name, setting.value, Origin.SOURCE, describe_setting(setting, environ_source))


def branches(settings: list[SourceSetting]) -> str:
    """What each branch sets: ``'gpu' if args.use_gpu (app.py:12); 'cpu' if not (args.use_gpu) (app.py:14)``."""
    parts = []
    for setting in settings:
        value = repr(setting.value) if setting.evaluated else f"`{setting.code}`"
        parts.append(f"{value} if {setting.condition} ({setting.location})" if setting.conditional
                     else f"{value} ({setting.location})")
    return "; ".join(parts)


def describe_setting(setting: SourceSetting, environ_source: str | None = None) -> str:
    """``app.py:12 config.set_cpu_math_library_num_threads(THREADS); INFER_THREADS (default 6, live 3 in /proc/9/environ)``."""
    text = f"{setting.location} {setting.code}"
    if setting.env_var:
        parts = [f"default {setting.env_default}" if setting.env_default is not None else "no default"]
        if setting.env_live is not None:
            parts.append(f"live {setting.env_live}" + (f" in {environ_source}" if environ_source else ""))
        elif environ_source:
            parts.append(f"not set in {environ_source}")
        text += f"; from {setting.env_var} ({', '.join(parts)})"
    return text


def with_settings(service: ServiceConfig, values: dict[str, Any]) -> ServiceConfig:
    """``service`` with the settings ``values`` names (``tensorrt.enabled`` for a nested one) set."""
    data = to_data(service)
    for name, value in values.items():
        _set(data, name, value)
    return from_data(ServiceConfig, data, "service")


def _flatten(data: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    items = []
    for key, value in data.items():
        if isinstance(value, dict):
            items.extend(_flatten(value, f"{prefix}{key}."))
        else:
            items.append((f"{prefix}{key}", value))
    return items


def _set(data: dict[str, Any], name: str, value: Any) -> None:
    *parents, last = name.split(".")
    for parent in parents:
        data = data[parent]
    data[last] = value


def _fits(data: dict[str, Any], name: str, value: Any) -> bool:
    trial = to_data(from_data(ServiceConfig, data, "service"))
    _set(trial, name, value)
    try:
        validate_service(from_data(ServiceConfig, trial, "service"), "source")
    except (DecodeError, ServiceConfigError):
        return False
    return True


def source_predictors(source: SourceFacts) -> list[RecordedPredictor]:
    """Each Config the source builds as a predictor of ``service.predictors[]``, the list the record
    fills: built by ``source``, where it is built and the service's call that leads there; its
    configuration is null, for the source's settings that name its id say it, branch by branch."""
    from .record.document import BuildSite, Frame, RecordedPredictor, RunStats

    def frame(location: SourceLocation, function: str | None) -> Frame:
        return Frame(location.file, location.line, function or "<module>")

    def threads_set_at(number: int) -> Frame | None:
        made = [setting for setting in source.settings if setting.name == "threads" and number in setting.predictors]
        return frame(made[0].location, made[0].function) if len(made) == 1 and not made[0].conditional else None

    return [RecordedPredictor(
        id=predictor.id, built_by=BuiltBy.SOURCE, config=None, model=None,
        origin=BuildSite(builder=frame(predictor.location, predictor.function),
                         service=frame(predictor.chain[0], predictor.caller) if predictor.chain else None,
                         threads_set_at=threads_set_at(predictor.id)),
        runs=RunStats(0, None, None, None, None, 0.0, 0.0, None, 0, [], 0), alive=False)
        for predictor in source.predictors]


def merge_origins(recorded: list[SettingOrigin], newer: list[SettingOrigin]) -> list[SettingOrigin]:
    """Recorded origins (``check --facts``) with the ones flags and --config give now taking their place."""
    merged = {origin.name: origin for origin in recorded}
    merged.update({origin.name: origin for origin in newer})
    return [merged[name] for name in sorted(merged)]


def attach_patient(facts: Facts, process: ServiceProcessFacts, source: SourceFacts, origins: list[SettingOrigin]) -> None:
    """The process and source readings into the facts. The process's CPU affinity is the service's,
    so it replaces the doctor's own where it was read."""
    facts.service_process, facts.service_source, facts.service_origins = process, source, origins
    if process.affinity_source:
        facts.process.affinity, facts.process.affinity_source = process.affinity, process.affinity_source
