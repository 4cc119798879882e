"""A ``paddle.inference.Config`` read back: its getters, its ``summary()`` table, and, for the few
settings with no getter, the arguments of the Config calls that set them (remembered by
:func:`remember_setters`, which wraps those methods on the Config class)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ..base.vocabulary import Device, Precision
from ..facts.predictor import PredictorConfig
from ..facts.recorded import Frame, ModelFiles, RecordedConfig
from .callers import caller_outside_paddle

SUMMARY_ROWS = 64
SUMMARY_TEXT = 200
TRT_PRECISIONS = {"Float32": "fp32", "Half": "fp16", "Int8": "int8", "Bfloat16": "bf16"}
TRUE = "true"


class Remembered:
    """What a Config's setters without getters were called with."""

    def __init__(self) -> None:
        self.optim_cache_dir: str | None = None
        self.use_static: bool | None = None
        self.bf16 = False
        self.delete_passes: list[str] = []
        self.threads_set_at: Frame | None = None


REMEMBERED: weakref.WeakKeyDictionary[Any, Remembered] = weakref.WeakKeyDictionary()


def remembered(config: Any) -> Remembered:
    try:
        notes = REMEMBERED.get(config)
        if notes is None:
            notes = REMEMBERED[config] = Remembered()
        return notes
    except TypeError:  # a Config that takes no weak reference: nothing remembered
        return Remembered()


def _note_threads(notes: Remembered, *args: Any, **kwargs: Any) -> None:
    notes.threads_set_at = caller_outside_paddle()


def _note_optim_cache_dir(notes: Remembered, folder: Any = None, *args: Any, **kwargs: Any) -> None:
    notes.optim_cache_dir = str(folder)


def _note_tensorrt(notes: Remembered, *args: Any, **kwargs: Any) -> None:
    notes.use_static = bool(kwargs["use_static"] if "use_static" in kwargs else (args[4] if len(args) > 4 else False))


def _note_bf16(notes: Remembered, *args: Any, **kwargs: Any) -> None:
    notes.bf16 = True


def _note_delete_pass(notes: Remembered, name: Any = None, *args: Any, **kwargs: Any) -> None:
    if len(notes.delete_passes) < SUMMARY_ROWS:
        notes.delete_passes.append(str(name))


SETTERS: dict[str, Callable[..., None]] = {
    "set_cpu_math_library_num_threads": _note_threads, "set_optim_cache_dir": _note_optim_cache_dir,
    "enable_tensorrt_engine": _note_tensorrt, "enable_mkldnn_bfloat16": _note_bf16, "enable_onednn_bfloat16": _note_bf16,
    "delete_pass": _note_delete_pass,
}


def remember_setters(config_class: Any, failed: Callable[[str], None]) -> None:
    """Wrap the setters in :data:`SETTERS` on ``config_class``: each still does exactly what it did."""
    for name, note in SETTERS.items():
        original = getattr(config_class, name, None)
        if original is None:
            continue
        try:
            setattr(config_class, name, _remembering(name, original, note, failed))
        except (AttributeError, TypeError) as exc:
            failed(f"cannot wrap Config.{name}: {exc!r}"[:SUMMARY_TEXT])


def _remembering(name: str, original: Any, note: Callable[..., None], failed: Callable[[str], None]) -> Callable[..., Any]:
    """The setter ``name``: ``original``, then ``note`` of what it was given."""
    def setter(config: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(config, *args, **kwargs)
        try:
            note(remembered(config), *args, **kwargs)
        except Exception as exc:  # the recorder never raises into the service
            failed(f"remembering Config.{name}: {exc!r}"[:SUMMARY_TEXT])
        return result

    setter.__name__ = setter.__qualname__ = name
    setter.__doc__ = getattr(original, "__doc__", None)
    return setter


def summary_table(config: Any) -> dict[str, str]:
    """``Config.summary()``'s ``| option | value |`` rows."""
    rows: dict[str, str] = {}
    for line in str(config.summary()).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] and cells[0] != "Option" and len(rows) < SUMMARY_ROWS:
            rows[cells[0][:SUMMARY_TEXT]] = cells[1][:SUMMARY_TEXT]
    return rows


def read_config(config: Any, failed: Callable[[str], None]) -> tuple[RecordedConfig, ModelFiles, Frame | None]:
    """The configuration, the model files and where the threads were set, as ``config`` holds them now."""
    def get(getter: str, default: Any = None) -> Any:
        try:
            return getattr(config, getter)()
        except Exception as exc:  # a getter this Paddle lacks, or one that raises
            failed(f"Config.{getter}(): {exc!r}"[:SUMMARY_TEXT])
            return default

    try:
        summary = summary_table(config)
    except Exception as exc:
        failed(f"Config.summary(): {exc!r}"[:SUMMARY_TEXT])
        summary = {}
    notes = remembered(config)
    gpu = bool(get("use_gpu", False))
    tensorrt = bool(get("tensorrt_engine_enabled", False))
    trt_precision = str(get("tensorrt_precision_mode", "")).rpartition(".")[2] if tensorrt else ""
    cache = summary.get("mkldnn_cache_capacity")
    cpu = PredictorConfig(
        threads=int(get("cpu_math_library_num_threads", 1) or 1),
        onednn=bool(get("mkldnn_enabled", False)),
        precision=Precision.BF16 if notes.bf16 else Precision.FP32,
        ir_optim=bool(get("ir_optim", True)),
        feed_fetch=bool(get("use_feed_fetch_ops_enabled", False)),
        onednn_cache_capacity=int(cache) if cache and cache.isdigit() and int(cache) > 0 else None,
        memory_optim=summary.get("memory_optim") == TRUE,
        delete_passes=tuple(notes.delete_passes),
        optim_cache_dir=notes.optim_cache_dir,
        save_optim_model=summary.get("save_optimized_model") == TRUE,
        use_optimized_model=summary.get("use_optimized_model") == TRUE,
    )
    recorded = RecordedConfig(
        cpu=cpu, device=Device.GPU if gpu else Device.CPU,
        gpu_device_id=get("gpu_device_id") if gpu else None,
        gpu_memory_pool_mb=get("memory_pool_init_size_mb") if gpu else None,
        tensorrt=tensorrt,
        tensorrt_precision=Precision(TRT_PRECISIONS[trt_precision]) if trt_precision in TRT_PRECISIONS else None,
        tensorrt_use_static=notes.use_static if tensorrt else None,
        tensorrt_dynamic_shape=bool(get("tensorrt_dynamic_shape_enabled", False)) if tensorrt else None,
        summary=summary,
    )
    model = ModelFiles(model_dir=get("model_dir") or None, prog_file=get("prog_file") or None,
                       params_file=get("params_file") or None, in_memory=bool(get("model_from_memory", False)))
    return recorded, model, notes.threads_set_at
