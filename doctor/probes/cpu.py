"""CPU model and instruction-set flags, from /proc/cpuinfo (py-cpuinfo only where there is none)."""

from __future__ import annotations

import os

from ..base.cpus import parse_cpu_list
from ..facts import CpuFacts
from .common import Reader

CPUINFO = "/proc/cpuinfo"
ONLINE = "/sys/devices/system/cpu/online"


def probe_cpu(reader: Reader) -> CpuFacts:
    facts = CpuFacts()
    text = reader.text("cpu", CPUINFO, required=False)
    if text is not None and text.strip():
        _fill_from_cpuinfo(facts, text)
        facts.source = CPUINFO
    elif text is not None:
        reader.note("cpu", CPUINFO, "file is empty")
    elif reader.ctx.is_live:
        _fill_from_py_cpuinfo(facts, reader)
    else:
        reader.note("cpu", CPUINFO, "file not found")
    online = reader.text("cpu", ONLINE, required=False)
    if online is not None:
        try:
            facts.online_cpus = parse_cpu_list(online)
        except ValueError:
            reader.note("cpu", ONLINE, f"not a CPU list: {online.strip()[:40]!r}")
    return facts


def _fill_from_cpuinfo(facts: CpuFacts, text: str) -> None:
    blocks = [block for block in text.split("\n\n") if block.strip()]
    fields: dict[str, str] = {}
    processors = 0
    for block in blocks:
        block_fields = _parse_block(block)
        if "processor" in block_fields:
            processors += 1
        for key, value in block_fields.items():
            fields.setdefault(key, value)
    facts.logical_cpus = processors or None
    if "flags" in fields:
        facts.arch = "x86_64"
        facts.flags = sorted(set(fields["flags"].split()))
        facts.vendor = fields.get("vendor_id")
        facts.model_name = fields.get("model name")
    elif "Features" in fields or "CPU implementer" in fields:
        facts.arch = "aarch64"
        facts.flags = sorted(set(fields.get("Features", "").split()))
        facts.vendor = fields.get("CPU implementer")
        facts.model_name = fields.get("model name") or _arm_part_name(fields)
    else:
        facts.arch = fields.get("arch") or None


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


def _fill_from_py_cpuinfo(facts: CpuFacts, reader: Reader) -> None:
    try:
        import cpuinfo

        info = cpuinfo.get_cpu_info()
    except Exception as exc:  # py-cpuinfo fails in many odd ways on odd machines
        reader.note("cpu", None, f"py-cpuinfo failed: {exc}")
        return
    facts.source = "py-cpuinfo"
    facts.arch = os.uname().machine or info.get("arch_string_raw")
    facts.vendor = info.get("vendor_id_raw")
    facts.model_name = info.get("brand_raw")
    facts.logical_cpus = info.get("count")
    facts.flags = sorted(set(info.get("flags", [])))
