"""The service's Python source, read with ``ast``: never imported, never run.

``read_source`` takes files or folders and returns SourceFacts: every ``paddle.inference.Config``
built, each setting made on it with file:line, and how the predictor is served. A file Python
cannot parse, or the doctor does not read (not a regular file, too large, nested too deeply), is one
SourceError; the other files are still read. At most MAX_FILES files are read; how many more were
found is ``left_out`` (PD-SRC-008 says so).
"""

from __future__ import annotations

import os

from ..facts import CANNOT_READ, SourceError, SourceFacts, SourceLocation
from ..inputs import SOURCE_BYTES, read_text, what_it_is
from ..service import SourceInputError
from .configs import read_configs
from .evaluate import Evaluator
from .imports import ImportedFile, follow
from .module import Module
from .program import Program, module_name
from .patterns import serving_patterns
from ..vocabulary import SourceStatus

SKIPPED_FOLDERS = {"__pycache__", "site-packages", "node_modules", "venv"}
MAX_FILES = 2000


def read_source(paths: list[str], environ: dict[str, str] | None = None, search: list[str] | None = None) -> SourceFacts:
    """``environ``: the service process's environment (--pid), for the live value of variables the source reads.
    ``search``: where the service's interpreter finds modules (--pid): the modules the files import
    are read too, within the bounds of ``imports.follow``, and the files read are one program."""
    found = python_files(paths)
    facts = SourceFacts(status=SourceStatus.READ, paths=list(paths), left_out=max(0, len(found) - MAX_FILES))
    modules: dict[str, Module] = {}

    def parse(file: str) -> Module | None:
        if file in facts.files:
            return modules.get(file)
        facts.files.append(file)
        try:
            modules[file] = Module.parse(file, read_text(file, SOURCE_BYTES))
        except SyntaxError as exc:
            facts.errors.append(SourceError(SourceLocation(file, exc.lineno or 0), f"syntax error: {exc.msg}"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            facts.errors.append(SourceError(SourceLocation(file, getattr(exc, "lineno", None) or 0), f"{CANNOT_READ}{exc}"))
        return modules.get(file)

    given = [ImportedFile(file, _root(file, paths)) for file in found[:MAX_FILES]]
    for item in given:
        parse(item.file)
    imported = []
    if search:
        imports = follow(given, search, lambda file: getattr(parse(file), "tree", None))
        imported, facts.imports_left_out = imports.found, imports.left_out
        facts.imported = [item.file for item in imported]
    program = Program()
    for item in given + imported:
        if item.file in modules:
            program.add(modules[item.file], module_name(item.file, item.root))
    shared: dict[str, Evaluator] = {}
    for item in given + imported:
        module = modules.get(item.file)
        if module is None:
            continue
        evaluator = shared.get(module.file) or Evaluator(module, environ, program, shared)
        configs = read_configs(module, evaluator, len(facts.predictors) + 1)
        facts.configs.extend(configs.built)
        facts.predictors.extend(configs.predictors)
        facts.settings.extend(configs.settings)
        facts.patterns.extend(serving_patterns(module))
    return facts


def _root(file: str, paths: list[str]) -> str:
    """The folder module names are taken from: a file's own, or the one holding a folder given (its package)."""
    for path in paths:
        if os.path.isdir(path) and os.path.abspath(file).startswith(os.path.abspath(path) + os.sep):
            return os.path.dirname(os.path.abspath(path))
    return os.path.dirname(os.path.abspath(file))


def python_files(paths: list[str]) -> list[str]:
    """The .py files named or under the folders named, in a stable order; SourceInputError for a path that is neither."""
    files: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            if not path.endswith(".py"):
                raise SourceInputError(f"--source {path}: not a Python file; expected a .py file or a folder")
            files.append(path)
        elif os.path.isdir(path):
            files.extend(_under(path))
        elif os.path.exists(path):  # a FIFO, a device, a socket
            raise SourceInputError(f"--source {path}: is {what_it_is(os.stat(path).st_mode)}; "
                                   "expected the service's .py file or its folder")
        else:
            raise SourceInputError(f"--source {path}: no such file or folder; expected the service's .py file or its folder")
    return files


def _under(folder: str) -> list[str]:
    found = []
    for directory, folders, names in os.walk(folder):
        folders[:] = sorted(name for name in folders if not name.startswith(".") and name not in SKIPPED_FOLDERS)
        found.extend(os.path.join(directory, name) for name in sorted(names) if name.endswith(".py"))
    return found
