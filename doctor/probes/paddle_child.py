"""Runs in a child interpreter: imports Paddle and prints what it was built with.

Kept free of paddle_doctor imports so any Python with Paddle can run it (its text is passed with
``python -c``; the current directory is dropped from ``sys.path`` so that nothing there can stand
in for ``paddle``). It prints one
``META`` line before importing Paddle, so that a crash during the import (SIGILL on a CPU without
the instructions the wheel needs) still leaves the version behind, then one ``RESULT`` line.
"""

import json
import sys
import time

sys.path[:] = [entry for entry in sys.path if entry not in ("", ".")]

DISTRIBUTIONS = ("paddlepaddle", "paddlepaddle-gpu", "paddlepaddle-cpu")
CORE_FLAGS = (
    "supports_avx512f",
    "supports_vnni",
    "supports_bfloat16",
    "supports_bfloat16_fast_performance",
    "supports_int8",
)


def emit(tag, payload):
    sys.stdout.write(f"{tag} {json.dumps(payload)}\n")
    sys.stdout.flush()


def distribution():
    """Paddle's distribution: its name, version and METADATA file (which the healthcheck reads
    again without importing Paddle)."""
    try:
        from importlib import metadata
    except ImportError:
        return None, None, None
    for name in DISTRIBUTIONS:
        try:
            found = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        return name, found.version, metadata_file(found)
    return None, None, None


def metadata_file(found):
    try:
        files = [f for f in (found.files or ()) if f.name == "METADATA" and f.parent.name.endswith(".dist-info")]
        return str(found.locate_file(files[0]).resolve()) if files else None
    except (OSError, ValueError):
        return None


def call(obj, name, *args):
    function = getattr(obj, name, None)
    if function is None:
        return None
    try:
        return function(*args)
    except Exception:
        return None


def version_text(value):
    """``paddle.version`` answers 'False' or 'None' (strings) on builds without the library."""
    text = None if value is None else str(value)
    return None if text in (None, "", "False", "None", "0") else text


def pip_library_dirs():
    """Library folders of pip-installed CUDA and TensorRT wheels (nvidia-*-cu12, tensorrt-libs), which GPU
    wheels of Paddle load before the system's."""
    import glob
    import os
    from importlib.util import find_spec

    dirs = []
    for package, pattern in (("nvidia", "*/lib"), ("tensorrt_libs", "")):
        try:
            spec = find_spec(package)
        except (ImportError, ValueError):
            spec = None
        for location in (spec.submodule_search_locations or []) if spec else []:
            dirs.extend(sorted(path for path in glob.glob(os.path.join(location, pattern)) if os.path.isdir(path)))
    return dirs


def main():
    name, version, metadata = distribution()
    emit("META", {"distribution": name, "version": version, "metadata_file": metadata, "python": sys.executable})
    start = time.perf_counter()
    try:
        import paddle
        import paddle.inference as inference
        from paddle.base import core
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] == "paddle":
            emit("RESULT", {"status": "missing", "reason": str(exc)})
            return
        raise
    seconds = time.perf_counter() - start
    config = inference.Config()
    supports = {}
    for flag in CORE_FLAGS:
        value = call(core, flag)
        if value is not None:
            supports[flag.replace("supports_", "")] = bool(value)
    version_module = paddle.version
    archs = call(version_module, "cuda_archs")
    emit(
        "RESULT",
        {
            "status": "ok",
            "version": getattr(paddle, "__version__", version),
            "with_cuda": bool(call(paddle, "is_compiled_with_cuda")),
            "cuda_version": str(call(version_module, "cuda")),
            "cudnn_version": str(call(version_module, "cudnn")),
            "compiled_with_avx": call(core, "is_compiled_with_avx"),
            "compiled_with_mkldnn": call(core, "is_compiled_with_onednn")
            if hasattr(core, "is_compiled_with_onednn")
            else call(core, "is_compiled_with_mkldnn"),
            "mkldnn_default_on": call(config, "mkldnn_enabled"),
            "default_threads": call(config, "cpu_math_library_num_threads"),
            "supports": supports,
            "trt_compile_version": list(call(inference, "get_trt_compile_version") or ()) or None,
            "trt_runtime_version": list(call(inference, "get_trt_runtime_version") or ()) or None,
            "tensorrt_version": version_text(call(version_module, "tensorrt")),
            "cuda_archs": [int(arch) for arch in archs] if isinstance(archs, (list, tuple)) else None,
            "cuda_lib_dirs": pip_library_dirs(),
            "import_seconds": round(seconds, 3),
        },
    )


main()
