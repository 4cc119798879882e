"""Precision on the GPU: does the GPU support the precision the service asks for, and does an FP32
service leave tensor cores idle?

Fast FP16 needs compute capability 5.3, 6.0, 6.2 or 7.0 and above (6.1, the GTX 10x0 / Tesla P4 /
P40 family, runs FP16 at a small fraction of FP32 speed and TensorRT builds FP32 kernels there);
tensor cores need 7.0, INT8 6.1, BF16 8.0.
Why: a precision the GPU lacks is slow or fails to build; FP32 on a GPU with tensor cores often
leaves a 2x or larger speed-up unused (the ``fp16`` experiment measures it, with the output drift).
Fix: ask only for precisions the GPU has; on 7.0+ try FP16 in TensorRT and check the drift.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts, ServiceConfig
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.gpu import compute_capability, describe, no_service_gpu, service_gpu
from paddle_doctor.per_predictor import each_predictor
from paddle_doctor.registry import Check, Need

FP16_UNUSED, UNSUPPORTED = "PD-PREC-002", "PD-PREC-003"
TENSOR_CORES = (7, 0)
FAST_FP16_BELOW_TENSOR_CORES = ((5, 3), (6, 0), (6, 2))
MINIMUM = {"int8": ((6, 1), "6.1"), "bf16": ((8, 0), "8.0")}


def requested(service: ServiceConfig) -> list[str]:
    """Precisions other than FP32 the service asks for, in Paddle or in TensorRT."""
    wanted = {service.precision} | ({service.tensorrt.precision} if service.tensorrt.enabled else set())
    return sorted(wanted - {"fp32"})


def lacks(precision: str, capability: tuple[int, int]) -> str | None:
    """Why a GPU of this compute capability cannot run ``precision`` fast, or None."""
    if precision == "fp16":
        if capability >= TENSOR_CORES or capability in FAST_FP16_BELOW_TENSOR_CORES:
            return None
        return ("no fast FP16 units: FP16 runs at a fraction of FP32 speed and TensorRT builds FP32 kernels "
                "(fast FP16 needs 5.3, 6.0, 6.2 or 7.0+; tensor cores 7.0+)")
    least, label = MINIMUM[precision]
    return None if capability >= least else f"{precision.upper()} needs compute capability {label} or newer"


def check(facts: Facts) -> list[Finding]:
    reason = no_service_gpu(facts)
    device = service_gpu(facts)
    capability = compute_capability(device) if device else None
    if reason or capability is None:
        reason = reason or f"NVML did not give the compute capability of {describe(device)}"
        return [skipped(rule, reason) for rule in (FP16_UNUSED, UNSUPPORTED)]
    wanted = requested(facts.service)
    problems = {precision: why for precision in wanted if (why := lacks(precision, capability))}
    supported = ["fp32", *(p for p in ("fp16", "int8", "bf16") if lacks(p, capability) is None)]
    evidence = {"compute_capability": device.compute_capability, "gpu": device.name, "requested": wanted or ["fp32"],
                "supported": supported}
    if problems:
        unsupported = Finding(UNSUPPORTED, Status.FAIL,
                              f"{describe(device)}: " + "; ".join(f"{p.upper()}: {why}" for p, why in problems.items()),
                              observed=f"requested {', '.join(wanted)}", expected=f"one of {', '.join(supported)}",
                              evidence=evidence)
    else:
        unsupported = passed(UNSUPPORTED, f"{describe(device)} supports {', '.join(wanted) or 'fp32'}", **evidence)
    if wanted or capability < TENSOR_CORES:
        idle = passed(FP16_UNUSED, f"the service runs {', '.join(wanted)}" if wanted else f"{describe(device)} has no tensor cores")
    else:
        idle = Finding(FP16_UNUSED, Status.FAIL, f"{describe(device)} has tensor cores but the service runs FP32",
                       observed="precision fp32", expected="FP16 tried and measured (experiment 'fp16')", evidence=evidence)
    return [idle, unsupported]


CHECK = Check(name="gpu_precision", rules=(FP16_UNUSED, UNSUPPORTED), run=each_predictor(check), requires=(Need.GPU_SERVICE,))
