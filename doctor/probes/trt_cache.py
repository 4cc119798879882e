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
    facts = TrtCacheFacts(reason="the service config names neither the model nor optim_cache_dir")
    if trt.enabled and trt.dynamic_shape_file:
        facts.shape_file = absolute(reader.ctx, trt.dynamic_shape_file)
        facts.shape_file_exists = reader.path_test("trt_cache", facts.shape_file, "is_file")
    if service.optim_cache_dir:
        directory, facts.source = absolute(reader.ctx, service.optim_cache_dir), "optim_cache_dir"
    elif service.model:
        model = absolute(reader.ctx, service.model)
        model_dir = model if reader.path_test("trt_cache", model, "is_dir") else posixpath.dirname(model)
        directory, facts.source = posixpath.join(model_dir, "_opt_cache"), "model"
    else:
        return facts
    facts.directory, facts.status, facts.reason = directory, CacheStatus.PROBED, None
    look_inside(reader, facts, directory)
    return facts


def look_inside(reader: Reader, facts: TrtCacheFacts, directory: str) -> None:
    ctx = reader.ctx
    try:
        facts.exists = ctx.path(directory).is_dir()
        names = ctx.listdir(directory) if facts.exists else []
    except OSError as exc:  # a folder on the way that this user may not enter
        facts.list_error = f"cannot list {directory}: {exc.strerror or exc}"
        reader.unreadable("trt_cache", directory, exc)
        names = []
    if facts.exists:
        facts.files = len(names)
        facts.engines = [name for name in names if name.startswith(ENGINE_PREFIX)]
        if STAMP_FILE in names:
            facts.stamp, facts.stamp_error = read_stamp(reader, posixpath.join(directory, STAMP_FILE))
    facts.checked_path = checked = nearest_existing(reader, directory)
    try:
        info = ctx.path(checked).stat()
        facts.mode, facts.uid, facts.gid = stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid
    except OSError as exc:
        reader.unreadable("trt_cache", checked, exc)


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
