"""The service's code as its launcher finds it, from the live process's command line, and the launcher's
settings where the launcher reads them. Files are read, never imported or run (the service's code is
untrusted), each bounded as the source reader bounds it (``inputs.read_text``: a regular file, at most
SOURCE_BYTES).

The command line names the code a launcher imports: ``gunicorn app:app``, ``uvicorn pkg.mod:create_app
--factory``, ``hypercorn app:app``, ``celery -A proj worker``, ``python -m pkg`` (``pkg/__main__.py``), a
console script (``/venv/bin/serve``: its entry point in its distribution's ``entry_points.txt``, else the
script's own ``from X import main``) or a script. The module is looked for where the service's
interpreter finds it (``sys.path`` as the launcher makes it: its working directory, ``--pythonpath``,
``--app-dir``, ``PYTHONPATH``, the virtual environment's site-packages). Where it is not found, or the
command line names no code, ``reason`` says why in one line, and no code is guessed.

gunicorn's settings are read in its order, each over the ones before: its default (``WEB_CONCURRENCY``
for the workers), the configuration file (``-c FILE``, else ``./gunicorn.conf.py``: literal assignments
only), ``GUNICORN_CMD_ARGS``, the command line. uvicorn's and hypercorn's ``--workers``, celery's
``--concurrency`` and ``--pool`` are read from the command line."""

from __future__ import annotations

import ast
import configparser
import glob
import os
import posixpath
import shlex
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..base.command_line import is_interpreter, python_target
from ..base.inputs import SOURCE_BYTES, read_text
from ..facts.launcher import Launcher, LauncherFacts, LauncherKnob, LauncherSetting
from .imports import interpreter_path, locate

Under = Callable[[str], str]  # a path the process sees -> the one the doctor reads (--root)
SERVERS = {"gunicorn": Launcher.GUNICORN, "uvicorn": Launcher.UVICORN, "hypercorn": Launcher.HYPERCORN, "celery": Launcher.CELERY}
GUNICORN_CONFIG = "gunicorn.conf.py"
# the options of each launcher that take no value: any other option takes one (``--bind ADDR``)
NO_VALUE = {
    Launcher.GUNICORN: {"--preload", "--reload", "-D", "--daemon", "--check-config", "--print-config", "--spew",
                        "--capture-output", "--no-sendfile", "--reuse-port", "-R", "--enable-stdio-inheritance",
                        "--strip-header-spaces", "--suppress-ragged-eofs", "--do-handshake-on-connect",
                        "--proxy-protocol", "--disable-redirect-access-to-syslog", "--initgroups", "--no-control-socket",
                        "-v", "--version", "-h", "--help"},
    Launcher.UVICORN: {"--reload", "--use-colors", "--no-use-colors", "--proxy-headers", "--no-proxy-headers",
                       "--access-log", "--no-access-log", "--server-header", "--no-server-header", "--date-header",
                       "--no-date-header", "--factory", "--version", "--help"},
    Launcher.HYPERCORN: {"--debug", "--reload", "--verbose", "-h", "--help"},
    Launcher.CELERY: {"--detach", "-B", "--beat", "-E", "--task-events", "--without-gossip", "--without-mingle",
                      "--without-heartbeat", "-O", "--purge", "--discard", "-D", "-q", "--quiet", "--no-color", "--help"},
}
# each launcher's option that sets one of its settings, and how its text becomes the value
OPTIONS: dict[Launcher, dict[str, tuple[LauncherKnob, Callable[[str], int | bool | str]]]] = {
    Launcher.GUNICORN: {"-w": (LauncherKnob.WORKERS, int), "--workers": (LauncherKnob.WORKERS, int),
                        "--threads": (LauncherKnob.THREADS, int), "-k": (LauncherKnob.WORKER_CLASS, str),
                        "--worker-class": (LauncherKnob.WORKER_CLASS, str), "--preload": (LauncherKnob.PRELOAD_APP, bool)},
    Launcher.UVICORN: {"--workers": (LauncherKnob.WORKERS, int)},
    Launcher.HYPERCORN: {"-w": (LauncherKnob.WORKERS, int), "--workers": (LauncherKnob.WORKERS, int),
                         "-k": (LauncherKnob.WORKER_CLASS, str), "--worker-class": (LauncherKnob.WORKER_CLASS, str)},
    Launcher.CELERY: {"-c": (LauncherKnob.WORKERS, int), "--concurrency": (LauncherKnob.WORKERS, int),
                      "-P": (LauncherKnob.WORKER_CLASS, str), "--pool": (LauncherKnob.WORKER_CLASS, str)},
}
CONFIG_KNOBS = {knob.value: knob for knob in LauncherKnob}  # gunicorn.conf.py's names are the settings'


