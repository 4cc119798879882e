"""GPU visibility: can the service reach a GPU from inside this container, and if not, why?"""

from __future__ import annotations

from paddle_doctor.base.vocabulary import Device, GpuStatus
from paddle_doctor.facts import Facts
from paddle_doctor.judge.findings import Evidence, Finding, Status, evidence, passed, skipped
from paddle_doctor.judge.gpu_support import cuda_visible
from paddle_doctor.judge.per_predictor import each_predictor
from paddle_doctor.judge.registry import Check, Need

NO_DEVICE, NO_RUNTIME, NO_DRIVER, NO_PERMISSION, CAPABILITIES = (
    "PD-GPU-003", "PD-GPU-006", "PD-GPU-007", "PD-GPU-008", "PD-GPU-009")
NVML_RULES = (NO_DEVICE, NO_RUNTIME, NO_DRIVER, NO_PERMISSION)
RULE_FOR_STATUS = {GpuStatus.NO_DEVICE: NO_DEVICE, GpuStatus.LIBRARY_NOT_FOUND: NO_RUNTIME, GpuStatus.DRIVER_NOT_LOADED: NO_DRIVER,
                   GpuStatus.DRIVER_MISMATCH: NO_DRIVER, GpuStatus.NO_PERMISSION: NO_PERMISSION}
NEEDED_CAPABILITIES = ("compute", "utility")


@evidence
class NvmlEvidence(Evidence):
    nvml_error: str | None
    kernel_driver: str | None
    device_nodes: list[str]


@evidence
class DevicesEvidence(Evidence):
    UNSAID = frozenset({"NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES"})  # said where the environment sets them

    nvml_devices: int
    visible_to_cuda: int
    device_id: int
    NVIDIA_VISIBLE_DEVICES: str | None = None
    CUDA_VISIBLE_DEVICES: str | None = None


@evidence
class CapabilitiesEvidence(Evidence):
    missing: list[str]
    capabilities: str


def check(facts: Facts) -> list[Finding]:
    gpu, capabilities = facts.gpu, capabilities_finding(facts)
    if gpu.status == GpuStatus.NOT_PROBED:
        return [skipped(rule, gpu.reason or "NVML was not probed") for rule in NVML_RULES] + [capabilities]
    if gpu.status in (GpuStatus.TIMEOUT, GpuStatus.FAILED, GpuStatus.NO_PYNVML):
        return [Finding(rule, Status.ERROR, f"cannot tell: {gpu.reason}") for rule in NVML_RULES] + [capabilities]
    fired = RULE_FOR_STATUS.get(gpu.status)
    if fired == NO_RUNTIME and capabilities.status == Status.FAIL and "utility" in capabilities.evidence["missing"]:
        return [skipped(rule, "NVML is missing because NVIDIA_DRIVER_CAPABILITIES lacks utility; see PD-GPU-009")
                for rule in NVML_RULES] + [capabilities]
    if fired is None:
        return [devices_finding(facts), *(passed(rule, f"NVML started (driver {gpu.driver_version})")
                                          for rule in (NO_RUNTIME, NO_DRIVER, NO_PERMISSION)), capabilities]
    failure = Finding(fired, Status.FAIL, nvml_failure_message(facts), observed=gpu.reason,
                      expected="NVML starts and lists the GPUs",
                      evidence=NvmlEvidence(gpu.nvml_error, gpu.kernel_driver, gpu.device_nodes))
    rest = [skipped(rule, f"NVML could not start; see {fired}") for rule in NVML_RULES if rule != fired]
    return [failure, *rest, capabilities]


def nvml_failure_message(facts: Facts) -> str:
    gpu = facts.gpu
    if gpu.status == GpuStatus.LIBRARY_NOT_FOUND:
        where = (f"although the host runs NVIDIA driver {gpu.kernel_driver}" if gpu.kernel_driver
                 else "and this host shows no NVIDIA kernel driver either")
        return f"the NVIDIA driver's libraries (libnvidia-ml.so.1, libcuda.so.1) are not in the container, {where}"
    if gpu.status == GpuStatus.DRIVER_MISMATCH:
        return "the loaded NVIDIA kernel module and the driver's libraries are different versions (upgraded without a reboot?)"
    if gpu.status == GpuStatus.DRIVER_NOT_LOADED:
        return "NVML's library is here but the NVIDIA kernel module is not loaded on the host"
    if gpu.status == GpuStatus.NO_PERMISSION:
        return f"NVML may not open the GPU device nodes ({', '.join(gpu.device_nodes) or 'no /dev/nvidia* found'})"
    return f"NVML finds no GPU: {gpu.reason}"


def devices_finding(facts: Facts) -> Finding:
    devices, env = facts.gpu.devices, facts.env
    visible = cuda_visible(env)
    count = len(devices) if visible is None else min(len(devices), len(visible))
    evidence = DevicesEvidence(len(devices), count, facts.service.gpu_device_id,
                               env.get("NVIDIA_VISIBLE_DEVICES"), env.get("CUDA_VISIBLE_DEVICES"))
    settings = ", ".join(f"{name}={env[name]!r}" for name in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") if name in env)
    if not devices:
        message = f"NVML lists no GPU in this container{f' ({settings})' if settings else ''}"
    elif count == 0:
        message = f"CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']!r} hides all {len(devices)} GPUs from CUDA"
    elif facts.service.gpu_device_id >= count:
        message = f"the service uses device_id {facts.service.gpu_device_id} but CUDA sees {count} GPU{'s' if count != 1 else ''}"
    else:
        return passed(NO_DEVICE, f"CUDA sees {count} GPU{'s' if count != 1 else ''}; the service uses device {facts.service.gpu_device_id}", evidence)
    return Finding(NO_DEVICE, Status.FAIL, message, observed=f"{count} GPUs visible to CUDA",
                   expected=f"device {facts.service.gpu_device_id} visible", evidence=evidence)


def capabilities_finding(facts: Facts) -> Finding:
    value = facts.env.get("NVIDIA_DRIVER_CAPABILITIES", "").strip()
    named = {part.strip() for part in value.split(",") if part.strip()}
    if not named:
        return passed(CAPABILITIES, "NVIDIA_DRIVER_CAPABILITIES is unset, so the NVIDIA runtime mounts compute and utility")
    if "all" in named:
        return passed(CAPABILITIES, f"NVIDIA_DRIVER_CAPABILITIES={value}")
    missing = [capability for capability in NEEDED_CAPABILITIES if capability not in named]
    if not missing:
        return passed(CAPABILITIES, f"NVIDIA_DRIVER_CAPABILITIES={value} includes compute and utility")
    fixed = ",".join(sorted(named | set(NEEDED_CAPABILITIES)))
    return Finding(CAPABILITIES, Status.FAIL, f"NVIDIA_DRIVER_CAPABILITIES={value} lacks {' and '.join(missing)}",
                   observed=value, expected="compute,utility (or all)",
                   evidence=CapabilitiesEvidence(missing, fixed))


CHECK = Check(name="gpu_visibility", rules=(*NVML_RULES, CAPABILITIES), run=each_predictor(check, on=Device.GPU), requires=(Need.GPU_SERVICE,),
              evidence={NO_DEVICE: (DevicesEvidence, NvmlEvidence), NO_RUNTIME: NvmlEvidence, NO_DRIVER: NvmlEvidence,
                        NO_PERMISSION: NvmlEvidence, CAPABILITIES: CapabilitiesEvidence})
