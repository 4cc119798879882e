"""CPU lists as the kernel writes them (``0-3,8,10-11``), read and written."""

from __future__ import annotations


def parse_cpu_list(text: str) -> list[int]:
    """Kernel CPU list syntax (``0-3,8,10-11``) to sorted CPU numbers; ValueError if malformed."""
    cpus: set[int] = set()
    for part in text.strip().split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part:
            low, high = part.split("-", 1)
            if int(low) > int(high):
                raise ValueError(f"bad CPU range {part!r}")
            cpus.update(range(int(low), int(high) + 1))
        else:
            cpus.add(int(part))
    return sorted(cpus)


def format_cpu_list(cpus: list[int]) -> str:
    """Inverse of :func:`parse_cpu_list`: ``[0, 1, 2, 5]`` -> ``0-2,5``."""
    ranges: list[str] = []
    start = prev = None
    for cpu in sorted(cpus):
        if prev is not None and cpu == prev + 1:
            prev = cpu
            continue
        if start is not None:
            ranges.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = cpu
    if start is not None:
        ranges.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(ranges)
