"""The GPU probe: NVML in a child process with a timeout, and the kernel driver's traces under the root.

NVML runs in a child because a wedged driver hangs it (the child is killed at the timeout and the
report still comes out) and because loading ``libnvidia-ml`` must not touch the doctor.
``/proc/driver/nvidia/version`` and the ``/dev/nvidia*`` nodes show whether the host has an NVIDIA
driver even when the container cannot reach it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

from ..base.serde import DecodeError, from_data
from ..base.vocabulary import GpuStatus
from ..facts import GpuFacts
from .common import Reader, last_line, tagged_lines
from .context import ProbeContext

CHILD_SCRIPT = Path(__file__).with_name("nvml_child.py")
KERNEL_DRIVER_FILE = "/proc/driver/nvidia/version"
KERNEL_MODULE_VERSION = re.compile(r"Kernel Module\s+(?:for \S+\s+)?(\d+(?:\.\d+)+)")


def probe_gpu(reader: Reader, python: str | None, timeout: float) -> GpuFacts:
    """``python``: the interpreter that imports pynvml (the doctor's own); None leaves NVML out."""
    if python is None:
        facts = GpuFacts(status=GpuStatus.NOT_PROBED, reason="NVML was not probed (--no-gpu, or --root without --gpu)")
    else:
        facts = probe_nvml(reader.ctx, python, timeout)
    return replace(facts, kernel_driver=kernel_driver(reader), device_nodes=device_nodes(reader.ctx))


def probe_nvml(ctx: ProbeContext, python: str, timeout: float) -> GpuFacts:
    result = ctx.run([python, "-c", CHILD_SCRIPT.read_text(encoding="utf-8")], timeout=timeout)
    seconds = round(result.seconds, 3)
    if result.timed_out:
        return GpuFacts(status=GpuStatus.TIMEOUT, seconds=seconds,
                        reason=f"NVML did not answer within {timeout:g} s (a wedged driver hangs NVML calls); the probe was killed")
    payload = tagged_lines(result.stdout, ("RESULT",)).get("RESULT")
    if payload is None:
        how = f"was killed by {result.signal_name}" if result.signal_name else f"exited with code {result.returncode}"
        return GpuFacts(status=GpuStatus.FAILED, seconds=seconds, reason=f"the NVML probe {how}: {last_line(result.stderr)}")
    try:
        facts = from_data(GpuFacts, payload, "NVML probe")
    except DecodeError as exc:
        return GpuFacts(status=GpuStatus.FAILED, seconds=seconds, reason=f"the NVML probe printed unexpected data: {exc}")
    return facts if facts.seconds is not None else replace(facts, seconds=seconds)


def kernel_driver(reader: Reader) -> str | None:
    """The loaded kernel module's version, e.g. ``535.104.05``; None when no NVIDIA driver is loaded."""
    text = reader.text("gpu", KERNEL_DRIVER_FILE, required=False)
    if not text:
        return None
    match = KERNEL_MODULE_VERSION.search(text)
    return match.group(1) if match else text.splitlines()[0].strip()


def device_nodes(ctx: ProbeContext) -> list[str]:
    try:
        return [f"/dev/{name}" for name in ctx.listdir("/dev") if name.startswith("nvidia")]
    except OSError:
        return []
