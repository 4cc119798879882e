"""The service's Python source, read with ``ast``: never imported, never run.

``read_source`` takes files or folders and returns SourceFacts: every ``paddle.inference.Config``
built, each setting made on it with file:line, and how the predictor is served. A file Python
cannot parse, or the doctor does not read (not a regular file, too large, nested too deeply), is one
SourceError; the other files are still read. A file is read once, by the first name met
(a link to it, a package linked into itself, are the same module); an entry of a folder searched
that cannot be looked at (a link to itself) is a SourceError too. Folders are searched as they are read, in a stable
order, and the read stops, said in ``stopped`` (PD-SRC-008 says so), at the file past MAX_FILES or
when SOURCE_SECONDS have passed. The search never enters /proc, /sys or /dev (nor a mount of
theirs elsewhere), follows no link to a folder and enters no folder twice.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import replace

from ..base.inputs import SOURCE_BYTES, read_text, what_it_is
from ..base.vocabulary import SourceStatus, SourceStop
from ..facts import CANNOT_READ, SourceError, SourceFacts, SourceLocation, SourcePattern, SourcePredictor, SourceSetting
from ..facts.environment import SourceEnvironment
from ..facts.launcher import LauncherFacts
from .configs import read_configs
from .environment import environment_changes
from .evaluate import Evaluator
from .folders import Search, Unreadable, ignored
from .imports import ImportedFile, distribution_of, follow, module_name
from .module import Module, OutOfTime
from .service_program import Program
from .serving import serving_patterns

MAX_FILES = 2000
SOURCE_SECONDS = 20.0  # a real service's source reads in well under a second



class SourceInputError(ValueError):
    """A --source path that does not exist or is not Python; the message names it."""


def read_source(paths: list[str], environ: dict[str, str] | None = None, search: list[str] | None = None,
                seconds: float = SOURCE_SECONDS, launcher: LauncherFacts | None = None) -> SourceFacts:
    """``environ``: the service process's environment (--pid), for the live value of variables the source reads.
    ``search``: where the service's interpreter finds modules (--pid; for a script given with
    --source, this interpreter's sys.path and the folders given): the modules the files import
    are read too, within the bounds of ``imports.follow``, and the files read are one program.
    ``seconds``: the whole read's time; past it the read stops, and ``stopped`` says so. ``launcher``: what runs
    the code, and its settings, which decide how requests reach it (gunicorn's workers, an ``app.run()`` that
    does not run when a launcher imports the app)."""
    deadline = time.monotonic() + seconds
    files: list[str] = []
    errors: list[SourceError] = []
    configs_built: list[SourceLocation] = []
    predictors: list[SourcePredictor] = []
    settings: list[SourceSetting] = []
    patterns: list[SourcePattern] = []
    environment: list[SourceEnvironment] = []
    stopped: SourceStop | None = None
    imported: list[ImportedFile] = []
    imports_left_out = 0
    modules: dict[str, Module] = {}
    read: dict[str, str] = {}  # the real path of each file read, and the name it was read by (the first met)

    def out_of_time(file: str) -> OutOfTime:
        errors.append(SourceError(SourceLocation(file, 0),
                                        f"{CANNOT_READ}the {seconds:g} s the doctor gives the source ran out in this file"))
        return OutOfTime()

    def unreadable(path: str, exc: OSError) -> None:
        errors.append(SourceError(SourceLocation(path, 0), f"{CANNOT_READ}{exc.strerror or exc}"))

    def parse(file: str) -> Module | None:
        real = os.path.realpath(file)  # a file linked under another name (``here -> .``) is one module
        if real in read:
            return modules.get(read[real])
        read[real] = file
        files.append(file)
        try:
            modules[file] = Module.parse(file, read_text(file, SOURCE_BYTES), deadline)
        except SyntaxError as exc:
            errors.append(SourceError(SourceLocation(file, exc.lineno or 0), f"syntax error: {exc.msg}"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            errors.append(SourceError(SourceLocation(file, getattr(exc, "lineno", None) or 0), f"{CANNOT_READ}{exc}"))
        except OutOfTime:
            raise out_of_time(file) from None
        return modules.get(file)

    try:
        given: list[ImportedFile] = []
        for file in python_files(paths, deadline, unreadable):
            if os.path.realpath(file) in read:
                continue
            if len(given) == MAX_FILES:
                stopped = SourceStop.FILES
                break
            given.append(ImportedFile(file, _root(file, paths)))
            parse(file)
        if search:
            imports = follow(given, search, lambda file: getattr(parse(file), "tree", None))
            imported, imports_left_out = imports.found, imports.left_out
        program = Program()
        for item in given + imported:
            if item.file in modules:
                program.add(modules[item.file], module_name(item.file, item.root))
        shared: dict[str, Evaluator] = {}
        for item in given + imported:
            module = modules.get(item.file)
            if module is None:
                continue
            try:
                evaluator = shared.get(module.file) or Evaluator(module, environ, program, shared)
                configs = read_configs(module, evaluator, len(predictors) + 1)
            except OutOfTime:
                raise out_of_time(module.file) from None
            configs_built.extend(configs.built)
            predictors.extend(installed(predictor) for predictor in configs.predictors)
            settings.extend(configs.settings)
            patterns.extend(serving_patterns(module, launcher))
            environment.extend(environment_changes(module, evaluator, program))
    except OutOfTime:
        stopped = SourceStop.TIME
    return SourceFacts(status=SourceStatus.READ, paths=list(paths), files=files, configs=configs_built, predictors=predictors,
                       settings=settings, patterns=patterns, errors=errors, imported=[item.file for item in imported],
                       imports_left_out=imports_left_out, stopped=stopped,
                       environment=environment)


def installed(predictor: SourcePredictor) -> SourcePredictor:
    """The predictor with the distribution its Config's file belongs to, where it is one's."""
    found = distribution_of(predictor.location.file)
    return replace(predictor, package=found[0], version=found[1], path=found[2]) if found else predictor


def _root(file: str, paths: list[str]) -> str:
    """The folder module names are taken from: a file's own, or the one holding a folder given (its package)."""
    for path in paths:
        if os.path.isdir(path) and os.path.abspath(file).startswith(os.path.abspath(path) + os.sep):
            return os.path.dirname(os.path.abspath(path))
    return os.path.dirname(os.path.abspath(file))


def python_files(paths: list[str], deadline: float | None = None, unreadable: Unreadable = ignored):
    """The .py files named or under the folders named, in a stable order, found as they are asked
    for; OutOfTime past ``deadline``; ``unreadable`` is told of each entry of a folder that could not
    be looked at. SourceInputError, before any is found, for a path that is neither."""
    for path in paths:
        _check(path)
    return _found(paths, deadline, unreadable)


def _check(path: str) -> None:
    if os.path.isfile(path):
        if not path.endswith(".py"):
            raise SourceInputError(f"--source {path}: not a Python file; expected a .py file or a folder")
    elif os.path.exists(path) and not os.path.isdir(path):  # a FIFO, a device, a socket
        raise SourceInputError(f"--source {path}: is {what_it_is(os.stat(path).st_mode)}; "
                               "expected the service's .py file or its folder")
    elif not os.path.exists(path):
        raise SourceInputError(f"--source {path}: no such file or folder; expected the service's .py file or its folder")


def _found(paths: list[str], deadline: float | None, unreadable: Unreadable) -> Iterator[str]:
    search = Search(deadline, unreadable)
    for path in paths:
        if os.path.isdir(path):
            yield from search.python_files(path)
        else:
            yield path
