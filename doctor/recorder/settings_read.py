"""A ``paddle.inference.Config`` read back: its getters, its ``summary()`` table, and, for the few
settings with no getter, the arguments of the Config calls that set them (remembered by
:func:`remember_setters`, which wraps those methods on the Config class)."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

from ..facts.knobs import KNOBS, Knob, Setter, knob
from ..facts.predictor import PredictorConfig
from ..facts.recorded import Frame, ModelFiles, RecordedConfig
from .callers import caller_outside_paddle

SUMMARY_ROWS = 64
SUMMARY_TEXT = 200
THREADS = knob("threads").setter  # where it is called is noted too: the frame that set the threads


class Remembered:
    """What a Config's setters without getters were called with (per setting, the value of its last call, or
    of every call's), and where its threads were set."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {}
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


def noted_setters() -> dict[str, list[tuple[Knob, Setter]]]:
    """Per Config method to remember, the settings the table reads back from what it was called with."""
    table: dict[str, list[tuple[Knob, Setter]]] = {THREADS: []}
    for row in KNOBS:
        if row.read is not None and row.read.noted:
            for setter in row.setters:
                table.setdefault(setter.method, []).append((row, setter))
    return table


def given(setter: Setter, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """The value a call of ``setter`` gives its setting."""
    spec = setter.argument
    if spec is None:
        return setter.fixed
    return kwargs[spec.keyword] if spec.keyword in kwargs else (args[spec.position] if len(args) > spec.position else spec.default)


def _note(notes: Remembered, method: str, noted: list[tuple[Knob, Setter]], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    if method == THREADS:
        notes.threads_set_at = caller_outside_paddle()
    for row, setter in noted:
        value = given(setter, args, kwargs)
        if row.read is not None and row.read.every:
            every = notes.values.setdefault(row.name, [])
            if len(every) < SUMMARY_ROWS:
                every.append(value)
        else:
            notes.values[row.name] = value


def remember_setters(config_class: Any, failed: Callable[[str], None]) -> None:
    """Wrap the setters the table reads back on ``config_class``: each still does exactly what it did."""
    for name, noted in noted_setters().items():
        original = getattr(config_class, name, None)
        if original is None:
            continue
        try:
            setattr(config_class, name, _remembering(name, original, noted, failed))
        except (AttributeError, TypeError) as exc:
            failed(f"cannot wrap Config.{name}: {exc!r}"[:SUMMARY_TEXT])


def _remembering(name: str, original: Any, noted: list[tuple[Knob, Setter]], failed: Callable[[str], None]) -> Callable[..., Any]:
    """The setter ``name``: ``original``, then what it was given noted."""
    def setter(config: Any, *args: Any, **kwargs: Any) -> Any:
        result = original(config, *args, **kwargs)
        try:
            _note(remembered(config), name, noted, args, kwargs)
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
    read: dict[str, Any] = {}
    for row in KNOBS:  # in the table's order: a reading that depends on another comes after it
        way = row.read
        if way is None or (way.when is not None and not way.when(read)):
            continue
        raw = (get(way.getter, way.otherwise) if way.getter else summary.get(way.summary) if way.summary
               else notes.values.get(row.name))
        read[row.name] = way.convert(raw)
    cpu = PredictorConfig(**{row.predictor.name: read[row.name] for row in KNOBS if row.predictor is not None})
    elsewhere: dict[str, Any] = {row.recorded: read.get(row.name) for row in KNOBS if row.recorded and not row.recorded.startswith("cpu.")}
    recorded = RecordedConfig(
        cpu=cpu, **elsewhere,
        tensorrt_dynamic_shape=bool(get("tensorrt_dynamic_shape_enabled", False)) if read.get("tensorrt.enabled") else None,
        summary=summary,
    )
    model = ModelFiles(model_dir=get("model_dir") or None, prog_file=get("prog_file") or None,
                       params_file=get("params_file") or None, in_memory=bool(get("model_from_memory", False)))
    return recorded, model, notes.threads_set_at
