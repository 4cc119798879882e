"""Baselines: what must stay true in a running container, recorded once when it starts.

``paddle-doctor baseline --out PATH`` runs in the container's entrypoint, after the warm-up and
before the service takes traffic (at image build it would record the builder's limits, driver and
counters). It records the CPU budget against the threads the service configures, the memory limit,
the cgroup throttling counters, the Paddle build, the GPUs a GPU service sees with the driver that
serves them, and the optimisation / TensorRT engine cache (where it is, what it holds, whether it is
on a volume), with relative paths resolved. It also pins the fast checks and the rules and settings
they are judged by, so that
``paddle-doctor healthcheck --baseline PATH`` neither scans entry points nor parses rules.yaml.

The file is JSON with its own ``schema_version``; a baseline of another version is refused with
"re-create the baseline", since the healthcheck would otherwise compare the wrong things.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

from ..base.quoting import shell_word
from ..base.serde import decode_document, load_json_file, to_data
from ..base.words import byte_size
from ..facts import Facts, ServiceConfig, paddle_status_words
from ..facts.baseline import (
    BaselineCache,
    BaselineCpu,
    BaselineFacts,
    BaselineGpu,
    BaselineMemory,
    BaselinePaddle,
    BaselineThrottling,
)
from ..facts.budget import cpu_budget, service_threads
from ..facts.pinned import baseline_cache, gpu_nodes
from ..judge.gpu_support import uses_gpu
from ..judge.policy import Policy
from ..judge.registry import Check, LoadFailure, Need, applying_checks, discover_registered
from ..judge.rules import Rule, Rulebook
from ..probes.context import ProbeContext
from ..probes.trt_cache import absolute

SCHEMA_VERSION = 3  # 3: the comparisons with the running container are pinned checks (PD-HEALTH-*)
KIND = "paddle-doctor baseline"


class BaselineError(ValueError):
    """A baseline that cannot be used; the message names the file and what to do."""


@dataclass
class PinnedCheck:
    """A fast check the healthcheck loads directly by its entry-point reference."""

    name: str
    reference: str


@dataclass
class Baseline:
    """What must stay true in this container, and the checks, rules and settings the healthcheck judges by."""

    schema_version: int
    kind: str
    doctor_version: str
    root: str
    service: ServiceConfig
    settings: Policy
    checks: list[PinnedCheck]
    rules: list[Rule]
    cpu: BaselineCpu
    memory: BaselineMemory
    throttling: BaselineThrottling
    paddle: BaselinePaddle
    gpu: BaselineGpu | None
    cache: BaselineCache | None

    def to_json(self) -> str:
        return json.dumps(to_data(self), indent=2, sort_keys=True) + "\n"

    def pinned_checks(self) -> list[Check]:
        from ..judge.registry import load_pinned

        return [load_pinned(pinned.name, pinned.reference) for pinned in self.checks]

    def describe(self, facts: Facts) -> str:
        budget = f"{self.cpu.budget_cpus:g}" if self.cpu.budget_cpus is not None else "unknown"
        memory = byte_size(self.memory.limit_bytes, "unlimited")
        if self.cache is None:
            cache = "no cache configured"
        else:
            cache = f"cache {self.cache.path}: {self.cache.files} files, {self.cache.engines} TensorRT engines"
            cache += "" if self.cache.persisted else f" (not on a volume: {self.cache.fstype or 'no mount found'})"
        if self.gpu is None:
            gpu = "no GPU service"
        else:
            gpu = f"GPUs {', '.join(self.gpu.devices or self.gpu.device_nodes) or 'none'}, driver {self.gpu.kernel_driver or 'not loaded'}"
        return (f"cpu budget {budget} for {self.cpu.total_threads} threads; memory limit {memory}; "
                f"{'paddle ' + self.paddle.installed if self.paddle.installed else paddle_status_words(self.paddle.status)}; {gpu}; {cache}; "
                f"{applying_checks(self.pinned_checks(), facts, assume=frozenset({Need.BASELINE}))}, pinned")

    def rulebook(self) -> Rulebook:
        return Rulebook(f"baseline ({len(self.rules)} pinned rules)", {rule.id: rule for rule in self.rules})

    def as_facts(self, file: str, ctx: ProbeContext) -> BaselineFacts:
        """What was recorded, for the checks, with the Paddle build read again now from its METADATA file."""
        now, problem = read_installed(ctx, self.paddle.metadata_file) if self.paddle.metadata_file else (None, None)
        return BaselineFacts(file, self.cpu, self.memory, self.throttling, self.paddle, self.gpu, self.cache, now, problem)


def record_baseline(facts: Facts, ctx: ProbeContext, rulebook: Rulebook, settings: Policy) -> tuple[Baseline, list[LoadFailure]]:
    """The baseline for these facts, and the checks that could not be loaded (not pinned)."""
    registered, load_failures = discover_registered(rulebook)
    pinned = [PinnedCheck(check.name, reference) for reference, check in registered if check.fast]
    declared = {rule for _, check in registered if check.fast for rule in check.rules}
    budget = cpu_budget(facts)
    threads, source = service_threads(facts)
    baseline = Baseline(
        schema_version=SCHEMA_VERSION,
        kind=KIND,
        doctor_version=facts.doctor_version,
        root=facts.root,
        service=with_absolute_paths(facts.service, ctx),
        settings=settings,
        checks=pinned,
        rules=[rule for rule in rulebook.ordered() if rule.id in declared],
        cpu=BaselineCpu(budget.cpus if budget else None, budget.limited_by.what if budget else None,
                      budget.limited_by.source if budget else None, threads, source, facts.service.instances),
        memory=BaselineMemory(facts.memory.limit_bytes, facts.memory.limit_file),
        throttling=BaselineThrottling(facts.cgroup.nr_periods, facts.cgroup.nr_throttled),
        paddle=_baseline_paddle(facts, ctx),
        gpu=baseline_gpu(facts) if uses_gpu(facts) else None,
        cache=baseline_cache(facts),
    )
    return baseline, load_failures


def with_absolute_paths(service: ServiceConfig, ctx: ProbeContext) -> ServiceConfig:
    """The service as recorded: relative paths resolved as the probes resolved them, so that a
    healthcheck started in another working directory looks at the same cache and files."""
    def resolved(path: str | None) -> str | None:
        return absolute(ctx, path) if path else path

    tensorrt = dataclasses.replace(service.tensorrt, dynamic_shape_file=resolved(service.tensorrt.dynamic_shape_file))
    return dataclasses.replace(service, model=resolved(service.model), optim_cache_dir=resolved(service.optim_cache_dir), tensorrt=tensorrt)


def baseline_gpu(facts: Facts) -> BaselineGpu:
    gpu = facts.gpu
    return BaselineGpu(kernel_driver=gpu.kernel_driver, device_nodes=gpu_nodes(facts),
                     nvml_driver=gpu.driver_version if gpu.status == "ok" else None,
                     devices=[f"{device.index}: {device.name}" for device in gpu.devices], boot_id=facts.host.boot_id)


def _baseline_paddle(facts: Facts, ctx: ProbeContext) -> BaselinePaddle:
    """The Paddle build, with its METADATA file as the Paddle probe found it (the healthcheck reads it
    again without importing Paddle) and the name and version that file gives."""
    paddle = facts.paddle
    metadata_file = paddle.metadata_file if paddle.distribution else None
    installed = read_installed(ctx, metadata_file)[0] if metadata_file else None
    return BaselinePaddle(paddle.status, paddle.distribution, paddle.version, paddle.with_cuda, paddle.cuda_version,
                        paddle.compiled_with_mkldnn, metadata_file, installed)


def read_installed(ctx: ProbeContext, metadata_file: str) -> tuple[str | None, str | None]:
    """("name version", None) from a distribution's METADATA file, or (None, why not)."""
    try:
        text = ctx.read_text(metadata_file)
    except FileNotFoundError:
        return None, f"{metadata_file} is gone"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"cannot read {metadata_file} ({exc})"
    headers = {}
    for line in text.split("\n\n", 1)[0].splitlines():
        key, sep, value = line.partition(":")
        if sep and key in ("Name", "Version"):
            headers[key] = value.strip()
    if len(headers) != 2:
        return None, f"{metadata_file} has no Name and Version"
    return f"{headers['Name'].lower().replace('_', '-')} {headers['Version']}", None


def write_baseline(baseline: Baseline, path: str | Path) -> None:
    from ..render.output import write_text_atomically  # here: the healthcheck reads a baseline, never writes one

    write_text_atomically(path, baseline.to_json(), BaselineError, "baseline")


def record_command(path: str | Path) -> str:
    """The command that records a baseline at ``path``, to paste."""
    return f"paddle-doctor baseline --out {shell_word(path)}"


def load_baseline(path: str | Path) -> Baseline:
    record = f"record it with '{record_command(path)}'"
    data = load_json_file(path, BaselineError, "baseline", record)
    if not isinstance(data, dict) or data.get("kind") != KIND:
        raise BaselineError(f"{path}: not a paddle-doctor baseline; {record}")
    return decode_document(Baseline, data, str(path), "baseline", SCHEMA_VERSION, BaselineError,
                           f"re-create the baseline with '{record_command(path)}'")

