"""Where each wanted change is made: at the origin of its setting. A flag is the user's to change; ``--config``
is its YAML key; a predictor a known wrapper builds takes the wrapper's keyword (or its YAML key) at the
service's own call; the service's Config calls take the new value, or a new call after the Config is built;
a value read from an environment variable is set where the environment is (``--dockerfile``, ``--manifest``).
A file inside an installed package is never edited."""

from __future__ import annotations

import ast
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any

from ..base.vocabulary import Origin
from ..facts import Facts, SourceSetting
from ..facts.knobs import Knob, knob
from ..facts.launcher import Launcher, LauncherKnob
from ..facts.recorded import RecordedPredictor
from ..judge.wrapper_fix import wrapper_changes, wrapper_of, wrapper_setting
from ..service.sources import source_predictors
from .plan import Wanted, said
from .python_edit import insert_after_config, parsed, set_assignment, set_by_call, set_keywords
from .text import EditRefused, FixRefused, TextEdit

Read = Callable[[str], str]  # a file's text, read once for the whole fix (and checked again before writing)
PACKAGE_FOLDERS = ("site-packages", "dist-packages")
WORKER_FLAGS = {Launcher.GUNICORN: "-w", Launcher.CELERY: "--concurrency"}  # a launcher's flag for its workers, where not --workers


@dataclass(frozen=True)
class Targets:
    """The files named for the fix besides the source: the service's --config, its Dockerfile and its
    Kubernetes manifest (with the container, where the manifest runs several)."""

    config: str | None = None
    dockerfile: str | None = None
    manifest: str | None = None
    container: str | None = None


@dataclass(frozen=True)
class Placed:
    """A wanted change and its edits, file by file; ``refused`` says why it has none (one line)."""

    wanted: Wanted
    edits: list[tuple[str, TextEdit]]
    refused: str | None = None


def place_all(facts: Facts, wanted: list[Wanted], targets: Targets, read: Read) -> list[Placed]:
    """Each change placed; where several add text at one point of one file (two calls added after one
    ``config = Config(...)``), each change's insertion there is all of them, in the plan's order, so that they
    are one edit with every change's why and none conflicts with another."""
    placed = [place(facts, one, targets, read) for one in wanted]
    inserted: dict[tuple[str, int], list[str]] = {}
    for one in placed:
        for path, edit in one.edits:
            if edit.start == edit.end:
                texts = inserted.setdefault((os.path.abspath(path), edit.start), [])
                if edit.replacement not in texts:
                    texts.append(edit.replacement)

    def joined(path: str, edit: TextEdit) -> TextEdit:
        texts = inserted.get((os.path.abspath(path), edit.start), []) if edit.start == edit.end else []
        return replace(edit, replacement="".join(texts)) if len(texts) > 1 else edit

    return [replace(one, edits=[(path, joined(path, edit)) for path, edit in one.edits]) for one in placed]


def place(facts: Facts, wanted: Wanted, targets: Targets, read: Read) -> Placed:
    try:
        return Placed(wanted, _edits(facts, wanted, targets, read))
    except (EditRefused, FixRefused) as exc:  # a file it cannot read or edit: this change is not made, the rest goes on
        return Placed(wanted, [], str(exc))


def _edits(facts: Facts, wanted: Wanted, targets: Targets, read: Read) -> list[tuple[str, TextEdit]]:
    origin = next((one for one in facts.service_origins if one.name == wanted.setting), None)
    if origin is not None and origin.origin == Origin.FLAG:
        raise EditRefused(f"{wanted.setting} is given on the command line ({origin.detail}); it is no file's: "
                          f"run the service with {said(wanted.value)} and pass that instead")
    if origin is not None and origin.origin == Origin.CONFIG and targets.config:
        return _in_config(wanted, targets.config, read)
    if origin is not None and origin.origin == Origin.LAUNCHER:
        return _in_launcher(facts, wanted, read)
    predictors = _predictors(facts)
    built = wrapper_of(predictors) if predictors else None
    if built is not None:
        return _in_wrapper(facts, wanted, predictors, read)
    about = source_ids(facts, wanted.predictors)
    settings = [setting for setting in facts.service_source.settings
                if setting.name == wanted.setting and own_file(setting.location.file)
                and (not about or set(setting.predictors) & about)]
    if settings:
        return [edit for setting in settings for edit in _at_setting(setting, wanted, targets, read)]
    return _added(facts, wanted, targets, read)


