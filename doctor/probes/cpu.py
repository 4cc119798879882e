"""CPU model and instruction-set flags, from /proc/cpuinfo (py-cpuinfo only where there is none)."""

from __future__ import annotations

import os
from dataclasses import replace

from ..base.cpus import parse_cpu_list
from ..facts import CpuFacts
from .common import Reader

CPUINFO = "/proc/cpuinfo"
ONLINE = "/sys/devices/system/cpu/online"


def probe_cpu(reader: Reader) -> CpuFacts:
    text = reader.text("cpu", CPUINFO, required=False)
    if text is not None and text.strip():
        facts = _from_cpuinfo(text)
    elif text is not None:
        reader.note("cpu", CPUINFO, "file is empty")
        facts = CpuFacts()
    elif reader.ctx.is_live:
        facts = _from_py_cpuinfo(reader)
    else:
        reader.note("cpu", CPUINFO, "file not found")
        facts = CpuFacts()
    return replace(facts, online_cpus=_online_cpus(reader))


def _online_cpus(reader: Reader) -> list[int] | None:
    online = reader.text("cpu", ONLINE, required=False)
    if online is None:
        return None
    try:
        return parse_cpu_list(online)
    except ValueError:
        reader.note("cpu", ONLINE, f"not a CPU list: {online.strip()[:40]!r}")
        return None


def _from_cpuinfo(text: str) -> CpuFacts:
    blocks = [block for block in text.split("\n\n") if block.strip()]
    fields: dict[str, str] = {}
    processors = 0
    for block in blocks:
        block_fields = _parse_block(block)
        if "processor" in block_fields:
            processors += 1
        for key, value in block_fields.items():
            fields.setdefault(key, value)
    logical_cpus = processors or None
    if "flags" in fields:
        return CpuFacts(source=CPUINFO, arch="x86_64", vendor=fields.get("vendor_id"), model_name=fields.get("model name"),
                        logical_cpus=logical_cpus, flags=sorted(set(fields["flags"].split())))
    if "Features" in fields or "CPU implementer" in fields:
        return CpuFacts(source=CPUINFO, arch="aarch64", vendor=fields.get("CPU implementer"),
                        model_name=fields.get("model name") or _arm_part_name(fields), logical_cpus=logical_cpus,
                        flags=sorted(set(fields.get("Features", "").split())))
    return CpuFacts(source=CPUINFO, arch=fields.get("arch") or None, logical_cpus=logical_cpus)


def _parse_block(block: str) -> dict[str, str]:
    fields = {}
    for line in block.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


_ARM_PARTS = {
    ("0x41", "0xd0c"): "ARM Neoverse-N1",
    ("0x41", "0xd40"): "ARM Neoverse-V1",
    ("0x41", "0xd4f"): "ARM Neoverse-V2",
    ("0x41", "0xd49"): "ARM Neoverse-N2",
    ("0x41", "0xd08"): "ARM Cortex-A72",
}


def _arm_part_name(fields: dict[str, str]) -> str | None:
    key = (fields.get("CPU implementer", ""), fields.get("CPU part", ""))
    return _ARM_PARTS.get(key, f"ARM implementer {key[0]} part {key[1]}" if key[0] else None)


def _from_py_cpuinfo(reader: Reader) -> CpuFacts:
    try:
        import cpuinfo

        info = cpuinfo.get_cpu_info()
    except Exception as exc:  # py-cpuinfo fails in many odd ways on odd machines
        reader.note("cpu", None, f"py-cpuinfo failed: {exc}")
        return CpuFacts()
    return CpuFacts(source="py-cpuinfo", arch=os.uname().machine or info.get("arch_string_raw"), vendor=info.get("vendor_id_raw"),
                    model_name=info.get("brand_raw"), logical_cpus=info.get("count"), flags=sorted(set(info.get("flags", []))))
