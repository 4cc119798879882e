"""The YAML and JSON files a module opens by a path relative to itself
(``Path(__file__).parent / "config.yaml"``), read for the values the service passes to its Config.

Only a path built from the module's own ``__file__`` that stays inside the module's folder is read,
through the doctor's bounded reading (a regular file, at most YAML_BYTES), its text redacted; a file
that is missing, refused or not valid is no value (the doctor never guesses)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from ..base.redact import redact_recorded
from ..base.serde import load_json_file, load_yaml_file

LOADERS = {"yaml.safe_load": "yaml", "yaml.load": "yaml", "yaml.full_load": "yaml", "json.load": "json"}
OPENERS = ("open", "io.open", "codecs.open")
PATH_FUNCTIONS = ("os.path.join", "os.path.dirname", "os.path.abspath", "os.path.realpath", "os.path.normpath")
PATH_CLASSES = ("pathlib.Path", "Path", "pathlib.PurePath", "pathlib.PosixPath")
PATH_METHODS = ("resolve", "absolute", "expanduser")


@dataclass(frozen=True)
class ModulePath:
    """A path built from a module's own ``__file__``; ``as_path`` when it is a ``pathlib`` object;
    ``base`` the folder of that module, the only one a file is read from."""

    path: str
    as_path: bool = False
    base: str = ""

    def __truediv__(self, other: Any) -> ModulePath:
        return self.moved(os.path.join(self.path, str(other)), True)

    def moved(self, path: str, as_path: bool | None = None) -> ModulePath:
        return ModulePath(path, self.as_path if as_path is None else as_path, self.base)

    @classmethod
    def of_module(cls, file: str) -> ModulePath:
        return cls(file, False, os.path.dirname(os.path.abspath(file)))


class _Unreadable(ValueError):
    pass


def path_function(name: str, values: list[Any]) -> ModulePath | None:
    """``os.path.join(...)`` and the like on module paths (and text); None for anything else."""
    if not values or not isinstance(values[0], ModulePath) or not all(isinstance(v, (ModulePath, str)) for v in values):
        return None
    texts = [v.path if isinstance(v, ModulePath) else v for v in values]
    if name == "os.path.join":
        return values[0].moved(os.path.join(*texts), False)
    if len(texts) != 1:
        return None
    return values[0].moved(os.path.dirname(texts[0]) if name == "os.path.dirname" else os.path.normpath(texts[0]), False)


def path_attribute(value: Any, attribute: str) -> ModulePath | None:
    """``path.parent`` of a module path (``resolve()`` and the like are the path itself)."""
    if isinstance(value, ModulePath) and value.as_path:
        if attribute == "parent":
            return value.moved(os.path.dirname(os.path.normpath(value.path)))
        if attribute in PATH_METHODS:
            return value
    return None


def load(path: Any, kind: str) -> Any:
    """The document at a module path inside the folder of the module it is built from, redacted; None when not read."""
    if not isinstance(path, ModulePath) or not path.base:
        return None
    folder = PurePosixPath(os.path.normpath(path.base))
    target = PurePosixPath(os.path.normpath(os.path.abspath(path.path)))
    if target != folder and folder not in target.parents:
        return None
    try:
        if kind == "json":
            return load_json_file(str(target), _Unreadable, "JSON", "")
        return redact_recorded(load_yaml_file(str(target), _Unreadable, "YAML", ""))
    except _Unreadable:
        return None