@dataclass(frozen=True)
class Service:
    """The process as its code sees the machine: its working directory, environment and interpreter (paths
    as it sees them), ``proc`` where they were read, and ``under`` the path the doctor reads for one."""

    proc: str
    cwd: str | None
    environ: dict[str, str]
    interpreter: str | None
    under: Under = lambda path: path

    def file(self, path: str) -> str | None:
        """The text of the file the process names ``path`` (relative to its working directory), bounded; None where it is none."""
        try:
            return read_text(self.under(self.absolute(path)), SOURCE_BYTES)
        except (OSError, UnicodeDecodeError, ValueError):
            return None

    def absolute(self, path: str) -> str:
        """``path`` made absolute against the working directory, ``..`` resolved: never above ``/``."""
        return posixpath.normpath(posixpath.join("/", self.cwd or "/", path))

    def seen(self, path: str) -> str:
        """A path the doctor read, as the process sees it."""
        root = self.under("/")
        return "/" + posixpath.relpath(path, root) if root not in ("/", "") and path.startswith(root) else path


def launched(service: Service, argv: list[str]) -> LauncherFacts:
    """What the command line ``argv`` launches: the launcher, the file of the service's code it runs (or why
    none) and the launcher's settings."""
    while argv and not argv[-1]:  # /proc/PID/cmdline ends each argument with a NUL
        argv = argv[:-1]
    if not argv or not argv[0]:
        return LauncherFacts(reason=f"{service.proc}/cmdline is empty")
    if not is_interpreter(argv):
        title = _retitled(service, argv)
        if title is not None:
            return title
        return _program(service, argv[0], argv[1:], f"{service.proc}/cmdline", searched=True)
    target = python_target(argv)
    if target is None:
        return LauncherFacts(reason=f"the interpreter runs no script or module ({service.proc}/cmdline: {' '.join(argv)[:200]})")
    kind, value, after = target
    if kind == "-c":
        return LauncherFacts(reason=f"the interpreter runs code given on its command line (-c), not a file ({service.proc}/cmdline)")
    if kind == "-":
        return LauncherFacts(reason=f"the interpreter runs code read from its standard input, not a file ({service.proc}/cmdline)")
    if kind == "-m":
        if not value:
            return LauncherFacts(launcher=Launcher.MODULE, reason=f"-m names no module ({service.proc}/cmdline)")
        top = value.split(".")[0]
        if top in SERVERS:
            return _server(service, SERVERS[top], after, f"{service.proc}/cmdline (-m {value})")
        return _module(service, value, [service.cwd] if service.cwd else [], f"{service.proc}/cmdline (-m {value})")
    return _program(service, value, after, f"{service.proc}/cmdline")


def _program(service: Service, program: str, arguments: list[str], said: str, searched: bool = False) -> LauncherFacts:
    """A file the interpreter runs (relative to the working directory), or the program the process runs
    (``searched``: a bare name is looked for on its PATH): a script (``app.py``), a launcher's console script,
    or the service's own."""
    path = service.absolute(program) if "/" in program or not searched else _on_path(service, program)
    if path is None:
        return LauncherFacts(reason=f"{program!r} ({said}) is not found on the PATH of {service.proc}/environ")
    if path.endswith(".py"):
        if service.file(path) is None:
            return LauncherFacts(launcher=Launcher.SCRIPT, target=path, reason=f"the script {path} ({said}) cannot be read")
        return LauncherFacts(launcher=Launcher.SCRIPT, target=program, entry=path, entry_source=said)
    name = posixpath.basename(path)
    text = service.file(path)
    if text is None and name in SERVERS:  # the launcher's own script, not readable here: its name says it
        return _server(service, SERVERS[name], arguments, f"{said}: {name}, by its name ({path} is not read)")
    if text is None:
        return LauncherFacts(target=path, reason=f"the program {path} ({said}) cannot be read as a Python script")
    folders = _folders(service, [posixpath.dirname(path)])
    point, where = _entry_point(service, name, text, folders)
    if point is None:  # a script of its own, not an entry point's wrapper
        if not _is_python(text):
            return LauncherFacts(target=path, reason=f"the program {path} ({said}) is not a Python script")
        return LauncherFacts(launcher=Launcher.SCRIPT, target=program, entry=path, entry_source=said)
    module = point.partition(":")[0].strip()
    top = module.split(".")[0]
    if top in SERVERS:
        return _server(service, SERVERS[top], arguments, f"{said}: {name}, {where}")
    found = _module(service, module, [posixpath.dirname(path)], f"{said}: {name}, {where}", main=False)
    return replace(found, launcher=Launcher.CONSOLE_SCRIPT, target=f"{name} = {point}")


