"""The one table of settings (facts/knobs.py): the configurations written from it are fresh, and every
place that reads or writes a setting reads it from the table."""

from __future__ import annotations

import dataclasses

from paddle_doctor.base.vocabulary import Device, Precision
from paddle_doctor.facts.knobs import CONFIGS, KNOBS, configs_module, knob, setter_arguments, settings_recorded
from paddle_doctor.facts.predictor import PredictorConfig, ServiceConfig, TensorRTSettings
from paddle_doctor.facts.recorded import RecordedConfig


def test_the_configurations_are_the_ones_the_table_writes():
    assert CONFIGS.read_text(encoding="utf-8") == configs_module(), "run: python -m paddle_doctor.facts"


def test_every_field_of_the_service_s_configuration_is_a_row():
    fields = [f.name for f in dataclasses.fields(ServiceConfig) if f.name != "tensorrt"]
    fields += [f"tensorrt.{f.name}" for f in dataclasses.fields(TensorRTSettings)]
    assert sorted(fields) == sorted(row.name for row in KNOBS)
    assert [f.name for f in dataclasses.fields(PredictorConfig)] == [row.predictor.name for row in sorted(
        (row for row in KNOBS if row.predictor), key=lambda row: row.predictor.rank)]


def test_the_source_reader_reads_every_setter_of_the_table():
    table = setter_arguments()
    assert {setter.method for row in KNOBS if row.in_source for setter in row.setters} == set(table)
    assert [name for name, _ in table["enable_use_gpu"]] == ["device", "gpu_device_id", "gpu_memory_pool_mb"]
    assert knob("threads").setter == "set_cpu_math_library_num_threads"


def test_a_recorded_configuration_says_the_service_s_settings_row_by_row():
    cpu = PredictorConfig(threads=3, onednn=True, precision=Precision.BF16, memory_optim=True, delete_passes=("a_pass",))
    said = settings_recorded(RecordedConfig(cpu=cpu, device=Device.CPU))
    assert said["threads"] == 3 and said["onednn"] is True and said["precision"] == Precision.BF16
    assert said["memory_optim"] is True and said["delete_passes"] == ["a_pass"] and said["feed_fetch_ops"] is False
    assert said["tensorrt.enabled"] is None and said["gpu_device_id"] is None  # a CPU predictor says nothing of the GPU's
    gpu = settings_recorded(RecordedConfig(cpu=cpu.vary(precision=Precision.FP32), device=Device.GPU, gpu_device_id=1,
                                           tensorrt=True, tensorrt_precision=Precision.FP16, tensorrt_use_static=True))
    assert (gpu["gpu_device_id"], gpu["tensorrt.enabled"], gpu["tensorrt.use_static"], gpu["precision"]) == (1, True, True, Precision.FP16)
