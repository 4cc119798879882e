"""Cached TensorRT engines: were they built for this TensorRT version and GPU, with the shape file they need?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import CacheStatus
from paddle_doctor.facts import STAMP_FILE, Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import engine_target, stamp_differences
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

STALE, SHAPES = "PD-TRT-004", "PD-TRT-006"


@evidence
class StampEvidence(Evidence):
    directory: str | None
    stamp: dict[str, str]
    here: dict[str, str | None]
    volume_suffix: str


@evidence
class ShapeFileEvidence(Evidence):
    shape_file: str | None


def check(facts: Facts) -> list[Finding]:
    if not facts.service.tensorrt.enabled:
        return [skipped(rule, "the service does not enable TensorRT") for rule in (STALE, SHAPES)]
    return [stale_finding(facts), shapes_finding(facts)]


def stale_finding(facts: Facts) -> Finding:
    cache = facts.trt_cache
    if cache.status != CacheStatus.PROBED:
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
    evidence = StampEvidence(cache.directory, stamp, now, f"{gpu_tag}-trt{now['tensorrt'] or 'unknown'}")
    if differences:
        return Finding(STALE, Status.FAIL, f"the engines in {cache.directory} were built for " + ", ".join(differences),
                       observed=", ".join(f"{k} {stamp.get(k)}" for k in compared), expected=", ".join(f"{k} {now[k]}" for k in compared),
                       evidence=evidence)
    if not compared:
        return skipped(STALE, "cannot compare the stamp: the TensorRT version and the GPU here are unknown")
    return passed(STALE, f"the engines were built for this {', '.join(f'{k} {now[k]}' for k in compared)}", evidence)


def shapes_finding(facts: Facts) -> Finding:
    cache = facts.trt_cache
    if not facts.service.tensorrt.dynamic_shape_file:
        return skipped(SHAPES, "the service names no shape-range file (tensorrt.dynamic_shape_file)")
    if cache.shape_file_exists is None:
        return skipped(SHAPES, "the shape-range file was not probed")
    if cache.shape_file_exists:
        return passed(SHAPES, f"the shape-range file {cache.shape_file} exists", ShapeFileEvidence(cache.shape_file))
    return Finding(SHAPES, Status.FAIL, f"the shape-range file {cache.shape_file} does not exist",
                   observed="missing", expected="the file written by collect_shape_range_info", evidence=ShapeFileEvidence(cache.shape_file))


CHECK = Check(name="trt_engines", rules=(STALE, SHAPES), run=each_predictor(check),
              evidence={STALE: StampEvidence, SHAPES: ShapeFileEvidence})
