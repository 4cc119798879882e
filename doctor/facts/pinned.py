"""What a baseline pins of the facts beside their own numbers: the GPU nodes the container was given,
the optimisation cache and the mount it sits on (the baseline records them; its checks compare them)."""

from __future__ import annotations

import re

from . import Facts
from .baseline import BaselineCache
from .mounts import lost_on_restart, mount_for

GPU_NODE = re.compile(r"^/dev/nvidia\d+$")


def gpu_nodes(facts: Facts) -> list[str]:
    """The ``/dev/nvidiaN`` nodes, one per GPU the container was given (not nvidiactl or nvidia-uvm)."""
    return sorted(node for node in facts.gpu.device_nodes if GPU_NODE.match(node))


def baseline_cache(facts: Facts) -> BaselineCache | None:
    """The optimisation / engine cache as probed, with the mount it sits on; None when the service uses none."""
    cache = facts.trt_cache
    if cache.status != "probed" or cache.directory is None:
        return None
    mount = mount_for(facts.mounts, cache.directory)
    return BaselineCache(cache.directory, exists=cache.exists, files=cache.files, engines=len(cache.engines),
                       mountpoint=mount.mountpoint if mount else None, fstype=mount.fstype if mount else None,
                       error=cache.list_error, lost_on_restart=lost_on_restart(mount) if mount else None)