def source_ids(facts: Facts, predictors: tuple[int, ...]) -> set[int]:
    """The ids of the source's predictors (its Configs) that ``predictors`` name: the same ids where no record was
    read; where one was, the recorded predictors' own ids, each matched to the Configs built in the file and function
    where the record saw it built (none matched: an empty set, and the change is not narrowed)."""
    record = facts.service_record
    if not predictors or record is None or not record.read:
        return set(predictors)
    sites = {(os.path.realpath(p.origin.builder.file), p.origin.builder.function) for p in record.predictors
             if p.id in predictors and p.origin.builder is not None}
    return {source.id for source in facts.service_source.predictors
            if (os.path.realpath(source.location.file), (source.function or "<module>").rsplit(".", 1)[-1]) in sites}


def own_file(path: str) -> bool:
    """A file of the service's own code, not of an installed distribution."""
    return not any(folder in path.split(os.sep) for folder in PACKAGE_FOLDERS)


def _value(value: Any) -> Any:
    return value.value if isinstance(value, Enum) else value


def _in_config(wanted: Wanted, config: str, read: Read) -> list[tuple[str, TextEdit]]:
    from .yaml_edit import set_key

    return [(config, edit) for edit in set_key(read(config), tuple(wanted.setting.split(".")), _value(wanted.value), wanted.why, config)]


def _at_setting(setting: SourceSetting, wanted: Wanted, targets: Targets, read: Read) -> list[tuple[str, TextEdit]]:
    """The call that makes ``setting`` made to say the wanted value; a value from the environment set where it is."""
    if setting.env_var:
        return _in_environment(setting, wanted, targets, read)
    path = setting.location.file
    return [(path, edit) for edit in set_by_call(read(path), path, setting.location.line, knob(wanted.setting), wanted.value, wanted.why)]


def _in_environment(setting: SourceSetting, wanted: Wanted, targets: Targets, read: Read) -> list[tuple[str, TextEdit]]:
    name, value = setting.env_var or "", str(_value(wanted.value))
    if isinstance(wanted.value, bool):
        value = "1" if wanted.value else "0"
    found: list[tuple[str, TextEdit]] = []
    if targets.dockerfile:
        from .dockerfile import set_env

        found += [(targets.dockerfile, edit) for edit in set_env(read(targets.dockerfile), name, value, wanted.why, targets.dockerfile)]
    if targets.manifest:
        from .manifest import set_container_env

        found += [(targets.manifest, edit) for edit in
                  set_container_env(read(targets.manifest), name, value, wanted.why, targets.manifest, targets.container)]
    if not (targets.dockerfile or targets.manifest):
        raise EditRefused(f"{setting.location}: {wanted.setting} is read from ${name}; set {name}={value} where the service's "
                          "environment is set (--dockerfile FILE or --manifest FILE edits it there)")
    return found


def _added(facts: Facts, wanted: Wanted, targets: Targets, read: Read) -> list[tuple[str, TextEdit]]:
    """A new call of the setting's setter after each Config the service's own code builds (those the change is about)."""
    about = source_ids(facts, wanted.predictors)
    built = [predictor for predictor in facts.service_source.predictors if predictor.package is None
             and own_file(predictor.location.file) and (not about or predictor.id in about)]
    if not built:
        if targets.config:
            return _in_config(wanted, targets.config, read)
        raise EditRefused(f"nothing read says where the service builds its Config, to set {wanted.setting} "
                          "there; give its code with --source (or its --config)")
    calls = _calls(knob(wanted.setting), wanted.value)
    return [(predictor.location.file, edit) for predictor in built
            for edit in insert_after_config(read(predictor.location.file), predictor.location.file, predictor.location.line,
                                            calls, wanted.why)]


def _in_launcher(facts: Facts, wanted: Wanted, read: Read) -> list[tuple[str, TextEdit]]:
    """The launcher's worker count where its configuration file assigns it; where its command line or environment
    gives it, the words to change it there (no file of the service's says it)."""
    launcher = facts.service_source.launcher
    workers = launcher.setting(LauncherKnob.WORKERS) if launcher is not None else None
    if launcher is None or workers is None or wanted.setting != "instances":
        raise EditRefused(f"{wanted.setting} comes from the launcher, which sets no such thing paddle-doctor edits")
    if workers.file is None or workers.line is None:
        raise EditRefused(f"{launcher.launcher}'s workers come from {workers.detail}: set {said(wanted.value)} workers there "
                          f"({WORKER_FLAGS.get(launcher.launcher, '--workers')} {said(wanted.value)})")
    path = workers.file
    return [(path, edit) for edit in set_assignment(read(path), path, workers.line, "workers", wanted.value, wanted.why)]


