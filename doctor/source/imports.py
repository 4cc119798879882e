"""The modules a service's script imports, found where its interpreter would find them (the
script's folder, ``PYTHONPATH``, the interpreter's site-packages), so the Configs a wrapper package
builds are read where they are built. Bounded: at most MAX_IMPORTED files and IMPORT_SECONDS of
reading; Paddle's own package is not followed (it builds no Config of the service's), nor a
package whose code never names Paddle."""

from __future__ import annotations

import ast
import collections
import functools
import glob
import itertools
import os
import re
import time
from dataclasses import dataclass, field

from ..base.inputs import SOURCE_BYTES, SYSTEM_BYTES, read_bytes, read_text
from .folders import Search
from .module import OutOfTime

NOT_FOLLOWED = ("paddle",)
MAX_IMPORTED = 400
IMPORT_SECONDS = 10.0
MAX_SCANNED = 5000  # files of one package looked through for the word "paddle"
BUILDS_A_PREDICTOR = b"create_predictor"  # a module or package holding it is followed before the others


@dataclass
class ImportedFile:
    """A module found on the search path: its file and the folder of the search path it is under."""

    file: str
    root: str


@dataclass
class Imports:
    found: list[ImportedFile] = field(default_factory=list)
    left_out: int = 0  # modules imported and found past the bounds


def search_path(script: str, interpreter: str | None, environ: dict[str, str] | None, under=lambda path: path) -> list[str]:
    """Where the service's interpreter finds modules, in its order: the script's folder,
    ``PYTHONPATH``, then its site-packages (a venv's, and its base's when the venv includes them).
    ``under`` maps a path the process sees to the one the doctor reads (``--root``)."""
    return interpreter_path([os.path.dirname(os.path.abspath(script))], interpreter, environ, under)


def interpreter_path(first: list[str], interpreter: str | None, environ: dict[str, str] | None, under=lambda path: path) -> list[str]:
    """``first`` (folders the doctor reads: the one the interpreter or a launcher puts first), then ``PYTHONPATH``
    and the interpreter's site-packages: the folders that exist, once each, in order."""
    folders = list(first)
    folders += [under(entry) for entry in (environ or {}).get("PYTHONPATH", "").split(":") if entry.startswith("/")]
    if interpreter:
        folders += site_folders(interpreter, under)
    unique = []
    for folder in folders:
        if folder not in unique and os.path.isdir(folder):
            unique.append(folder)
    return unique


def given_search_path(paths: list[str], own: bool) -> list[str]:
    """Where the modules a script given by ``--source`` imports are looked for: the folder of each
    file given, each folder given, then (``own``: the doctor runs in the service's container)
    this interpreter's ``sys.path``."""
    import sys

    folders = [os.path.dirname(os.path.abspath(path)) if os.path.isfile(path) else os.path.abspath(path) for path in paths]
    folders += [os.path.abspath(entry) for entry in sys.path if own and entry]
    unique = []
    for folder in folders:
        if folder not in unique and os.path.isdir(folder):
            unique.append(folder)
    return unique


def site_folders(interpreter: str, under=lambda path: path) -> list[str]:
    """The site-packages of an interpreter, read from its prefix (never by running it)."""
    prefix = os.path.dirname(os.path.dirname(interpreter))
    folders = _site_packages(under(prefix))
    config = under(os.path.join(prefix, "pyvenv.cfg"))
    if os.path.isfile(config):
        values = dict(line.split("=", 1) for line in _lines(config) if "=" in line)
        values = {key.strip(): value.strip() for key, value in values.items()}
        if values.get("include-system-site-packages", "false").lower() == "true" and values.get("home", "").startswith("/"):
            folders += _site_packages(under(os.path.dirname(values["home"])))
    return folders


def _site_packages(prefix: str) -> list[str]:
    found = sorted(glob.glob(os.path.join(glob.escape(prefix), "lib", "python3*", "site-packages")))
    found += sorted(glob.glob(os.path.join(glob.escape(prefix), "local", "lib", "python3*", "dist-packages")))
    found += [os.path.join(prefix, "lib", "python3", "dist-packages")]
    return [folder for folder in found if os.path.isdir(folder)]


def _lines(path: str) -> list[str]:
    try:
        return read_text(path, SYSTEM_BYTES, errors="replace").splitlines()
    except OSError:
        return []


def package_of(name: str, file: str) -> str:
    """The package a module's relative imports start from: a package's ``__init__`` is its own."""
    return name if file.endswith("__init__.py") else name.rpartition(".")[0]


def imported_from(node: ast.ImportFrom, package: str) -> str:
    """The dotted name of the module ``from ... import`` names, relative levels resolved in ``package``."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
    return ".".join(parts + ([node.module] if node.module else []))


def imported_names(tree: ast.Module, package: str) -> list[str]:
    """The dotted names of the modules a module imports (``from a import b`` names ``a.b`` too, in
    case ``b`` is a module); ``package`` resolves its relative imports."""
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = imported_from(node, package)
            if base:
                names.append(base)
            names.extend(f"{base}.{alias.name}" if base else alias.name for alias in node.names if alias.name != "*")
    return names


def locate(name: str, folders: list[str]) -> list[ImportedFile]:
    """The files importing ``name`` runs: each package's ``__init__.py`` on the way, then the module."""
    if not name or name.split(".")[0] in NOT_FOLLOWED:
        return []
    parts = name.split(".")
    for folder in folders:
        found = []
        for depth in range(1, len(parts) + 1):
            base = os.path.join(folder, *parts[:depth])
            if os.path.isfile(os.path.join(base, "__init__.py")):
                found.append(ImportedFile(os.path.join(base, "__init__.py"), folder))
            elif os.path.isfile(base + ".py"):
                found.append(ImportedFile(base + ".py", folder))
                break
            elif not os.path.isdir(base):  # a namespace package (any folder on the way) has no __init__
                break
        if found:
            return found
    return []


