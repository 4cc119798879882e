"""CUDA runtime, cuBLAS, cuDNN and TensorRT libraries as the dynamic loader would find them.

The search order follows the loader: the pip library folders a Paddle GPU wheel loads first
(reported by the Paddle child), ``LD_LIBRARY_PATH``, the folders of ``/etc/ld.so.conf`` and its
includes (what ldconfig's cache holds), then the default folders. Every folder resolves under the
probe root. Versions come from file names: ``libcudart.so.12.6.77`` is 12.6.77, ``libcudnn.so.9``
is 9.
"""

from __future__ import annotations

import glob
import posixpath
import re

from ..facts import LibraryFacts, SharedLibrary
from .common import Reader

LIBRARIES = ("libcudart", "libcublas", "libcudnn", "libnvinfer")
DEFAULT_DIRS = (
    "/lib",
    "/usr/lib",
    "/usr/lib64",
    "/usr/lib/x86_64-linux-gnu",
    "/usr/local/cuda/lib64",
    "/usr/local/nvidia/lib64",
)
LD_SO_CONF = "/etc/ld.so.conf"
SHARED_OBJECT = re.compile(r"^(?P<name>lib\w+)\.so(?:\.(?P<version>\d+(?:\.\d+)*))?$")
MAX_INCLUDE_DEPTH = 4


def probe_libraries(reader: Reader, env: dict[str, str], pip_dirs: list[str]) -> LibraryFacts:
    ld_library_path = [entry for entry in env.get("LD_LIBRARY_PATH", "").split(":") if entry.startswith("/")]
    searched = list(dict.fromkeys([*pip_dirs, *ld_library_path, *ld_conf_dirs(reader, LD_SO_CONF), *DEFAULT_DIRS]))
    found: dict[str, list[SharedLibrary]] = {name: [] for name in LIBRARIES}
    for directory in searched:
        try:
            names = reader.ctx.listdir(directory)
        except OSError:
            continue
        for library, copy in newest_copies(directory, names).items():
            found[library].append(copy)
    return LibraryFacts(searched=searched, found=found)


def newest_copies(directory: str, names: list[str]) -> dict[str, SharedLibrary]:
    """The fullest version of each library among one folder's file names (symlinks share the folder).

    System folders hold a thousand files; the prefix test comes before the pattern."""
    versions: dict[str, list[str]] = {}
    for match in map(SHARED_OBJECT.match, (name for name in names if name.startswith(LIBRARIES))):
        if match and match.group("name") in LIBRARIES:
            versions.setdefault(match.group("name"), []).append(match.group("version") or "")
    copies = {}
    for library, found in versions.items():
        best = max(found, key=lambda version: tuple(int(part) for part in version.split(".")) if version else ())
        copies[library] = SharedLibrary(path=posixpath.join(directory, f"{library}.so" + (f".{best}" if best else "")),
                                        version=best or None)
    return copies


def ld_conf_dirs(reader: Reader, conf: str, depth: int = 0) -> list[str]:
    """Folders named in an ld.so.conf file, following ``include`` globs."""
    text = reader.text("libraries", conf, required=False)
    if text is None or depth > MAX_INCLUDE_DEPTH:
        return []
    dirs: list[str] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("include"):
            pattern = line[len("include"):].strip()
            pattern = pattern if pattern.startswith("/") else posixpath.join(posixpath.dirname(conf), pattern)
            root = str(reader.ctx.root).rstrip("/")
            for included in sorted(glob.glob(glob.escape(root) + "/" + pattern.lstrip("/"))):
                dirs.extend(ld_conf_dirs(reader, included[len(root):], depth + 1))
        elif line.startswith("/"):
            dirs.append(line.rstrip("/") or "/")
    return dirs
