"""The Config calls of the service's configuration as it runs it, on the CPU, or on the GPU with TensorRT:
what graph coverage builds the service's program with."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from ..base.vocabulary import Device
from .knobs import Call, device_neutral_calls
from .predictor import TENSORRT_PRECISIONS, PredictorConfig

if TYPE_CHECKING:
    from . import Facts


def service_calls(facts: Facts, **changes: Any) -> list[Call]:
    """The Config calls of the service's configuration, on the CPU or the GPU (with TensorRT); ``changes``
    are settings outside what the service runs (where the optimised program is written)."""
    calls = dataclasses.replace(PredictorConfig.of_service(facts), **changes).config_calls()
    service = facts.service
    if service.device != Device.GPU:
        return calls
    gpu: list[Call] = [("enable_use_gpu", [service.gpu_memory_pool_mb or 256, service.gpu_device_id])]
    trt = service.tensorrt
    if trt.enabled:
        gpu.append(("enable_tensorrt_engine", [trt.workspace_mb << 20, trt.max_batch_size, trt.min_subgraph_size,
                                               TENSORRT_PRECISIONS[trt.precision], False, False]))
    neutral = device_neutral_calls()
    return gpu + [call for call in calls if call[0] in neutral]