def module_name(file: str, root: str) -> str:
    """``root/pkg/sub/mod.py`` -> ``pkg.sub.mod``; a package's ``__init__.py`` is the package."""
    relative = os.path.relpath(os.path.abspath(file), os.path.abspath(root))
    parts = relative[:-3].split(os.sep) if relative.endswith(".py") else relative.split(os.sep)
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def follow(start: list[ImportedFile], folders: list[str], parse, deadline_s: float = IMPORT_SECONDS,
           most: int = MAX_IMPORTED) -> Imports:
    """Every module reached from ``start`` through its imports, within the bounds: breadth first, but
    the modules of a package whose code builds a predictor (``create_predictor``) before the others,
    so a wrapper's engine is read before the bounds run out in the rest of a big package (PaddleNLP's
    ``__init__`` imports hundreds of modules before ``taskflow/task.py``).
    ``parse(file)`` gives the file's tree, or None when it is not read. A name not found on
    ``folders`` is looked for beside the importing module and in its top package (a package that
    puts its own folder on ``sys.path``). A package outside the folders of ``start`` is followed
    only where its code names Paddle (``mentions_paddle``): numpy builds no Config."""
    imports = Imports()
    seen = {os.path.realpath(item.file) for item in start}  # a file linked under another name (``here -> .``) is one module
    own = {item.root for item in start}
    leads, queue = collections.deque(start), collections.deque[ImportedFile]()
    deadline = time.monotonic() + deadline_s
    named_paddle: dict[str, bool] = {}
    builds: dict[str, bool] = {}
    building: dict[str, bool] = {}  # each file read once for BUILDS_A_PREDICTOR
    while leads or queue:
        item = leads.popleft() if leads else queue.popleft()
        if item not in start:  # counted as read: found earlier, read in its turn
            if len(imports.found) >= most or time.monotonic() > deadline:
                imports.left_out += 1 + len(leads) + len(queue)
                break
            imports.found.append(item)
        tree = parse(item.file)
        if tree is None:
            continue
        name = module_name(item.file, item.root)
        package = package_of(name, item.file)
        beside = [os.path.dirname(item.file), item.root, os.path.join(item.root, name.split(".")[0])]
        for imported in imported_names(tree, package):
            for found in locate(imported, folders) or locate(imported, beside):
                if os.path.realpath(found.file) in seen:
                    continue
                seen.add(os.path.realpath(found.file))
                top = os.path.join(found.root, os.path.relpath(found.file, found.root).split(os.sep)[0])
                if found.root not in own and not named_paddle.setdefault(top, mentions_paddle(top, deadline)):
                    continue
                where = os.path.dirname(found.file)  # its package: a wrapper's engine and the modules beside it
                (leads if builds.setdefault(where, mentions(where, BUILDS_A_PREDICTOR, deadline, building)) else queue).append(found)
    return imports


def mentions_paddle(path: str, deadline: float) -> bool:
    """Whether a module file, or any .py file of a package folder, contains the word ``paddle``."""
    return mentions(path, b"paddle", deadline)


def mentions(path: str, word: bytes, deadline: float, read: dict[str, bool] | None = None) -> bool:
    """Whether a module file, or any .py file of a package folder, contains ``word`` (lower case, matched
    regardless of case); read as bytes, regular files only (``inputs.read_bytes``: a FIFO named
    ``*.py`` would block), at most MAX_SCANNED files, and no later than ``deadline``.
    ``read`` keeps what each file held, so that a file of nested packages asked about in turn is read once."""
    read = {} if read is None else read
    try:
        for file in [path] if os.path.isfile(path) else itertools.islice(Search(deadline).python_files(path), MAX_SCANNED):
            if file not in read:
                if time.monotonic() > deadline:
                    return False
                try:
                    read[file] = word in read_bytes(file, SOURCE_BYTES).lower()
                except OSError:  # refused (not a regular file, larger than a source file is read), or unreadable
                    read[file] = False
            if read[file]:
                return True
    except OutOfTime:
        pass
    return False


DISTRIBUTION_DEPTH = 8  # folders looked up from a file for the distribution it belongs to
DIST_INFO = re.compile(r"^([A-Za-z0-9_.]+)-([A-Za-z0-9_.+!]+)\.dist-info$")


def distribution_of(file: str) -> tuple[str, str, str] | None:
    """(distribution, version, the file's path inside the folder the distribution is installed in)
    for a file of an installed package: a ``NAME-VERSION.dist-info`` beside one of the folders
    above the file, whose ``top_level.txt`` (or name) is that folder. Never imports anything."""
    folder = os.path.dirname(os.path.abspath(file))
    for _ in range(DISTRIBUTION_DEPTH):
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        found = _installed(parent, os.path.basename(folder))
        if found is not None:
            return found[0], found[1], os.path.relpath(os.path.abspath(file), parent)
        folder = parent
    return None


@functools.lru_cache(maxsize=256)
def _installed(parent: str, top: str) -> tuple[str, str] | None:
    try:
        entries = sorted(entry for entry in os.listdir(parent) if entry.endswith(".dist-info"))
    except OSError:
        return None
    for entry in entries:
        match = DIST_INFO.match(entry)
        if match is None:
            continue
        name, version = match.groups()
        tops = _lines(os.path.join(parent, entry, "top_level.txt")) or [name]
        if top in (line.strip() for line in tops):
            return name.replace("_", "-").lower(), version
    return None
