"""Reading what an ``.npz`` of real inputs holds (names, dtypes, shapes) without numpy.

An ``.npz`` is a zip archive of ``.npy`` files; each starts with a small header that is a Python
literal. Reading only the headers lets the doctor check real inputs against the model, and name
the file and the input that do not fit, before any worker starts.
"""

from __future__ import annotations

import ast
import math
import struct
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..base.inputs import SAMPLE_BYTES, Refused, open_regular, size_words, what_it_is

MAGIC = b"\x93NUMPY"
DTYPES = {"f2": "float16", "f4": "float32", "f8": "float64", "i1": "int8", "i2": "int16", "i4": "int32", "i8": "int64",
          "u1": "uint8", "u2": "uint16", "u4": "uint32", "u8": "uint64", "b1": "bool"}
ITEM_BYTES = {name: int(code[1]) for code, name in DTYPES.items()}
EXPECTED = "an .npz archive keyed by input name (numpy.savez), or a folder of them"
MAX_ARRAYS = 1000  # in one .npz: one per model input
MAX_SAMPLES = 1000  # .npz files in an --inputs folder


class NpzError(ValueError):
    """The file is not a readable .npz of arrays; the message names it and what was expected."""


@dataclass(frozen=True)
class StoredArray:
    """One array of an .npz: its dtype (numpy's name) and shape."""

    dtype: str
    shape: tuple[int, ...]


def read_npz_header(path: str | Path) -> dict[str, StoredArray]:
    """The arrays an .npz holds, by name, read from their headers: no more than SAMPLE_BYTES of file,
    nor of the arrays it says it holds (what the worker loads), nor more than MAX_ARRAYS of them."""
    path = Path(path)
    try:
        with open_regular(path, SAMPLE_BYTES) as handle, zipfile.ZipFile(handle) as archive:
            members = [name for name in archive.namelist() if name.endswith(".npy")]
            if len(members) > MAX_ARRAYS:
                raise NpzError(f"{path}: holds more than {MAX_ARRAYS:,} arrays, the most the doctor reads of one sample "
                               f"(expected {EXPECTED})")
            arrays = {}
            for name in members:
                with archive.open(name) as member:  # the header only: never the whole array
                    arrays[Path(name).stem] = _array(member.read(4096), path, name)
    except zipfile.BadZipFile:
        raise NpzError(f"{path}: not an .npz archive (expected {EXPECTED})") from None
    except Refused as exc:
        raise NpzError(f"{path}: {exc} (expected {EXPECTED})") from None
    except OSError as exc:
        raise NpzError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    _within_bound(path, [arrays])
    return arrays


def read_samples(path: str | Path) -> dict[Path, dict[str, StoredArray]]:
    """The arrays of each sample ``--inputs`` names, by file, read from their headers: together no
    more than SAMPLE_BYTES, since the worker loads them all."""
    stored = {file: read_npz_header(file) for file in npz_files(path)}
    _within_bound(Path(path), list(stored.values()))
    return stored


def _within_bound(path: Path, samples: list[dict[str, StoredArray]]) -> None:
    held = sum(math.prod(array.shape) * ITEM_BYTES[array.dtype] for arrays in samples for array in arrays.values())
    if held > SAMPLE_BYTES:
        raise NpzError(f"{path}: holds arrays of {held:,} bytes, more than {size_words(SAMPLE_BYTES)}, the most the doctor "
                       f"loads as inputs (expected {EXPECTED})")


def npz_files(path: str | Path) -> list[Path]:
    """The samples ``--inputs`` names: one .npz, or every .npz in a folder (sorted by name), at most MAX_SAMPLES."""
    path = Path(path)
    if path.is_dir():
        found = []
        for entry in path.iterdir():
            if entry.suffix == ".npz":  # a FIFO or a device among them is refused by name when it is read
                found.append(entry)
                if len(found) > MAX_SAMPLES:
                    raise NpzError(f"{path}: the folder holds more than {MAX_SAMPLES:,} .npz files, the most the doctor "
                                   f"reads (expected {EXPECTED})")
        if not found:
            raise NpzError(f"{path}: the folder holds no .npz file (expected {EXPECTED})")
        return sorted(found)
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