def _calls(row: Knob, value: Any) -> list[tuple[str, list[Any]]]:
    """The setter call that sets ``row`` to ``value``: the one that does by being called, else the first taking it."""
    fixed = next((setter for setter in row.setters if setter.argument is None and setter.fixed == value), None)
    if fixed is not None:
        return [(fixed.method, [])]
    taking = next((setter for setter in row.setters if setter.argument is not None and setter.argument.position == 0), None)
    if taking is None:
        raise EditRefused(f"{row.name} {said(value)} has no Config call of its own to add; set it as the rule's fix says")
    return [(taking.method, [value])]


def _predictors(facts: Facts) -> list[RecordedPredictor]:
    record = facts.service_record
    if record is not None and record.read and record.predictors:
        return list(record.predictors)
    return source_predictors(facts.service_source)


def _in_wrapper(facts: Facts, wanted: Wanted, predictors: list[RecordedPredictor], read: Read) -> list[tuple[str, TextEdit]]:
    """The wrapper's own setting at the service's call of it: its YAML key where the call names its file and the
    file has the key, else its keyword; never the wrapper's installed code."""
    found = wrapper_of(predictors)
    assert found is not None
    wrapper, frame = found
    setting = wrapper_setting(wanted.setting, wanted.value)
    if setting is None or setting not in wrapper.settings:
        raise EditRefused(f"{wrapper.name} builds the predictor ({frame.where()}) and has no setting of its own for "
                          f"{wanted.setting}; its installed code is not edited")
    changes = wrapper_changes(wrapper, setting, wanted.value)
    callers = [predictor.origin.service for predictor in predictors if predictor.origin.service is not None
               and own_file(predictor.origin.service.file)]
    if not callers:
        raise EditRefused(f"{wrapper.name} builds the predictor ({frame.where()}) from a call paddle-doctor did not find in "
                          f"the service's own code; change {setting} there: {changes[0].code}")
    edits: list[tuple[str, TextEdit]] = []
    for caller in {(one.file, one.line): one for one in callers}.values():
        edits += _wrapper_call(read, caller.file, caller.line, changes, wanted)
    return edits


def _wrapper_call(read: Read, path: str, line: int, changes: list[Any], wanted: Wanted) -> list[tuple[str, TextEdit]]:
    python = next((change for change in changes if change.kind == "python"), None)
    template = ast.parse(python.code, mode="eval").body if python is not None else None
    yaml_change = next((change for change in changes if change.kind == "yaml"), None)
    if yaml_change is not None and isinstance(template, ast.Call):
        config_file = _config_path_passed(read(path), path, line)
        if config_file is not None:
            from .yaml_edit import has_key, set_key_everywhere

            key = yaml_change.code.split(":", 1)[0].strip()
            edits = set_key_everywhere(read(config_file), key, _value(wanted.value), wanted.why, config_file)
            if edits or has_key(read(config_file), key, config_file):
                return [(config_file, edit) for edit in edits]
    if not isinstance(template, ast.Call):
        raise EditRefused(f"{path}:{line}: the wrapper's setting is not a keyword of its call; change it as its fix says")
    callee = template.func.id if isinstance(template.func, ast.Name) else ast.unparse(template.func).rsplit(".", 1)[-1]
    keywords = {item.arg: ast.unparse(item.value) for item in template.keywords if item.arg}
    return [(path, edit) for edit in set_keywords(read(path), path, line, callee, keywords, wanted.why)]


def _config_path_passed(text: str, path: str, line: int) -> str | None:
    """The YAML file the call at ``line`` names with ``config_path='...'`` (a literal), beside the calling file (where
    the service runs from its own folder); refused inside an installed package."""
    for node in ast.walk(parsed(text, path)):
        if isinstance(node, ast.Call) and node.lineno <= line <= (node.end_lineno or node.lineno):
            for item in node.keywords:
                if item.arg == "config_path" and isinstance(item.value, ast.Constant) and isinstance(item.value.value, str):
                    named = item.value.value
                    found = named if os.path.isabs(named) else os.path.join(os.path.dirname(path), named)
                    if not own_file(os.path.realpath(found)):
                        raise EditRefused(f"{path}:{line}: config_path={named!r} is a file of an installed package "
                                          f"({found}); expected the service's own YAML, which paddle-doctor edits")
                    return found
    return None
