"""Probes: the only code that touches the machine. ``collect_facts`` runs them all."""

from __future__ import annotations

import os
from contextlib import nullcontext

from .. import __version__
from ..context import ProbeContext
from ..facts import Facts, PaddleFacts, ServiceFacts
from .cgroup import probe_cgroup
from .common import Reader
from .cpu import probe_cpu
from .mounts import probe_mounts
from .paddle_import import probe_paddle
from .system import live_environment, probe_container, probe_host, probe_process


def collect_facts(
    ctx: ProbeContext,
    service: ServiceFacts,
    python: str | None,
    paddle_timeout: float,
    environ: dict[str, str] | None = None,
) -> Facts:
    """Probe everything. The Paddle import (about a second) runs in parallel with the rest.

    ``python``: the interpreter whose Paddle to probe; None skips the Paddle probe.
    """
    with _paddle_pool(python) as pool:
        paddle_future = pool.submit(probe_paddle, ctx, python, paddle_timeout) if python else None
        reader = Reader(ctx)
        env = live_environment() if environ is None else environ
        mounts = probe_mounts(reader)
        cgroup, memory = probe_cgroup(reader, mounts)
        facts = Facts(
            doctor_version=__version__,
            root=os.fspath(ctx.root),
            host=probe_host(reader),
            container=probe_container(reader, mounts, env),
            cpu=probe_cpu(reader),
            cgroup=cgroup,
            memory=memory,
            process=probe_process(reader),
            mounts=mounts,
            env=env,
            service=service,
        )
        facts.issues = reader.issues
        if paddle_future is not None:
            facts.paddle = paddle_future.result()
        else:
            facts.paddle = PaddleFacts(status="not_probed", reason="the Paddle probe was not run (--no-paddle, or --root without --python)")
    return facts


def _paddle_pool(python: str | None):
    """A thread for the Paddle import, or none where Paddle is not probed (the healthcheck saves the import)."""
    if python is None:
        return nullcontext()
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(max_workers=1)
