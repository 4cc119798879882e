"""What the cached TensorRT engines were built for: the TensorRT version and GPU recorded beside them,
and the shape-range file dynamic shapes need.

Paddle's cache key ignores the TensorRT version and the GPU, so engines from another machine are
picked up. The doctor can only tell who built them from a ``paddle-doctor-cache.json`` stamp
beside the engines (``{"tensorrt": "8.6.1", "gpu": "NVIDIA H200", "compute_capability": "9.0"}``,
written by ``paddle-doctor stamp-cache`` where the engines were built); without one it says it cannot tell.
Why: an engine from another TensorRT or GPU fails to deserialize at start (older Paddle raises,
newer rebuilds for minutes); a missing shape-range file leaves dynamic-shape engines without
their ranges.
Fix: build the cache on the target GPU with the target TensorRT and key its volume by both;
collect the shape ranges once with ``collect_shape_range_info`` and ship the file.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.gpu import engine_target, stamp_differences
from paddle_doctor.per_predictor import each_predictor
from paddle_doctor.probes.trt_cache import STAMP_FILE
from paddle_doctor.registry import Check

STALE, SHAPES = "PD-TRT-004", "PD-TRT-006"


def check(facts: Facts) -> list[Finding]:
    if not facts.service.tensorrt.enabled:
        return [skipped(rule, "the service does not enable TensorRT") for rule in (STALE, SHAPES)]
    return [stale_finding(facts), shapes_finding(facts)]


def stale_finding(facts: Facts) -> Finding:
    cache = facts.trt_cache
    if cache.status != "probed":
        return skipped(STALE, cache.reason or "the cache folder was not probed")
    if not cache.engines:
        return skipped(STALE, f"no serialized engines in {cache.directory} yet")
    if cache.stamp is None:
        why = cache.stamp_error or f"no {STAMP_FILE} beside them"
        return skipped(STALE, f"cannot tell which TensorRT and GPU built the {len(cache.engines)} engines in {cache.directory}: {why}")
    stamp, now = cache.stamp, engine_target(facts)
    differences = stamp_differences(stamp, now)
    compared = [key for key in now if stamp.get(key) and now[key]]
    gpu_tag = (now["gpu"] or "gpu").split()[-1].lower()
    evidence = {"directory": cache.directory, "stamp": stamp, "here": now,
                "volume_suffix": f"{gpu_tag}-trt{now['tensorrt'] or 'unknown'}"}
    if differences:
        return Finding(STALE, Status.FAIL, f"the engines in {cache.directory} were built for " + ", ".join(differences),
                       observed=", ".join(f"{k} {stamp.get(k)}" for k in compared), expected=", ".join(f"{k} {now[k]}" for k in compared),
                       evidence=evidence)
    if not compared:
        return skipped(STALE, "cannot compare the stamp: the TensorRT version and the GPU here are unknown")
    return passed(STALE, f"the engines were built for this {', '.join(f'{k} {now[k]}' for k in compared)}", **evidence)


def shapes_finding(facts: Facts) -> Finding:
    cache = facts.trt_cache
    if not facts.service.tensorrt.dynamic_shape_file:
        return skipped(SHAPES, "the service names no shape-range file (tensorrt.dynamic_shape_file)")
    if cache.shape_file_exists is None:
        return skipped(SHAPES, "the shape-range file was not probed")
    if cache.shape_file_exists:
        return passed(SHAPES, f"the shape-range file {cache.shape_file} exists", shape_file=cache.shape_file)
    return Finding(SHAPES, Status.FAIL, f"the shape-range file {cache.shape_file} does not exist",
                   observed="missing", expected="the file written by collect_shape_range_info", evidence={"shape_file": cache.shape_file})


CHECK = Check(name="trt_engines", rules=(STALE, SHAPES), run=each_predictor(check))
