"""Mount table from /proc/self/mountinfo (the cgroup, /dev/shm and cache-volume probes use it)."""

from __future__ import annotations

from ..facts import Mount
from .common import Reader

MOUNTINFO = "/proc/self/mountinfo"
CONTAINER_LAYER = ("overlay", "aufs", "fuse-overlayfs")
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")


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


def mount_for(mounts: list[Mount], path: str) -> Mount | None:
    """The mount that holds ``path``: the longest mountpoint prefix, the last one mounted wins."""
    best: Mount | None = None
    for mount in mounts:
        point = mount.mountpoint.rstrip("/") or "/"
        under = path == point or path.startswith(point.rstrip("/") + "/") or point == "/"
        if under and (best is None or len(point) >= len(best.mountpoint.rstrip("/") or "/")):
            best = mount
    return best


def lost_on_restart(mount: Mount) -> str | None:
    """Why files on this mount do not outlive the container, or None for a volume or bind mount."""
    if mount.fstype in CONTAINER_LAYER and mount.mountpoint == "/":
        return f"the container's writable layer ({mount.fstype} at /), which is thrown away with the container"
    if mount.fstype in MEMORY_FILESYSTEMS:
        return f"{mount.fstype} at {mount.mountpoint}, which lives in memory and is lost at every restart"
    return None


def option_size_bytes(options: list[str]) -> int | None:
    """tmpfs ``size=65536k`` -> bytes."""
    for option in options:
        if option.startswith("size="):
            value = option[5:]
            units = {"k": 1024, "m": 1024**2, "g": 1024**3}
            try:
                if value and value[-1].lower() in units:
                    return int(value[:-1]) * units[value[-1].lower()]
                return int(value)
            except ValueError:
                return None
    return None
