"""Predictor configurations ("arms"): the baseline the service uses, variations of it, the
``paddle.inference.Config`` calls that build each one, and a label for people.

The same list of calls is sent to the worker and printed as the recommended snippet, so what
is measured is exactly what is recommended.
"""

from __future__ import annotations

from typing import Any

from ..budget import PADDLE_DEFAULT_THREADS
from ..facts import Facts

Arm = dict[str, Any]
SETTINGS = ("threads", "onednn", "precision", "ir_optim", "feed_fetch", "onednn_cache_capacity", "memory_optim")


def baseline_arm(facts: Facts) -> Arm:
    service = facts.service
    onednn_default = facts.paddle.mkldnn_default_on if facts.paddle.mkldnn_default_on is not None else True
    arm = {
        "threads": service.threads or PADDLE_DEFAULT_THREADS,
        "onednn": onednn_default if service.onednn is None else service.onednn,
        "precision": service.precision if service.precision in ("fp32", "bf16") else "fp32",
        "ir_optim": True if service.ir_optim is None else service.ir_optim,
        "feed_fetch": bool(service.feed_fetch_ops),
        "onednn_cache_capacity": service.onednn_cache_capacity,
        "memory_optim": bool(service.memory_optim),
    }
    if service.delete_passes:
        arm["delete_passes"] = list(service.delete_passes)
    return arm


def vary(arm: Arm, **changes: Any) -> Arm:
    changed = {**arm, **changes}
    if changed.get("precision") == "bf16":
        changed["onednn"] = True
    return changed


def label(arm: Arm, relative_to: Arm | None = None) -> str:
    """``threads=2, oneDNN on`` — only what differs from ``relative_to`` when given."""
    parts = []
    for key in SETTINGS:
        if relative_to is not None and arm.get(key) == relative_to.get(key):
            continue
        value = arm.get(key)
        if key == "threads":
            parts.append(f"threads={value}")
        elif key == "precision":
            parts.append(str(value))
        elif key == "onednn_cache_capacity":
            parts.append(f"oneDNN cache {value if value is not None else 'default'}")
        else:
            name = {"onednn": "oneDNN", "ir_optim": "IR optim", "feed_fetch": "feed/fetch ops", "memory_optim": "memory optim"}[key]
            parts.append(f"{name} {'on' if value else 'off'}")
    return ", ".join(parts) or "same as baseline"


def config_calls(arm: Arm) -> list[tuple[str, list[Any]]]:
    """The Config method calls, in order, that build this arm on the CPU."""
    calls: list[tuple[str, list[Any]]] = [("disable_gpu", []), ("set_cpu_math_library_num_threads", [int(arm["threads"])])]
    if arm["onednn"]:
        calls.append(("enable_mkldnn", []))
        if arm.get("onednn_cache_capacity") is not None:
            calls.append(("set_mkldnn_cache_capacity", [int(arm["onednn_cache_capacity"])]))
        if arm.get("precision") == "bf16":
            calls.append(("enable_mkldnn_bfloat16", []))
    else:
        calls.append(("disable_mkldnn", []))
    calls.append(("switch_ir_optim", [bool(arm["ir_optim"])]))
    calls.append(("switch_use_feed_fetch_ops", [bool(arm["feed_fetch"])]))
    if arm.get("memory_optim"):
        calls.append(("enable_memory_optim", []))
    calls.extend(("delete_pass", [name]) for name in arm.get("delete_passes", ()))
    for key, method in (("optim_cache_dir", "set_optim_cache_dir"), ("save_optim_model", "enable_save_optim_model"),
                        ("use_optimized_model", "use_optimized_model")):
        if arm.get(key):
            calls.append((method, [arm[key]] if key == "optim_cache_dir" else [True]))
    return calls


def snippet(arm: Arm, program: str, params: str | None) -> str:
    """Ready-to-paste Python that builds this configuration."""
    model_args = f"{program!r}, {params!r}" if params else repr(str(program).rsplit("/", 1)[0])
    lines = ["import paddle.inference as paddle_infer", "", f"config = paddle_infer.Config({model_args})"]
    for method, args in config_calls(arm):
        lines.append(f"config.{method}({', '.join(repr(a) for a in args)})")
    lines.append("predictor = paddle_infer.create_predictor(config)")
    return "\n".join(lines) + "\n"
