"""What the service's source (``--source``, or the script of ``--pid``) says of its settings, one
origin per setting, and the predictors it builds. Read with ``ast``, never run: a setting made in
a way the doctor cannot evaluate is an origin without a value that says where and why."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from ..base.redact import REDACTED
from ..base.vocabulary import BuiltBy, Origin
from ..facts import SourceFacts, SourceLocation, SourceSetting
from ..facts.service_config import SettingOrigin

if TYPE_CHECKING:
    from ..facts.recorded import RecordedPredictor


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
    """``app.py:12 config.switch_ir_optim(IR_OPTIM); IR_OPTIM (default 1, live 0 in /proc/9/environ)``: where, and the variable read."""
    text = f"{setting.location} {setting.code}"
    if setting.env_var:
        parts = [f"default {setting.env_default}" if setting.env_default is not None else "no default"]
        if setting.env_live is not None:
            parts.append(f"live {setting.env_live}" + (f" in {environ_source}" if environ_source else ""))
        elif environ_source:
            parts.append(f"not set in {environ_source}")
        text += f"; from {setting.env_var} ({', '.join(parts)})"
    return text


def source_predictors(source: SourceFacts) -> list[RecordedPredictor]:
    """Each Config the source builds as a predictor of ``service.predictors[]``, the list the record
    fills: built by ``source``, where it is built and the service's call that leads there; its
    configuration is null, for the source's settings that name its id say it, branch by branch."""
    from ..facts.recorded import BuildSite, Frame, RecordedPredictor, RunStats

    def frame(location: SourceLocation, function: str | None) -> Frame:
        return Frame(location.file, location.line, function or "<module>")

    def threads_set_at(number: int) -> Frame | None:
        made = [setting for setting in source.settings if setting.name == "threads" and number in setting.predictors]
        return frame(made[0].location, made[0].function) if len(made) == 1 and not made[0].conditional else None

    return [RecordedPredictor(
        id=predictor.id, built_by=BuiltBy.SOURCE, config=None, model=None,
        origin=BuildSite(builder=replace(frame(predictor.location, predictor.function), package=predictor.package,
                                         version=predictor.version, path=predictor.path),
                         service=frame(predictor.chain[0], predictor.caller) if predictor.chain else None,
                         threads_set_at=threads_set_at(predictor.id)),
        runs=RunStats(0, None, None, None, None, 0.0, 0.0, None, 0, [], 0), alive=False)
        for predictor in source.predictors]
