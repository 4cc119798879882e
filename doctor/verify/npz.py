"""Reading what an ``.npz`` of real inputs holds (names, dtypes, shapes) without numpy.

An ``.npz`` is a zip archive of ``.npy`` files; each starts with a small header that is a Python
literal. Reading only the headers lets the doctor check real inputs against the model, and name
the file and the input that do not fit, before any worker starts.
"""

from __future__ import annotations

import ast
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..inputs import what_it_is

MAGIC = b"\x93NUMPY"
DTYPES = {"f2": "float16", "f4": "float32", "f8": "float64", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
          "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "b1": "bool"}
EXPECTED = "an .npz archive keyed by input name (numpy.savez), or a folder of them"


class NpzError(ValueError):
    """The file is not a readable .npz of arrays; the message names it and what was expected."""


@dataclass(frozen=True)
class StoredArray:
    """One array of an .npz: its dtype (numpy's name) and shape."""

    dtype: str
    shape: tuple[int, ...]


def read_npz_header(path: str | Path) -> dict[str, StoredArray]:
    """The arrays an .npz holds, by name, read from their headers."""
    path = Path(path)
    try:
        with zipfile.ZipFile(path) as archive:
            arrays = {}
            for name in archive.namelist():
                if name.endswith(".npy"):
                    with archive.open(name) as member:  # the header only: never the whole array
                        arrays[Path(name).stem] = _array(member.read(4096), path, name)
            return arrays
    except zipfile.BadZipFile:
        raise NpzError(f"{path}: not an .npz archive (expected {EXPECTED})") from None
    except OSError as exc:
        raise NpzError(f"{path}: cannot be read: {exc.strerror or exc}") from None


def npz_files(path: str | Path) -> list[Path]:
    """The samples ``--inputs`` names: one .npz, or every .npz in a folder (sorted by name)."""
    path = Path(path)
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.suffix == ".npz" and p.is_file())
        if not found:
            raise NpzError(f"{path}: the folder holds no .npz file (expected {EXPECTED})")
        return found
    if not path.is_file():
        what = f"is {what_it_is(path.stat().st_mode)}" if path.exists() else "no such file or folder"
        raise NpzError(f"{path}: {what} (expected {EXPECTED})")
    return [path]


def _array(head: bytes, path: Path, member: str) -> StoredArray:
    if not head.startswith(MAGIC) or len(head) < (10 if head[6:7] == b"\x01" else 12):
        raise NpzError(f"{path}: {member} is not a .npy array (expected {EXPECTED})")
    if head[6] == 1:
        (length,), offset = struct.unpack("<H", head[8:10]), 10
    else:
        (length,), offset = struct.unpack("<I", head[8:12]), 12
    try:
        header = ast.literal_eval(head[offset:offset + length].decode("latin1"))
        descr, shape = header["descr"], tuple(int(d) for d in header["shape"])
    except (ValueError, SyntaxError, KeyError, TypeError):
        raise NpzError(f"{path}: {member} has an unreadable .npy header (expected {EXPECTED})") from None
    dtype = DTYPES.get(descr[1:]) if isinstance(descr, str) else None
    if dtype is None:
        raise NpzError(f"{path}: {member} holds {descr!r} data, which no Paddle input takes")
    return StoredArray(dtype, shape)