def _on_path(service: Service, program: str) -> str | None:
    for folder in service.environ.get("PATH", "").split(":"):
        if folder.startswith("/") and os.path.isfile(service.under(posixpath.join(folder, program))):
            return posixpath.join(folder, program)
    return None


def _is_python(text: str) -> bool:
    first = text.split("\n", 1)[0]
    if first.startswith("#!"):
        return "python" in first or "pypy" in first
    try:
        ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return True


def _entry_point(service: Service, name: str, text: str, folders: list[str]) -> tuple[str | None, str]:
    """The entry point a console script runs (``pkg.cli:main``) and where it was read: the ``[console_scripts]``
    of a distribution's ``entry_points.txt`` on ``folders`` (doctor's paths), else the script's own
    ``from X import Y`` called at its end (pip's wrapper); (None, '') where the script is code of its own."""
    root = os.path.realpath(service.under("/"))
    for folder in folders:
        for listing in sorted(glob.glob(os.path.join(glob.escape(folder), "*.dist-info", "entry_points.txt"))):
            if os.path.commonpath([root, os.path.realpath(listing)]) != root:  # a link out of the root is not the service's
                continue
            try:
                parser = configparser.ConfigParser(interpolation=None, delimiters=("=",))
                parser.optionxform = str  # type: ignore[assignment,method-assign]
                parser.read_string(read_text(listing, SOURCE_BYTES))
            except (OSError, UnicodeDecodeError, ValueError, configparser.Error):
                continue
            if parser.has_option("console_scripts", name):
                return parser.get("console_scripts", name).split("[")[0].strip(), f"its entry point in {service.seen(listing)}"
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None, ""
    imported = {alias.asname or alias.name: f"{node.module}:{alias.name}" for node in tree.body
                if isinstance(node, ast.ImportFrom) and node.module and not node.level for alias in node.names}
    called = [node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)]
    wrapped = [imported[name] for name in called if name in imported]
    if wrapped and len(tree.body) <= 8:  # a wrapper: imports, and the call of what it imports
        return wrapped[-1], "the script's own import"
    return None, ""


def _folders(service: Service, first: list[str]) -> list[str]:
    """The service interpreter's ``sys.path`` as the doctor reads it: ``first`` (the folders the launcher puts
    first), ``PYTHONPATH``, the interpreter's site-packages."""
    return interpreter_path([service.under(folder) for folder in first], service.interpreter, service.environ, service.under)


def _module(service: Service, module: str, first: list[str], said: str, main: bool = True) -> LauncherFacts:
    """``python -m module`` (a package's ``__main__.py``, with ``main``), or the module an entry point names."""
    folders = _folders(service, first)
    facts = LauncherFacts(launcher=Launcher.MODULE, target=module,
                          search=[service.seen(folder) for folder in folders])
    if not _dotted(module):
        return replace(facts, reason=f"{module!r} ({said}) is not a module name")
    found = locate(module, folders)
    if not found:
        return replace(facts, reason=f"the module {module} ({said}) is not found on the service's sys.path ({_listed(facts.search)})")
    file = found[-1].file
    if main and file.endswith("__init__.py"):
        file = os.path.join(os.path.dirname(file), "__main__.py")
        if not os.path.isfile(file):
            return replace(facts, reason=f"the package {module} ({said}) has no __main__.py at {service.seen(file)}")
    return replace(facts, entry=service.seen(file), entry_source=f"{said}, found on the service's sys.path")


def _dotted(module: str) -> bool:
    """Whether ``module`` is a dotted module name (``pkg.mod``): never a path that leads out of the folders searched."""
    return bool(module) and all(part.isidentifier() for part in module.split("."))


def _listed(folders: list[str]) -> str:
    return ", ".join(folders) if folders else "no folder of it exists"


