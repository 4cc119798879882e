"""The shape-range file Paddle writes with ``Config.collect_shape_range_info(path)``.

It is a text protobuf with one ``shape_range_info { name: ... min_shape/max_shape/opt_shape }``
block per tensor (model inputs and intermediate values alike). Its opt shapes are the shapes a
service really sees most, so a model folder that carries one gives the doctor realistic shapes
for dynamic inputs without any flag.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..base.inputs import DOCUMENT_BYTES, read_text

FILE_NAME = "shape_range_info.pbtxt"
BLOCK = re.compile(r"shape_range_info\s*\{(.*?)\}", re.S)
NAME = re.compile(r'name:\s*"([^"]*)"')
OPT = re.compile(r"opt_shape:\s*(-?\d+)")


def find_shape_range_file(model_dir: str | Path, named: str | None = None) -> Path | None:
    """The service's shape-range file (``tensorrt.dynamic_shape_file``), else one in the model folder."""
    for candidate in ([Path(named)] if named else []) + [Path(model_dir) / FILE_NAME]:
        if candidate.is_file():
            return candidate
    return None


def read_opt_shapes(path: str | Path) -> dict[str, list[int]]:
    """Tensor name -> opt shape; unreadable text gives no shapes rather than a guess."""
    try:
        text = read_text(path, DOCUMENT_BYTES, errors="replace")
    except OSError:  # missing, unreadable, or refused (not a regular file, too large)
        return {}
    shapes = {}
    for block in BLOCK.findall(text):
        name = NAME.search(block)
        opt = [int(d) for d in OPT.findall(block)]
        if name and opt:
            shapes[name.group(1)] = opt
    return shapes
