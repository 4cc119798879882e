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
        for library in LIBRARIES:
            copy = newest_copy(directory, names, library)
            if copy is not None:
                found[library].append(copy)
    return LibraryFacts(searched=searched, found=found)


def newest_copy(directory: str, names: list[str], library: str) -> SharedLibrary | None:
    """The fullest version of ``library`` among one folder's file names (symlinks share the folder)."""
    versions = [m.group("version") or "" for m in map(SHARED_OBJECT.match, names) if m and m.group("name") == library]
    if not versions:
        return None
    best = max(versions, key=lambda version: tuple(int(part) for part in version.split(".")) if version else ())
    path = posixpath.join(directory, f"{library}.so" + (f".{best}" if best else ""))
    return SharedLibrary(path=path, version=best or None)


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
