"""The graph probe: reads the model's program without running it, has Paddle build the optimised
program the service's configuration really runs, and returns the fusion coverage as Facts.

Paddle writes the optimised program when asked (``set_optim_cache_dir`` + ``enable_save_optim_model``:
``_optimized.json`` for PIR, ``_optimized.pdmodel`` for the old IR) into a temporary directory
that is removed afterwards, so nothing is left behind. Its log, captured while the predictor is
created, names the passes that ran and the ops they refused.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from pathlib import Path

from ..facts import Facts, GraphFacts, OptimisedProgram, PassRejection, ServiceFacts
from ..program import Program, ProgramError, read_program
from ..vocabulary import ProgramStatus
from ..verify.arms import baseline_arm, config_calls
from ..verify.model import ModelFiles, locate_model
from ..verify.session import WorkerDied, WorkerError, WorkerSession
from .coverage import IR_OFF, analyse

OPTIMISED_FILES = ("_optimized.json", "_optimized.pdmodel")
CREATE_TIMEOUT = 300.0
START_TIMEOUT = 120.0


def unreadable_program(model: str) -> GraphFacts | None:
    """GraphFacts naming the file (and its version) when the model's program cannot be read; else None.
    A model path that does not exist is the user's error and raises ModelError."""
    files = locate_model(model)
    try:
        read_program(files.program)
    except ProgramError as exc:
        return GraphFacts(program=files.program, format=files.format, error=str(exc))
    return None


def probe_graph(facts: Facts, model: str) -> GraphFacts:
    started = time.monotonic()
    files = locate_model(model)
    try:
        original = read_program(files.program)
    except ProgramError as exc:
        return GraphFacts(program=files.program, format=files.format, error=str(exc))
    service = facts.service
    tensorrt = service.device == "gpu" and service.tensorrt.enabled
    optimised, program = optimised_program(facts, files, original)
    graph = analyse(original, optimised, program, ir_optim=service.ir_optim is not False,
                    deleted_passes=tuple(service.delete_passes), tensorrt=tensorrt)
    graph.seconds = round(time.monotonic() - started, 3)
    return graph


def device_label(service: ServiceFacts, onednn: bool) -> str:
    if service.device == "gpu":
        return f"GPU with TensorRT ({service.tensorrt.precision})" if service.tensorrt.enabled else "GPU"
    return "CPU with oneDNN" if onednn else "CPU without oneDNN"


def service_calls(facts: Facts) -> list[tuple[str, list]]:
    """The Config calls of the service's configuration, on the CPU or the GPU."""
    arm = baseline_arm(facts)
    calls = config_calls(arm)
    service = facts.service
    if service.device != "gpu":
        return calls
    gpu = [("enable_use_gpu", [service.gpu_memory_pool_mb or 256, service.gpu_device_id])]
    trt = service.tensorrt
    if trt.enabled:
        precision = {"fp32": "Float32", "fp16": "Half", "int8": "Int8", "bf16": "Bfloat16"}[trt.precision]
        gpu.append(("enable_tensorrt_engine", [trt.workspace_mb << 20, trt.max_batch_size, trt.min_subgraph_size,
                                               precision, False, False]))
    kept = [call for call in calls if call[0] in ("switch_ir_optim", "switch_use_feed_fetch_ops", "enable_memory_optim", "delete_pass")]
    return gpu + kept


def optimised_program(facts: Facts, files: ModelFiles, original: Program) -> tuple[OptimisedProgram, Program | None]:
    service = facts.service
    calls = service_calls(facts)
    device = device_label(service, baseline_arm(facts)["onednn"])
    ir = "PIR program" if files.format == "pir" else "old-IR program"
    result = OptimisedProgram(status=ProgramStatus.SKIPPED, pipeline=f"{ir}, {device}",
                              config=[f"{method}({', '.join(repr(a) for a in args)})" for method, args in calls])
    paddle = facts.paddle
    if service.ir_optim is False:
        result.reason = f"{IR_OFF}: the predictor runs the program as saved"
        return result, None
    if paddle.status != "ok" or not paddle.python:
        result.reason = f"Paddle cannot be imported ({paddle.status}), so the optimised program cannot be built"
        return result, None
    if service.device == "gpu" and not paddle.with_cuda:
        result.reason = (f"the service runs on {device}, and {paddle.distribution or 'Paddle'} "
                         f"{paddle.version or ''} here has no CUDA, so the program the GPU predictor runs cannot be built here")
        return result, None
    directory = tempfile.mkdtemp(prefix="paddle-doctor-optim-")
    version = f"{original.format} version {original.version}" if original.version is not None else original.format
    try:
        with WorkerSession(paddle.python, START_TIMEOUT, env={"GLOG_minloglevel": "0"}) as session:
            session.request(60, cmd="model", files={"program": files.program, "params": files.params, "dir": files.directory})
            optim = [("set_optim_cache_dir", [directory]), ("enable_save_optim_model", [True])]
            reply = session.request(CREATE_TIMEOUT, cmd="create", calls=calls + optim)
            paddle_version = session.paddle_version
        written = next((Path(directory) / name for name in OPTIMISED_FILES if (Path(directory) / name).is_file()), None)
        if written is None:
            result.status, result.reason = ProgramStatus.ERROR, f"Paddle {paddle_version} wrote no optimised program (expected {' or '.join(OPTIMISED_FILES)})"
            return result, None
        program = read_program(written)
    except (WorkerError, WorkerDied) as exc:
        result.status = ProgramStatus.ERROR
        result.reason = f"Paddle cannot build the optimised program of {files.program} ({version}): {exc}"
        return result, None
    except ProgramError as exc:
        result.status, result.reason = ProgramStatus.ERROR, f"the optimised program Paddle wrote cannot be read: {exc}"
        return result, None
    finally:
        shutil.rmtree(directory, ignore_errors=True)
    result.status = ProgramStatus.READ
    result.passes = list(dict.fromkeys(reply.get("passes", [])))
    result.rejections = [PassRejection(**r) for r in reply.get("rejections", [])]
    result.create_ms = round(reply["create_ms"], 3)
    return result, program
