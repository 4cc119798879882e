"""What the mount table says of a path: the mount that holds it, whether what is written there outlives the
container, a tmpfs's size."""

from __future__ import annotations

from . import Mount

CONTAINER_LAYER = ("overlay", "aufs", "fuse-overlayfs")
MEMORY_FILESYSTEMS = ("tmpfs", "ramfs")


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
