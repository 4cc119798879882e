"""TensorRT version: does the runtime's TensorRT match the one Paddle was built with?"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import dotted, gpu_wheel, reported_version, trt_runtime, version_tuple, wheel_label
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

RULE = "PD-TRT-005"


@evidence
class TensorRTEvidence(Evidence):
    compiled: str | None
    runtime: str | None
    runtime_source: str
    trt_wanted: str


def check(facts: Facts) -> list[Finding]:
    if not facts.service.tensorrt.enabled:
        return [skipped(RULE, "the service does not enable TensorRT")]
    if gpu_wheel(facts) is not True:
        return [skipped(RULE, f"TensorRT needs a GPU build of Paddle: {wheel_label(facts)}")]
    compiled = reported_version(facts.paddle.trt_compile_version) or version_tuple(facts.paddle.tensorrt_version)
    runtime, source = trt_runtime(facts)
    evidence = TensorRTEvidence(dotted(compiled) if compiled else None, dotted(runtime) if runtime else None, source,
                                dotted(compiled[:2]) if compiled else "8.6")
    if compiled is None:
        return [Finding(RULE, Status.FAIL, f"the service enables TensorRT but {wheel_label(facts)} was built without it",
                        observed="get_trt_compile_version() = 0.0.0", expected="a Paddle GPU wheel built with TensorRT",
                        evidence=evidence)]
    if runtime is None:
        return [Finding(RULE, Status.FAIL, f"the wheel was built with TensorRT {dotted(compiled)} but the loader finds none ({source})",
                        observed=source, expected=f"libnvinfer {dotted(compiled[:2])}.x", evidence=evidence)]
    if runtime[:2] != compiled[:2]:
        return [Finding(RULE, Status.FAIL, f"Paddle was built with TensorRT {dotted(compiled)} but TensorRT {dotted(runtime)} is loaded ({source})",
                        observed=f"TensorRT {dotted(runtime)}", expected=f"TensorRT {dotted(compiled[:2])}.x", evidence=evidence)]
    return [passed(RULE, f"TensorRT {dotted(runtime)} at runtime matches the build's {dotted(compiled)}", evidence)]


CHECK = Check(name="trt_version", rules=(RULE,), run=each_predictor(check), evidence={RULE: TensorRTEvidence})
