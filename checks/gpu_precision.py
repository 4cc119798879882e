"""Precision on the GPU: does the GPU support the precision asked for, and does an FP32 service leave FP16 unused?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Device, Precision
from paddle_doctor.facts import Facts, ServiceConfig
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import compute_capability, describe, judged_gpu
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check, Need

FP16_UNUSED, UNSUPPORTED = "PD-PREC-002", "PD-PREC-003"
TENSOR_CORES = (7, 0)
FAST_FP16_BELOW_TENSOR_CORES = ((5, 3), (6, 0), (6, 2))
MINIMUM = {Precision.INT8: ((6, 1), "6.1"), Precision.BF16: ((8, 0), "8.0")}


@evidence
class PrecisionEvidence(Evidence):
    compute_capability: str | None
    gpu: str | None
    requested: list[Precision]
    supported: list[Precision]


def requested(service: ServiceConfig) -> list[Precision]:
    """Precisions other than FP32 the service asks for, in Paddle or in TensorRT."""
    wanted = {service.precision} | ({service.tensorrt.precision} if service.tensorrt.enabled else set())
    return sorted(wanted - {Precision.FP32})


def lacks(precision: Precision, capability: tuple[int, int]) -> str | None:
    """Why a GPU of this compute capability cannot run ``precision`` fast, or None."""
    if precision == Precision.FP16:
        if capability >= TENSOR_CORES or capability in FAST_FP16_BELOW_TENSOR_CORES:
            return None
        return ("no fast FP16 units: FP16 runs at a fraction of FP32 speed and TensorRT builds FP32 kernels "
                "(fast FP16 needs 5.3, 6.0, 6.2 or 7.0+; tensor cores 7.0+)")
    least, label = MINIMUM[precision]
    return None if capability >= least else f"{precision.upper()} needs compute capability {label} or newer"


def check(facts: Facts) -> list[Finding]:
    device = judged_gpu(facts)
    capability = compute_capability(device) if not isinstance(device, str) else None
    if isinstance(device, str) or capability is None:
        reason = device if isinstance(device, str) else f"NVML did not give the compute capability of {describe(device)}"
        return [skipped(rule, reason) for rule in (FP16_UNUSED, UNSUPPORTED)]
    wanted = requested(facts.service)
    problems = {precision: why for precision in wanted if (why := lacks(precision, capability))}
    supported = [Precision.FP32, *(p for p in (Precision.FP16, Precision.INT8, Precision.BF16) if lacks(p, capability) is None)]
    evidence = PrecisionEvidence(device.compute_capability, device.name, wanted or [Precision.FP32], supported)
    if problems:
        unsupported = Finding(UNSUPPORTED, Status.FAIL,
                              f"{describe(device)}: " + "; ".join(f"{p.upper()}: {why}" for p, why in problems.items()),
                              observed=f"requested {', '.join(wanted)}", expected=f"one of {', '.join(supported)}",
                              evidence=evidence)
    else:
        unsupported = passed(UNSUPPORTED, f"{describe(device)} supports {', '.join(wanted) or 'fp32'}", evidence)
    if wanted or capability < TENSOR_CORES:
        idle = passed(FP16_UNUSED, f"the service runs {', '.join(wanted)}" if wanted else f"{describe(device)} has no tensor cores")
    else:
        idle = Finding(FP16_UNUSED, Status.FAIL, f"{describe(device)} has tensor cores but the service runs FP32",
                       observed="precision fp32", expected="FP16 tried and measured (experiment 'fp16')", evidence=evidence)
    return [idle, unsupported]


CHECK = Check(name="gpu_precision", rules=(FP16_UNUSED, UNSUPPORTED), run=each_predictor(check, on=Device.GPU), requires=(Need.GPU_SERVICE,),
              evidence={FP16_UNUSED: PrecisionEvidence, UNSUPPORTED: PrecisionEvidence})
