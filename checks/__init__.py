"""Built-in checks: one module per check, each a pure function of Facts exposing ``CHECK``, the
check named as its module.

``BUILT_IN`` is the tuple of their checks, imported: a new built-in check is a module here, imported
below and its ``CHECK`` put in the tuple (the lint says an import left out of it, and a name in it
not imported; tests/test_layout.py a module of this folder not imported). The registry takes the
checks from it, so nothing is installed as metadata and nothing needs a reinstall. It is made when
first asked: importing one check, as the healthcheck imports those its baseline pins, imports no
other. Third-party checks register under the entry-point group ``paddle_doctor.checks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from paddle_doctor.judge.registry import Check

BUILT_IN: tuple[Check, ...]  # made by __getattr__ when first asked


def __getattr__(name: str) -> tuple[Check, ...]:
    """``BUILT_IN``, its checks imported the first time it is asked for."""
    if name != "BUILT_IN":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import (
        baseline_cache,
        baseline_cpu_budget,
        baseline_gpu,
        baseline_memory,
        baseline_paddle,
        baseline_throttling,
        bf16_unused,
        core_binding,
        cpu_budget,
        cpu_instructions,
        cpu_quota,
        cpu_throttling,
        dropout_left,
        fusion_breakers,
        fusion_coverage,
        gpu_driver,
        gpu_libraries,
        gpu_memory,
        gpu_precision,
        gpu_visibility,
        gpu_wheel,
        graph_switches,
        idle_instances,
        known_issues,
        latency_stability,
        model_load,
        onednn,
        onednn_cache,
        optim_cache,
        paddle_install,
        recommended_config,
        serving_layout,
        shared_predictor,
        source_coverage,
        source_host_cpus,
        source_ir_optim,
        source_onednn,
        source_predictor_per_request,
        source_shared_predictor,
        source_trt_cache,
        source_warmup,
        tensorrt_coverage,
        thread_pools,
        trt_cache,
        trt_engines,
        trt_version,
        warmup,
        worker_memory,
    )

    global BUILT_IN
    BUILT_IN = (
        paddle_install.CHECK, cpu_instructions.CHECK, onednn.CHECK, bf16_unused.CHECK,
        cpu_budget.CHECK, cpu_quota.CHECK, thread_pools.CHECK, cpu_throttling.CHECK, core_binding.CHECK,
        warmup.CHECK, latency_stability.CHECK, onednn_cache.CHECK, graph_switches.CHECK, optim_cache.CHECK,
        recommended_config.CHECK, model_load.CHECK,
        gpu_visibility.CHECK, gpu_wheel.CHECK, gpu_driver.CHECK, gpu_libraries.CHECK, gpu_precision.CHECK,
        gpu_memory.CHECK, worker_memory.CHECK,
        trt_version.CHECK, trt_cache.CHECK, trt_engines.CHECK,
        fusion_coverage.CHECK, fusion_breakers.CHECK, dropout_left.CHECK, tensorrt_coverage.CHECK,
        shared_predictor.CHECK, serving_layout.CHECK, idle_instances.CHECK,
        source_onednn.CHECK, source_ir_optim.CHECK, source_trt_cache.CHECK, source_predictor_per_request.CHECK,
        source_shared_predictor.CHECK, source_warmup.CHECK, source_host_cpus.CHECK, source_coverage.CHECK,
        baseline_cpu_budget.CHECK, baseline_throttling.CHECK, baseline_memory.CHECK, baseline_gpu.CHECK,
        baseline_cache.CHECK, baseline_paddle.CHECK, known_issues.CHECK,
    )
    return BUILT_IN
