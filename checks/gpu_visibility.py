"""GPU visibility: can the service reach a GPU from inside this container, and if not, why?

Each way NVML fails has its own cause: no NVML library (the container was started without the
NVIDIA runtime), the kernel driver not loaded (or not matching its libraries), no permission on
the device nodes, no device visible (NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES, device_id),
and NVIDIA_DRIVER_CAPABILITIES without compute (libcuda) or utility (NVML).
Why: a GPU service that cannot reach its GPU fails at start or quietly runs nothing on the GPU.
Fix: start the container with ``--gpus all`` and ``NVIDIA_DRIVER_CAPABILITIES=compute,utility``;
the finding names the failing piece.
"""

from __future__ import annotations

from paddle_doctor.facts import Facts
from paddle_doctor.findings import Finding, Status, passed, skipped
from paddle_doctor.gpu import cuda_visible
from paddle_doctor.registry import Check, Need

NO_DEVICE, NO_RUNTIME, NO_DRIVER, NO_PERMISSION, CAPABILITIES = (
    "PD-GPU-003", "PD-GPU-006", "PD-GPU-007", "PD-GPU-008", "PD-GPU-009")
NVML_RULES = (NO_DEVICE, NO_RUNTIME, NO_DRIVER, NO_PERMISSION)
RULE_FOR_STATUS = {"no_device": NO_DEVICE, "library_not_found": NO_RUNTIME, "driver_not_loaded": NO_DRIVER,
                   "driver_mismatch": NO_DRIVER, "no_permission": NO_PERMISSION}
NEEDED_CAPABILITIES = ("compute", "utility")


def check(facts: Facts) -> list[Finding]:
    gpu, capabilities = facts.gpu, capabilities_finding(facts)
    if gpu.status == "not_probed":
        return [skipped(rule, gpu.reason or "NVML was not probed") for rule in NVML_RULES] + [capabilities]
    if gpu.status in ("timeout", "failed", "no_pynvml"):
        return [Finding(rule, Status.ERROR, f"cannot tell: {gpu.reason}") for rule in NVML_RULES] + [capabilities]
    fired = RULE_FOR_STATUS.get(gpu.status)
    if fired == NO_RUNTIME and capabilities.status == Status.FAIL and "utility" in capabilities.evidence["missing"]:
        return [skipped(rule, "NVML is missing because NVIDIA_DRIVER_CAPABILITIES lacks utility; see PD-GPU-009")
                for rule in NVML_RULES] + [capabilities]
    if fired is None:
        return [devices_finding(facts), *(passed(rule, f"NVML started (driver {gpu.driver_version})")
                                          for rule in (NO_RUNTIME, NO_DRIVER, NO_PERMISSION)), capabilities]
    failure = Finding(fired, Status.FAIL, nvml_failure_message(facts), observed=gpu.reason,
                      expected="NVML starts and lists the GPUs", evidence={"nvml_error": gpu.nvml_error,
                      "kernel_driver": gpu.kernel_driver, "device_nodes": gpu.device_nodes})
    rest = [skipped(rule, f"NVML could not start; see {fired}") for rule in NVML_RULES if rule != fired]
    return [failure, *rest, capabilities]


def nvml_failure_message(facts: Facts) -> str:
    gpu = facts.gpu
    if gpu.status == "library_not_found":
        where = (f"although the host runs NVIDIA driver {gpu.kernel_driver}" if gpu.kernel_driver
                 else "and this host shows no NVIDIA kernel driver either")
        return f"the NVIDIA driver's libraries (libnvidia-ml.so.1, libcuda.so.1) are not in the container, {where}"
    if gpu.status == "driver_mismatch":
        return "the loaded NVIDIA kernel module and the driver's libraries are different versions (upgraded without a reboot?)"
    if gpu.status == "driver_not_loaded":
        return "NVML's library is here but the NVIDIA kernel module is not loaded on the host"
    if gpu.status == "no_permission":
        return f"NVML may not open the GPU device nodes ({', '.join(gpu.device_nodes) or 'no /dev/nvidia* found'})"
    return f"NVML finds no GPU: {gpu.reason}"


def devices_finding(facts: Facts) -> Finding:
    devices, env = facts.gpu.devices, facts.env
    visible = cuda_visible(env)
    count = len(devices) if visible is None else min(len(devices), len(visible))
    evidence = {"nvml_devices": len(devices), "visible_to_cuda": count, "device_id": facts.service.gpu_device_id,
                **{name: env[name] for name in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") if name in env}}
    settings = ", ".join(f"{name}={env[name]!r}" for name in ("NVIDIA_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES") if name in env)
    if not devices:
        message = f"NVML lists no GPU in this container{f' ({settings})' if settings else ''}"
    elif count == 0:
        message = f"CUDA_VISIBLE_DEVICES={env['CUDA_VISIBLE_DEVICES']!r} hides all {len(devices)} GPUs from CUDA"
    elif facts.service.gpu_device_id >= count:
        message = f"the service uses device_id {facts.service.gpu_device_id} but CUDA sees {count} GPU{'s' if count != 1 else ''}"
    else:
        return passed(NO_DEVICE, f"CUDA sees {count} GPU{'s' if count != 1 else ''}; the service uses device {facts.service.gpu_device_id}", **evidence)
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
                   evidence={"missing": missing, "capabilities": fixed})


CHECK = Check(name="gpu_visibility", rules=(*NVML_RULES, CAPABILITIES), run=check, requires=(Need.GPU_SERVICE,))