def _retitled(service: Service, argv: list[str]) -> LauncherFacts | None:
    """gunicorn's command line as setproctitle rewrites it (``gunicorn: master [app:app]``): its app, and its
    settings from where the command line is not (the configuration file, GUNICORN_CMD_ARGS)."""
    title = " ".join(argv)
    if not title.startswith("gunicorn: ") or "[" not in title or not title.endswith("]"):
        return None
    target = title[title.index("[") + 1:-1]
    facts = _server(service, Launcher.GUNICORN, [target], f"{service.proc}/cmdline, as gunicorn retitles its processes")
    return replace(facts, reason=facts.reason or "gunicorn retitled its processes (setproctitle): its command-line options are not read")


def _server(service: Service, launcher: Launcher, arguments: list[str], said: str) -> LauncherFacts:
    """A server or task queue that imports the service's code by name: its target, the file, its settings."""
    options, positional = _parsed(launcher, arguments)
    settings = _settings(service, launcher, options)
    config_files: list[str] = []
    first = [service.cwd] if service.cwd else []
    if launcher == Launcher.GUNICORN:
        settings, config_files = _gunicorn_settings(service, options)
        first += [service.absolute(entry) for entry in _last(options, "--pythonpath", "").split(",") if entry]
    elif launcher == Launcher.UVICORN and _last(options, "--app-dir", ""):
        first = [service.absolute(_last(options, "--app-dir", ""))]
    target = _last(options, "-A", "") or _last(options, "--app", "") if launcher == Launcher.CELERY else (positional[0] if positional else "")
    facts = LauncherFacts(launcher=launcher, settings=settings, config_files=config_files)
    if not target:
        return replace(facts, reason=f"{launcher} names no application to import ({said})")
    module = target.partition(":")[0]
    if not _dotted(module):
        return replace(facts, target=target, reason=f"{launcher}'s application {target!r} ({said}) names no module")
    folders = _folders(service, first)
    facts = replace(facts, target=target, search=[service.seen(folder) for folder in folders])
    candidates = [f"{module}.celery", module] if launcher == Launcher.CELERY and ":" not in target else [module]
    for candidate in candidates:
        found = locate(candidate, folders)
        if found:
            return replace(facts, entry=service.seen(found[-1].file), entry_source=f"{said}: {target}, found on the service's sys.path")
    return replace(facts, reason=f"{launcher}'s application {target} ({said}): the module {module} is not found on the service's "
                                 f"sys.path ({_listed(facts.search)})")


def _parsed(launcher: Launcher, arguments: list[str]) -> tuple[list[tuple[str, str]], list[str]]:
    """The options (each with its value, ``''`` for one that takes none) and the positional arguments."""
    options: list[tuple[str, str]] = []
    positional: list[str] = []
    index = 0
    takes_none = NO_VALUE.get(launcher, set())
    while index < len(arguments):
        argument = arguments[index]
        index += 1
        if argument == "--":
            positional += arguments[index:]
            break
        if argument.startswith("--") and "=" in argument:
            name, _, value = argument.partition("=")
            options.append((name, value))
        elif argument.startswith("-") and len(argument) > 1:
            if argument in takes_none:
                options.append((argument, ""))
            elif not argument.startswith("--") and len(argument) > 2:  # -w2
                options.append((argument[:2], argument[2:]))
            else:
                options.append((argument, arguments[index] if index < len(arguments) else ""))
                index += 1
        else:
            positional.append(argument)
    return options, positional


def _last(options: list[tuple[str, str]], name: str, default: str) -> str:
    return next((value for option, value in reversed(options) if option == name), default)


def _settings(service: Service, launcher: Launcher, options: list[tuple[str, str]], said: str | None = None) -> list[LauncherSetting]:
    """The launcher's settings its options give, the last of each winning; ``said``: where the options were read."""
    table = OPTIONS.get(launcher, {})
    found: dict[LauncherKnob, LauncherSetting] = {}
    where = said or f"the command line ({service.proc}/cmdline)"
    for option, value in options:
        if option not in table:
            continue
        knob, convert = table[option]
        shown = f"{option} {value}".strip() if convert is not bool else option
        try:
            found[knob] = LauncherSetting(knob, True if convert is bool else convert(value), f"{shown}, {where}")
        except ValueError:
            found[knob] = LauncherSetting(knob, None, f"{shown}, {where}: not a number")
    if launcher == Launcher.UVICORN and LauncherKnob.WORKERS not in found:
        found[LauncherKnob.WORKERS] = _web_concurrency(service, "uvicorn")
    if launcher == Launcher.CELERY and LauncherKnob.WORKERS not in found:
        found[LauncherKnob.WORKERS] = LauncherSetting(LauncherKnob.WORKERS, None, "celery's default, the host's CPUs (os.cpu_count(), "
                                                      "not the container's quota): no --concurrency on the command line")
    return [found[knob] for knob in LauncherKnob if knob in found]


