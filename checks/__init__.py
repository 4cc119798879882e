"""Built-in checks: one module per check, each a pure function of Facts exposing ``CHECK``.

A new built-in check is a module here and its name in ``BUILT_IN``; the registry imports them from
this list (no installed metadata, so nothing to reinstall). Third-party checks register under the
entry-point group ``paddle_doctor.checks``.
"""

BUILT_IN = (
    "paddle_install", "cpu_instructions", "onednn", "bf16_unused",
    "cpu_budget", "cpu_quota", "thread_pools", "cpu_throttling", "core_binding",
    "warmup", "latency_stability", "onednn_cache", "graph_switches", "optim_cache", "recommended_config", "model_load",
    "gpu_visibility", "gpu_wheel", "gpu_driver", "gpu_libraries", "gpu_precision", "gpu_memory",
    "trt_version", "trt_cache", "trt_engines",
    "fusion_coverage", "fusion_breakers", "dropout_left", "tensorrt_coverage",
    "shared_predictor", "serving_layout", "idle_instances",
    "source_onednn", "source_ir_optim", "source_trt_cache", "source_predictor_per_request", "source_shared_predictor",
    "source_warmup", "source_host_cpus", "source_coverage",
    "baseline_cpu_budget", "baseline_throttling", "baseline_memory", "baseline_gpu", "baseline_cache", "baseline_paddle",
)
