"""The optimisation cache: where Paddle saves the optimised model and ``use_static`` TensorRT engines,
and what is there (a service with TensorRT, ``save_optim_model`` or ``optim_cache_dir``).

Paddle writes to ``set_optim_cache_dir(d)`` when set, else ``<model_dir>/_opt_cache/``; engines
are named ``trt_serialized_<key>``. The probe records whether that folder exists, its files and engines, the
owner and mode of the folder (or of the nearest folder above it, where Paddle would create it),
the ``paddle-doctor-cache.json`` stamp that names the TensorRT version and GPU that built the
engines, and whether the shape-range file exists. A relative path is taken from the working
directory, as the service would take it.
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from typing import Any

from ..base.inputs import Refused, parse_json
from ..base.serde import json_error_text
from ..base.vocabulary import CacheStatus
from ..facts import STAMP_FILE, ServiceConfig, TrtCacheFacts
from .common import Reader
from .context import ProbeContext

ENGINE_PREFIX = "trt_serialized_"


def probe_trt_cache(reader: Reader, service: ServiceConfig) -> TrtCacheFacts:
    trt = service.tensorrt
    if not (trt.enabled or service.save_optim_model or service.optim_cache_dir):
        return TrtCacheFacts(reason="the service uses no cache: neither TensorRT, save_optim_model nor optim_cache_dir")
    shape_file: dict[str, Any] = {}
    if trt.enabled and trt.dynamic_shape_file:
        path = absolute(reader.ctx, trt.dynamic_shape_file)
        shape_file = {"shape_file": path, "shape_file_exists": reader.path_test("trt_cache", path, "is_file")}
    if service.optim_cache_dir:
        directory, source = absolute(reader.ctx, service.optim_cache_dir), "optim_cache_dir"
    elif service.model:
        model = absolute(reader.ctx, service.model)
        model_dir = model if reader.path_test("trt_cache", model, "is_dir") else posixpath.dirname(model)
        directory, source = posixpath.join(model_dir, "_opt_cache"), "model"
    else:
        return TrtCacheFacts(reason="the service config names neither the model nor optim_cache_dir", **shape_file)
    return TrtCacheFacts(status=CacheStatus.PROBED, directory=directory, source=source, **shape_file,
                         **look_inside(reader, directory))


def look_inside(reader: Reader, directory: str) -> dict[str, Any]:
    """What the cache folder holds and who owns it (or the nearest folder above it), as the fields of TrtCacheFacts they fill."""
    ctx = reader.ctx
    seen: dict[str, Any] = {}
    exists, names = False, []
    try:
        exists = ctx.path(directory).is_dir()
        names = ctx.listdir(directory) if exists else []
    except OSError as exc:  # a folder on the way that this user may not enter
        seen["list_error"] = f"cannot list {directory}: {exc.strerror or exc}"
        reader.unreadable("trt_cache", directory, exc)
    if exists:
        seen.update(files=len(names), engines=[name for name in names if name.startswith(ENGINE_PREFIX)])
        if STAMP_FILE in names:
            seen["stamp"], seen["stamp_error"] = read_stamp(reader, posixpath.join(directory, STAMP_FILE))
    seen["checked_path"] = checked = nearest_existing(reader, directory)
    try:
        info = ctx.path(checked).stat()
        seen.update(mode=stat.S_IMODE(info.st_mode), uid=info.st_uid, gid=info.st_gid)
    except OSError as exc:
        reader.unreadable("trt_cache", checked, exc)
    return {"exists": exists, **seen}


def absolute(ctx: ProbeContext, path: str) -> str:
    """``path`` as the service would resolve it: from the working directory, or from / under a --root."""
    if posixpath.isabs(path):
        return posixpath.normpath(path)
    base = os.getcwd() if ctx.is_live else "/"
    return posixpath.normpath(posixpath.join(base, path))


def nearest_existing(reader: Reader, path: str) -> str:
    while path != "/" and not reader.path_test("trt_cache", path):
        path = posixpath.dirname(path)
    return path


def read_stamp(reader: Reader, path: str) -> tuple[dict[str, str] | None, str | None]:
    text = reader.text("trt_cache", path)
    if text is None:
        return None, f"{path} cannot be read"
    try:
        data = parse_json(text, path)
    except json.JSONDecodeError as exc:
        return None, f"{path} is not JSON ({json_error_text(exc)})"
    except Refused as exc:
        return None, f"{path} {exc}"
    if not isinstance(data, dict):
        return None, f"{path} is not a JSON object"
    return {str(key): str(value) for key, value in data.items()}, None
