"""Runs in a child interpreter: asks NVML (``import pynvml``, from nvidia-ml-py) about the driver and GPUs.

Kept free of paddle_doctor imports; its text is passed with ``python -c`` (the current directory
is dropped from ``sys.path``). A wedged driver can hang any NVML call, so the parent runs this
with a timeout. Prints one ``RESULT`` line of JSON. A failure of ``nvmlInit`` is classified by
its NVML error code; a query one GPU cannot answer (Not Supported) leaves that field empty and
names it under ``unsupported``.
"""

import json
import sys
import time

sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]

INIT_FAILURES = {
    "NVML_ERROR_LIBRARY_NOT_FOUND": "library_not_found",
    "NVML_ERROR_DRIVER_NOT_LOADED": "driver_not_loaded",
    "NVML_ERROR_LIB_RM_VERSION_MISMATCH": "driver_mismatch",
    "NVML_ERROR_NO_PERMISSION": "no_permission",
    "NVML_ERROR_NOT_FOUND": "no_device",
    "NVML_ERROR_GPU_NOT_FOUND": "no_device",
}
THROTTLE_BITS = (
    (0x1, "gpu_idle"),
    (0x2, "applications_clocks_setting"),
    (0x4, "sw_power_cap"),
    (0x8, "hw_slowdown"),
    (0x10, "sync_boost"),
    (0x20, "sw_thermal_slowdown"),
    (0x40, "hw_thermal_slowdown"),
    (0x80, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
)


def emit(payload):
    sys.stdout.write("RESULT " + json.dumps(payload) + "\n")
    sys.stdout.flush()


def text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def error_name(pynvml, exc):
    code = getattr(exc, "value", None)
    for name in dir(pynvml):
        if name.startswith("NVML_ERROR_") and getattr(pynvml, name) == code:
            return name, code
    return "NVML_ERROR_UNKNOWN", code


def init_failure(pynvml, exc):
    name, code = error_name(pynvml, exc)
    return {
        "status": INIT_FAILURES.get(name, "failed"),
        "reason": f"nvmlInit failed: {exc}",
        "nvml_error": f"{name} ({code})",
    }


def describe(pynvml, index):
    handle = pynvml.nvmlDeviceGetHandleByIndex(index)
    unsupported = []

    def ask(field, *function_names):
        """NVML's answer, or None with the reason kept under ``unsupported``."""
        for function_name in function_names:
            function = getattr(pynvml, function_name, None)
            if function is not None:
                try:
                    return function(handle)
                except pynvml.NVMLError as exc:
                    unsupported.append(f"{field}: {exc}")
                    return None
        unsupported.append(f"{field}: this pynvml has no {function_names[0]}")
        return None

    name = ask("name", "nvmlDeviceGetName")
    capability = ask("compute_capability", "nvmlDeviceGetCudaComputeCapability")
    memory = ask("memory", "nvmlDeviceGetMemoryInfo")
    processes = ask("processes", "nvmlDeviceGetComputeRunningProcesses")
    persistence = ask("persistence_mode", "nvmlDeviceGetPersistenceMode")
    throttle = ask("throttle_reasons", "nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons")
    mig = ask("mig_mode", "nvmlDeviceGetMigMode")
    return {
        "index": index,
        "name": None if name is None else text(name),
        "compute_capability": None if capability is None else f"{capability[0]}.{capability[1]}",
        "memory_total_bytes": None if memory is None else int(memory.total),
        "memory_used_bytes": None if memory is None else int(memory.used),
        "memory_free_bytes": None if memory is None else int(memory.free),
        "processes": None if processes is None else [
            {"pid": int(proc.pid), "used_memory_bytes": getattr(proc, "usedGpuMemory", None)} for proc in processes
        ],
        "persistence_mode": None if persistence is None else bool(persistence),
        "throttle_reasons": None if throttle is None else [label for bit, label in THROTTLE_BITS if int(throttle) & bit],
        "mig_mode": None if mig is None else bool(mig[0]),
        "unsupported": unsupported,
    }


def cuda_version(number):
    return f"{number // 1000}.{number % 1000 // 10}"


def system_answer(pynvml, function, convert):
    try:
        return convert(function())
    except pynvml.NVMLError:
        return None


def main():
    start = time.perf_counter()
    try:
        import pynvml
    except ImportError as exc:
        emit({"status": "no_pynvml", "reason": f"cannot import pynvml (install nvidia-ml-py): {exc}"})
        return
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        emit(init_failure(pynvml, exc))
        return
    try:
        result = {
            "status": "ok",
            "driver_version": system_answer(pynvml, pynvml.nvmlSystemGetDriverVersion, text),
            "cuda_driver_version": system_answer(pynvml, pynvml.nvmlSystemGetCudaDriverVersion, cuda_version),
            "devices": [describe(pynvml, index) for index in range(pynvml.nvmlDeviceGetCount())],
        }
    except pynvml.NVMLError as exc:
        name, code = error_name(pynvml, exc)
        result = {"status": "failed", "reason": f"NVML query failed: {exc}", "nvml_error": f"{name} ({code})"}
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass
    result["seconds"] = round(time.perf_counter() - start, 3)
    emit(result)


main()
