"""Paddle wheel vs hardware: a CPU wheel with a GPU (or the reverse), and a GPU wheel built for this GPU?"""

from __future__ import annotations

from paddle_doctor.base.quoting import Code
from paddle_doctor.base.vocabulary import Device, GpuStatus
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import (
    PADDLE_INDEX_TAG,
    compute_capability,
    describe,
    gpu_wheel,
    host_evidence,
    host_gpu,
    judged_gpu,
    version_tuple,
    wheel_label,
)
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check

ARCH, MISMATCH = "PD-GPU-004", "PD-GPU-005"
INDEX = "https://www.paddlepaddle.org.cn/packages/stable"


@evidence
class WheelEvidence(Evidence):
    installed: str | None
    wanted: Code


@evidence
class ArchsEvidence(Evidence):
    UNSAID = frozenset({"compute_capability", "sm"})  # said where the wheel lacks this GPU's architecture

    archs: list[int]
    compute_capability: str | None = None
    sm: str | None = None


def check(facts: Facts) -> list[Finding]:
    return [arch_finding(facts), mismatch_finding(facts)]


def mismatch_finding(facts: Facts) -> Finding:
    wheel, label, device = gpu_wheel(facts), wheel_label(facts), facts.service.device
    if wheel is None:
        return skipped(MISMATCH, f"cannot compare the wheel with the hardware: {label}")
    gpus = len(facts.gpu.devices) if facts.gpu.status == GpuStatus.OK else 0
    driver_cuda = version_tuple(facts.gpu.cuda_driver_version) or (12,)
    gpu_install = Code(f"paddlepaddle-gpu -i {INDEX}/{PADDLE_INDEX_TAG.get(driver_cuda[0], 'cu126')}/")
    if not wheel and (device == Device.GPU or gpus):
        why = "the service config asks for the GPU" if device == Device.GPU else f"NVML sees {gpus} GPU{'s' if gpus != 1 else ''}"
        return Finding(MISMATCH, Status.FAIL, f"{label} is installed but {why}: every request runs on the CPU",
                       observed=label, expected="a GPU build of Paddle (paddlepaddle-gpu)",
                       evidence=WheelEvidence(facts.paddle.distribution, gpu_install))
    if wheel and device != Device.GPU and host_gpu(facts) == "absent":
        return Finding(MISMATCH, Status.FAIL, f"{label} is installed but {host_evidence(facts)}",
                       observed=label, expected="the CPU wheel here, or a GPU in the container (--gpus)",
                       evidence=WheelEvidence(facts.paddle.distribution, Code("paddlepaddle==3.*")))
    if wheel and device == Device.GPU:
        return passed(MISMATCH, f"{label} for a service configured for the GPU")
    return passed(MISMATCH, f"{label} fits this host: {host_evidence(facts)}")


def arch_finding(facts: Facts) -> Finding:
    if gpu_wheel(facts) is not True:
        return skipped(ARCH, f"no GPU build of Paddle: {wheel_label(facts)}")
    device = judged_gpu(facts)
    if isinstance(device, str):
        return skipped(ARCH, device)
    capability, archs = compute_capability(device), facts.paddle.cuda_archs
    if capability is None:
        return skipped(ARCH, f"NVML did not give the compute capability of {describe(device)}")
    if not archs:
        return skipped(ARCH, "this Paddle does not report its CUDA architectures (paddle.version.cuda_archs)")
    major, minor = capability
    # A kernel built for sm_XY runs on any GPU of the same major version with minor >= Y.
    if any(arch // 10 == major and arch % 10 <= minor for arch in archs):
        return passed(ARCH, f"the wheel has kernels for {describe(device)}", ArchsEvidence(archs))
    built = ", ".join(f"sm_{arch}" for arch in archs)
    return Finding(ARCH, Status.FAIL, f"{describe(device)} is not among the wheel's architectures ({built})",
                   observed=built, expected=f"sm_{major}{minor} (or sm_{major}0..sm_{major}{minor})",
                   evidence=ArchsEvidence(archs, device.compute_capability, f"{major}{minor}"))


CHECK = Check(name="gpu_wheel", rules=(ARCH, MISMATCH), run=each_predictor(check),
              evidence={ARCH: ArchsEvidence, MISMATCH: WheelEvidence})
