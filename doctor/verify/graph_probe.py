"""The graph probe: reads the model's program without running it, has Paddle build the optimised
program the service's configuration really runs, and returns the fusion coverage as Facts.

Paddle writes the optimised program when asked (``set_optim_cache_dir`` + ``enable_save_optim_model``:
``_optimized.json`` for PIR, ``_optimized.pdmodel`` for the old IR) into a temporary directory
that is removed afterwards, so nothing is left behind. Its log, captured while the predictor is
created, names the passes that ran and the ops they refused. The predictor is created in the
run's shared worker (``ModelRun.worker``), which verification then measures in, from the Config
calls verification measures (:func:`service_calls`, on the CPU or the GPU with TensorRT).
"""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..base.interpreter import Interpreter
from ..base.quoting import python_call
from ..base.vocabulary import Device, ModelFormat, PaddleStatus, ProgramStatus
from ..facts import Facts, ServiceConfig
from ..facts.graph import GraphFacts, OptimisedProgram, PassRejection
from ..facts.knobs import Call, device_neutral_calls
from ..facts.predictor import TENSORRT_PRECISIONS, PredictorConfig
from ..graph.coverage import IR_OFF, analyse
from ..graph.program import Program, ProgramError, read_program
from .model import ModelRun
from .protocol import Create
from .session import WorkerDied, WorkerError

OPTIMISED_FILES = ("_optimized.json", "_optimized.pdmodel")
CREATE_TIMEOUT = 300.0


def service_calls(facts: Facts, **changes: Any) -> list[Call]:
    """The Config calls of the service's configuration as it runs it, on the CPU or the GPU (with TensorRT): what
    graph coverage builds the service's program with; ``changes`` are settings outside what the service runs
    (where the optimised program is written)."""
    calls = replace(PredictorConfig.of_service(facts), **changes).config_calls()
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


def unreadable_program(run: ModelRun) -> GraphFacts:
    """GraphFacts naming the file (and its version) of a model whose program cannot be read (``run.unreadable``)."""
    return GraphFacts(program=run.files.program, format=run.files.format, error=run.unreadable)


def probe_graph(facts: Facts, run: ModelRun, interpreter: Interpreter | None = None) -> GraphFacts:
    """The fusion coverage; the optimised program is built in the run's shared worker, ``interpreter``
    run as the user it runs as (None: the probed Python, as the doctor)."""
    started = time.monotonic()
    original = run.program
    if original is None:
        return unreadable_program(run)
    service = facts.service
    tensorrt = service.device == Device.GPU and service.tensorrt.enabled
    optimised, program = optimised_program(facts, run, original, interpreter)
    graph = analyse(original, optimised, program, ir_optim=service.ir_optim is not False,
                    deleted_passes=tuple(service.delete_passes), tensorrt=tensorrt)
    return replace(graph, seconds=round(time.monotonic() - started, 3))


def device_label(service: ServiceConfig, onednn: bool) -> str:
    if service.device == Device.GPU:
        return f"GPU with TensorRT ({service.tensorrt.precision})" if service.tensorrt.enabled else "GPU"
    return "CPU with oneDNN" if onednn else "CPU without oneDNN"


def optimised_program(facts: Facts, run: ModelRun, original: Program,
                      interpreter: Interpreter | None) -> tuple[OptimisedProgram, Program | None]:
    """``original``: the model's program, as read (``run.program``)."""
    service, files = facts.service, run.files
    calls = service_calls(facts)
    device = device_label(service, PredictorConfig.of_service(facts).onednn)
    ir = "PIR program" if files.format == ModelFormat.PIR else "old-IR program"
    result = OptimisedProgram(status=ProgramStatus.SKIPPED, pipeline=f"{ir}, {device}",
                              config=[python_call(method, args) for method, args in calls])
    paddle = facts.paddle
    if service.ir_optim is False:
        return replace(result, reason=f"{IR_OFF}: the predictor runs the program as saved"), None
    if paddle.status != PaddleStatus.OK or not paddle.python:
        return replace(result, reason=f"Paddle cannot be imported ({paddle.status}), so the optimised program cannot be built"), None
    if service.device == Device.GPU and not paddle.with_cuda:
        return replace(result, reason=f"the service runs on {device}, and {paddle.distribution or 'Paddle'} "
                                      f"{paddle.version or ''} here has no CUDA, so the program the GPU predictor runs "
                                      "cannot be built here"), None
    worker = interpreter or Interpreter(paddle.python)
    directory = worker.scratch_folder("paddle-doctor-optim-")  # the worker writes the optimised program there
    version = f"{original.format} version {original.version}" if original.version is not None else original.format
    try:
        session = run.worker(worker)
        reply = session.request(CREATE_TIMEOUT, Create(service_calls(facts, optim_cache_dir=directory, save_optim_model=True)))
        paddle_version = session.paddle_version
        written = next((Path(directory) / name for name in OPTIMISED_FILES if (Path(directory) / name).is_file()), None)
        if written is None:
            return replace(result, status=ProgramStatus.ERROR,
                           reason=f"Paddle {paddle_version} wrote no optimised program (expected {' or '.join(OPTIMISED_FILES)})"), None
        # a worker of the service's user wrote it in a folder of that user's: never a link it made, whatever it names
        program = read_program(written, worker.run_as.uid if worker.run_as is not None else None)
    except (WorkerError, WorkerDied) as exc:
        return replace(result, status=ProgramStatus.ERROR,
                       reason=f"Paddle cannot build the optimised program of {files.program} ({version}): {exc}"), None
    except ProgramError as exc:
        return replace(result, status=ProgramStatus.ERROR, reason=f"the optimised program Paddle wrote cannot be read: {exc}"), None
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    return replace(result, status=ProgramStatus.READ, passes=list(dict.fromkeys(reply.passes)),
                   rejections=[PassRejection(r.pass_name, r.op, r.check) for r in reply.rejections],
                   create_ms=round(reply.create_ms, 3)), program
