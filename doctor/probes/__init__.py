"""Probes: the only code that touches the machine. ``collect_facts`` runs them all."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from .. import __version__
from ..base.timebox import Background
from ..base.vocabulary import PaddleStatus
from ..facts import Facts, PaddleFacts, ServiceConfig
from .cgroup import probe_cgroup
from .common import Reader
from .context import ProbeContext
from .cpu import probe_cpu
from .gpu import probe_gpu
from .libraries import probe_libraries
from .mounts import probe_mounts
from .paddle_import import probe_paddle
from .system import live_environment, probe_container, probe_host, probe_process
from .trt_cache import probe_trt_cache

if TYPE_CHECKING:
    from ..base.interpreter import Interpreter

NOT_PROBED = "the Paddle probe was not run (--no-paddle, or --root without --python)"


def collect_facts(
    ctx: ProbeContext,
    service: ServiceConfig,
    interpreter: Interpreter | None,
    paddle_timeout: float,
    environ: dict[str, str] | None = None,
    gpu_python: str | None = None,
    gpu_timeout: float = 30.0,
    not_probed: str = NOT_PROBED,
) -> Facts:
    """Probe everything. The Paddle import (about a second) and NVML run in parallel with the rest.

    ``interpreter``: the interpreter whose Paddle to probe, and as whom; None skips the Paddle probe,
    and ``not_probed`` says why. ``gpu_python``: the interpreter that asks NVML (it needs
    nvidia-ml-py); None skips NVML.
    """
    # the two children run while the rest is read, in daemon threads: a stop signal ends the wait for them,
    # and a read that never returns in one holds neither the doctor nor its exit
    paddle_probe = Background(lambda: probe_paddle(ctx, interpreter, paddle_timeout), "paddle-probe") if interpreter else None
    reader, gpu_reader = Reader(ctx), Reader(ctx)
    gpu_probe = Background(lambda: probe_gpu(gpu_reader, gpu_python, gpu_timeout), "gpu-probe") if gpu_python else None
    env = live_environment() if environ is None else environ
    mounts = probe_mounts(reader)
    cgroup, memory = probe_cgroup(reader, mounts)
    host, container, cpu, process = probe_host(reader), probe_container(reader, mounts, env), probe_cpu(reader), probe_process(reader)
    trt_cache = probe_trt_cache(reader, service)
    if paddle_probe is not None:
        paddle = paddle_probe.result()
    else:
        paddle = PaddleFacts(status=PaddleStatus.NOT_PROBED, reason=not_probed)
    libraries = probe_libraries(reader, env, paddle.cuda_lib_dirs)
    gpu = gpu_probe.result() if gpu_probe else probe_gpu(gpu_reader, None, gpu_timeout)
    return Facts(doctor_version=__version__, root=os.fspath(ctx.root), host=host, container=container, cpu=cpu, cgroup=cgroup,
                 memory=memory, process=process, mounts=mounts, env=env, service=service, paddle=paddle, gpu=gpu,
                 libraries=libraries, trt_cache=trt_cache, issues=reader.issues + gpu_reader.issues)