def _web_concurrency(service: Service, launcher: str) -> LauncherSetting:
    """The launcher's default worker count: ``WEB_CONCURRENCY`` where the process's environment sets it, else 1."""
    value = service.environ.get("WEB_CONCURRENCY")
    if value is None:
        return LauncherSetting(LauncherKnob.WORKERS, 1, f"{launcher}'s default: no worker count is set (nor WEB_CONCURRENCY in {service.proc}/environ)")
    try:
        return LauncherSetting(LauncherKnob.WORKERS, int(value), f"WEB_CONCURRENCY={value} in {service.proc}/environ ({launcher}'s default)")
    except ValueError:
        return LauncherSetting(LauncherKnob.WORKERS, None, f"WEB_CONCURRENCY={value!r} in {service.proc}/environ: not a number")


def _gunicorn_settings(service: Service, options: list[tuple[str, str]]) -> tuple[list[LauncherSetting], list[str]]:
    """gunicorn's settings in its own order (its default, the configuration file, GUNICORN_CMD_ARGS, the command
    line), and the configuration file read."""
    try:
        variable = shlex.split(service.environ.get("GUNICORN_CMD_ARGS", ""))
    except ValueError:
        variable = []
    from_variable, _ = _parsed(Launcher.GUNICORN, variable)
    found = {LauncherKnob.WORKERS: _web_concurrency(service, "gunicorn")}
    config = _last(options, "-c", "") or _last(options, "--config", "") or _last(from_variable, "-c", "") or _last(from_variable, "--config", "")
    files: list[str] = []
    if config.startswith("python:"):
        found.update({LauncherKnob.WORKERS: LauncherSetting(LauncherKnob.WORKERS, None, f"-c {config}: a module, not read")})
    else:
        path = service.absolute(config or GUNICORN_CONFIG)
        text = service.file(path)
        if text is not None:
            files.append(path)
            found.update({setting.name: setting for setting in config_settings(path, text)})
    variable_said = f"GUNICORN_CMD_ARGS in {service.proc}/environ"
    found.update({setting.name: setting for setting in _settings(service, Launcher.GUNICORN, from_variable, variable_said)})
    found.update({setting.name: setting for setting in _settings(service, Launcher.GUNICORN, options)})
    return [found[knob] for knob in LauncherKnob if knob in found], files


def config_settings(path: str, text: str) -> list[LauncherSetting]:
    """The settings a gunicorn configuration file assigns at its top level: literal values, the last of each
    winning; an assignment the doctor cannot evaluate is a setting without a value that says where."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError) as exc:
        return [LauncherSetting(LauncherKnob.WORKERS, None, f"{path}: Python cannot parse it ({exc})")]
    found: dict[LauncherKnob, LauncherSetting] = {}
    for node in tree.body:
        if not isinstance(node, ast.Assign | ast.AnnAssign) or node.value is None:
            continue
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        for target in targets:
            knob = CONFIG_KNOBS.get(target.id) if isinstance(target, ast.Name) else None
            if knob is None:
                continue
            code = ast.get_source_segment(text, node) or knob.value
            try:
                value = ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                found[knob] = LauncherSetting(knob, None, f"{path}:{node.lineno} {code}: an expression the doctor does not evaluate")
                continue
            fits = isinstance(value, bool) if knob == LauncherKnob.PRELOAD_APP else (
                isinstance(value, str) if knob == LauncherKnob.WORKER_CLASS else isinstance(value, int) and not isinstance(value, bool))
            found[knob] = LauncherSetting(knob, value if fits else None, f"{path}:{node.lineno} {code}" + ("" if fits else ": not a value gunicorn takes"),
                                          path, node.lineno)
    return [found[knob] for knob in LauncherKnob if knob in found]


def folder_launcher(folders: list[str]) -> LauncherFacts | None:
    """With ``--source`` alone, the gunicorn configuration file of a folder given (``gunicorn.conf.py``, which
    gunicorn reads from the service's working directory): its settings; None where no folder holds one."""
    for folder in folders:
        path = os.path.join(folder, GUNICORN_CONFIG)
        try:
            text = read_text(path, SOURCE_BYTES)
        except (OSError, UnicodeDecodeError, ValueError):
            continue
        return LauncherFacts(launcher=Launcher.GUNICORN, settings=config_settings(path, text), config_files=[path],
                             reason="read from the folder given (--source): the command line that starts it is not known")
    return None
