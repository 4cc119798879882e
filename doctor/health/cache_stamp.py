"""``paddle-doctor stamp-cache``: record beside freshly built TensorRT engines what they were built for.

Paddle's engine cache key ignores the TensorRT version and the GPU, so a cache volume carried to
another GPU or TensorRT is picked up anyway. PD-TRT-004 compares the stamp
(``paddle-doctor-cache.json``) with the machine the service runs on. The stamp describes *this*
machine, so it belongs where the engines were just built: on the target GPU, after the warm-up that
builds them. Engines an existing stamp says another TensorRT or GPU built are not restamped (that
would hide exactly what PD-TRT-004 looks for) unless ``--force``.
"""

from __future__ import annotations

import json
import posixpath

from ..base.vocabulary import CacheStatus
from ..facts import STAMP_FILE, Facts
from ..judge.gpu_support import engine_target, stamp_differences
from ..probes.context import ProbeContext
from ..render.output import write_text_atomically


class StampError(ValueError):
    """The cache cannot be stamped; the message says why and what to do."""


def stamp_for(facts: Facts) -> tuple[str, dict[str, str]]:
    """The service's cache folder, and what the engines in it were built for, as the stamp records it."""
    cache = facts.trt_cache
    if not facts.service.tensorrt.enabled:
        raise StampError("the service does not enable TensorRT (tensorrt.enabled in --config): there are no engines to stamp")
    if cache.status != CacheStatus.PROBED or cache.directory is None:
        raise StampError(f"no engine cache to stamp: {cache.reason or 'the cache folder was not probed'}")
    if not cache.engines:
        raise StampError(f"no serialized engines (trt_serialized_*) in {cache.directory}: "
                         "run the warm-up that builds them with use_static=True first")
    target = engine_target(facts)
    unknown = [key for key in ("tensorrt", "gpu") if not target[key]]
    if unknown:
        raise StampError(f"cannot tell the {' and the '.join(unknown)} here, so the stamp would say nothing: "
                         "run it with the service's Python (--python) and NVML (--gpu) on the GPU that built the engines")
    stamp = {key: value for key, value in target.items() if value}
    if facts.paddle.version:
        stamp["paddle"] = facts.paddle.version
    return cache.directory, stamp


def write_stamp(ctx: ProbeContext, facts: Facts, force: bool = False) -> tuple[str, dict[str, str], bool]:
    """(path, stamp, written): the stamp for the service's cache, unless the one there says the same.

    Raises StampError when the stamp there names another TensorRT or GPU (and not ``force``).
    """
    (directory, stamp), cache = stamp_for(facts), facts.trt_cache
    path = posixpath.join(directory, STAMP_FILE)
    if cache.stamp is not None and not force:
        target = engine_target(facts)  # what PD-TRT-004 compares; the Paddle version is on record only
        differences = stamp_differences(cache.stamp, target)
        if differences:
            raise StampError(f"{path} says the {len(cache.engines)} engines were built for {', '.join(differences)}; "
                             "rebuild them here (remove trt_serialized_* and warm up) or pass --force")
        if all(cache.stamp.get(key) for key, value in target.items() if value):
            return path, cache.stamp, False
    write_text_atomically(ctx.path(path), json.dumps(stamp, indent=2, sort_keys=True) + "\n", StampError, "stamp")
    return path, stamp, True
