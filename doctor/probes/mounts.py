"""Mount table from /proc/self/mountinfo (the cgroup, /dev/shm and cache-volume probes use it)."""

from __future__ import annotations

from ..facts import Mount
from .common import Reader

MOUNTINFO = "/proc/self/mountinfo"


def probe_mounts(reader: Reader) -> list[Mount]:
    text = reader.text("mounts", MOUNTINFO)
    if text is None:
        return []
    mounts = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        mount = parse_mountinfo_line(line)
        if mount is None:
            reader.note("mounts", MOUNTINFO, f"line {number} is not in mountinfo format")
            continue
        mounts.append(mount)
    return mounts


def parse_mountinfo_line(line: str) -> Mount | None:
    # id parent major:minor root mountpoint options [optional...] - fstype source super_options
    left, sep, right = line.partition(" - ")
    if not sep:
        return None
    head, tail = left.split(), right.split()
    if len(head) < 6 or len(tail) < 2:
        return None
    return Mount(
        mountpoint=_unescape(head[4]),
        fstype=tail[0],
        source=_unescape(tail[1]),
        root=_unescape(head[3]),
        options=head[5].split(","),
        super_options=tail[2].split(",") if len(tail) > 2 else [],
    )


def _unescape(field: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal (``\\040``)."""
    if "\\" not in field:
        return field
    out, i = [], 0
    while i < len(field):
        if field[i] == "\\" and field[i + 1 : i + 4].isdigit():
            out.append(chr(int(field[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(field[i])
            i += 1
    return "".join(out)
