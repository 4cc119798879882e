"""Hand-built Facts for table-driven check tests."""

from __future__ import annotations

import dataclasses
import enum
import types
import typing

from paddle_doctor.base.serde import field_types
from paddle_doctor.facts import CgroupFacts, CpuFacts, Facts, PaddleFacts, ProcessFacts, ServiceConfig

AVX2_FLAGS = ["fpu", "sse4_2", "avx", "avx2", "fma"]
AVX512_BF16_FLAGS = AVX2_FLAGS + ["avx512f", "avx512_vnni", "avx512_bf16"]


def paddle_ok(**overrides) -> PaddleFacts:
    values = dict(status="ok", python="/usr/bin/python3", distribution="paddlepaddle", version="3.3.1",
                  with_cuda=False, compiled_with_avx=True, compiled_with_mkldnn=True, mkldnn_default_on=True,
                  default_threads=1, import_seconds=1.0)
    values.update(overrides)
    return PaddleFacts(**values)


def make_facts(
    flags=AVX2_FLAGS,
    arch="x86_64",
    model="Test CPU",
    online=8,
    quota=None,
    cpuset=None,
    affinity=None,
    throttled=None,
    paddle=None,
    env=None,
    **service,
) -> Facts:
    """quota: CPUs as a float (period 100 ms); throttled: (nr_periods, nr_throttled)."""
    limits: dict = {}
    if quota is not None:
        limits.update(quota_us=int(quota * 100000), period_us=100000, quota_file="/sys/fs/cgroup/cpu.max")
    if cpuset is not None:
        limits.update(cpuset=list(cpuset), cpuset_file="/sys/fs/cgroup/cpuset.cpus.effective")
    if throttled is not None:
        limits.update(nr_periods=throttled[0], nr_throttled=throttled[1], throttled_usec=throttled[1] * 20000)
    cgroup = CgroupFacts(version=2, cpu_dir="/sys/fs/cgroup", **limits)
    return Facts(
        cpu=CpuFacts(source="/proc/cpuinfo", arch=arch, model_name=model, logical_cpus=online,
                     online_cpus=list(range(online)), flags=sorted(flags)),
        cgroup=cgroup,
        process=ProcessFacts(affinity=list(affinity if affinity is not None else (cpuset or range(online))),
                             affinity_source="/proc/self/status"),
        paddle=paddle or paddle_ok(),
        env=env or {},
        service=ServiceConfig(**service),
    )


def run_check(check, facts) -> list:
    """A check's findings as the runner gives them: a uniform skip when the facts lack what it requires."""
    from paddle_doctor.judge.rules import load_rules
    from paddle_doctor.judge.runner import run_one

    return run_one(check, facts, load_rules()).findings


def by_rule(findings) -> dict:
    return {finding.rule_id: finding for finding in findings}


def graph_facts(*instances, dropout=0, dropout_left=None, optimised_status="read", reason=None, tensorrt=None, error=None):
    """GraphFacts of a model with these instances: (pattern, status) or (pattern, status, [ChainBreaker])."""
    from paddle_doctor.facts.graph import FusionInstance, GraphFacts, OptimisedProgram
    from paddle_doctor.graph.coverage import count
    from paddle_doctor.graph.fusions import TITLES

    found = [FusionInstance(pattern=i[0], status=i[1], ops=[f"conv2d #{n * 4}", f"batch_norm #{n * 4 + 1}"],
                            variables=["a", "b"], breakers=list(i[2]) if len(i) > 2 else [])
             for n, i in enumerate(instances)]
    optimised = OptimisedProgram(status=optimised_status, reason=reason, pipeline="PIR program, CPU with oneDNN", tensorrt=tensorrt)
    return GraphFacts(program="/models/m/inference.json", format="pir", version=4, ops=40, error=error, optimised=optimised,
                      instances=found, dropout=[f"dropout #{n}" for n in range(dropout)], dropout_left=dropout_left,
                      coverage=[count(p, [i for i in found if i.pattern == p]) for p in TITLES if any(i.pattern == p for i in found)],
                      total=count("total", found))


METADATA = "/venv/lib/python3.11/site-packages/paddlepaddle-3.3.1.dist-info/METADATA"


def recorded_baseline(budget_cpus=2.0, memory=2 << 30, throttled=(1000, 0), gpu=None, cache=None,
                      installed="paddlepaddle 3.3.1", paddle_now="paddlepaddle 3.3.1", paddle_now_problem=None):
    """What `paddle-doctor baseline` would have recorded, as the healthcheck gives it to the checks.
    gpu: a BaselineGpu or None (a CPU service); cache: a BaselineCache or None; installed None: no Paddle found."""
    from paddle_doctor.facts.baseline import BaselineCpu, BaselineFacts, BaselineMemory, BaselinePaddle, BaselineThrottling

    paddle = BaselinePaddle("ok" if installed else "missing", "paddlepaddle" if installed else None, None, False, None, True,
                          METADATA if installed else None, installed)
    return BaselineFacts("/var/lib/paddle-doctor/baseline.json", BaselineCpu(budget_cpus, "quota", "/sys/fs/cgroup/cpu.max", 1, "flag", 1),
                         BaselineMemory(memory, "/sys/fs/cgroup/memory.max"), BaselineThrottling(*throttled), paddle, gpu, cache,
                         paddle_now, paddle_now_problem)


def enum_fields_holding_strings(obj, where="facts"):
    """Every field typed with an enum (directly, optional, or in a list or dict) that holds a plain
    string: live facts must be what a facts file decodes to, not merely equal to it."""
    def enum_of(tp):
        args = [a for a in typing.get_args(tp) if a is not type(None)] if typing.get_origin(tp) in (typing.Union, types.UnionType) else [tp]
        return next((a for a in args if isinstance(a, type) and issubclass(a, enum.Enum)), None)

    found = []
    if dataclasses.is_dataclass(obj):
        hints = field_types(type(obj))
        for f in dataclasses.fields(obj):
            value, kind = getattr(obj, f.name), enum_of(hints[f.name])
            if kind is not None and value is not None and not isinstance(value, kind):
                found.append(f"{where}.{f.name} = {value!r}")
            found += enum_fields_holding_strings(value, f"{where}.{f.name}")
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            found += enum_fields_holding_strings(item, f"{where}[{i}]")
    elif isinstance(obj, dict):
        for key, item in obj.items():
            found += enum_fields_holding_strings(item, f"{where}.{key}")
    return found
