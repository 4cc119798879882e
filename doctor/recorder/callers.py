"""Where in the service a predictor is built: the first frame outside Paddle and this recorder, the
installed distribution that frame's file belongs to (``paddleocr 2.7.3 tools/infer/utility.py``),
and the service's own frame that led there."""

from __future__ import annotations

import functools
import os
import sys
import sysconfig
from importlib.metadata import packages_distributions, version
from types import FrameType

from ..facts.recorded import BuildSite, Frame

DEPTH = 64
TEXT = 300
RECORDER = os.path.dirname(os.path.abspath(__file__))


@functools.lru_cache(maxsize=1)
def _paddle_folder() -> str | None:
    paddle = sys.modules.get("paddle")
    file = getattr(paddle, "__file__", None)
    return os.path.dirname(os.path.abspath(file)) if file else None


@functools.lru_cache(maxsize=1)
def _stdlib() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    return tuple(os.path.abspath(paths[key]) for key in ("stdlib", "platstdlib") if key in paths)


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    return dict(packages_distributions())


@functools.lru_cache(maxsize=256)
def _package_of(file: str) -> tuple[str, str, str] | None:
    """(distribution, version, path inside its folder) for a file of an installed distribution."""
    for entry in sys.path:
        folder = os.path.abspath(entry or os.curdir)
        if not file.startswith(folder + os.sep):
            continue
        inside = file[len(folder) + 1:]
        top = inside.split(os.sep, 1)[0].removesuffix(".py")
        names = _distributions().get(top)
        if names:
            try:
                return names[0], version(names[0]), inside
            except Exception:  # metadata that cannot be read: a package without a version
                return names[0], "", inside
    return None


def _inside(file: str, folder: str | None) -> bool:
    return folder is not None and folder != "" and file.startswith(folder + os.sep)


def _ours_or_paddles(file: str) -> bool:
    return _inside(file, RECORDER) or _inside(file, _paddle_folder())


def _frame(frame: FrameType) -> Frame:
    file = os.path.abspath(frame.f_code.co_filename)
    package = _package_of(file)
    return Frame(file=file[:TEXT], line=frame.f_lineno or 0, function=frame.f_code.co_name[:TEXT],
                 package=package[0][:TEXT] if package else None, version=package[1][:TEXT] if package else None,
                 path=package[2][:TEXT] if package else None)


def _callers() -> list[FrameType]:
    frame: FrameType | None = sys._getframe(1)
    frames: list[FrameType] = []
    while frame is not None and len(frames) < DEPTH:
        if not _ours_or_paddles(os.path.abspath(frame.f_code.co_filename)):
            frames.append(frame)
        frame = frame.f_back
    return frames


def caller_outside_paddle() -> Frame | None:
    callers = _callers()
    return _frame(callers[0]) if callers else None


def build_site(threads_set_at: Frame | None) -> BuildSite:
    callers = _callers()
    if not callers:
        return BuildSite(None, None, threads_set_at)
    builder = callers[0]
    service = next((frame for frame in callers if _is_service_code(os.path.abspath(frame.f_code.co_filename))), None)
    return BuildSite(_frame(builder), _frame(service) if service is not None else None, threads_set_at)


def _is_service_code(file: str) -> bool:
    return _package_of(file) is None and not any(_inside(file, folder) for folder in _stdlib()) and not file.startswith("<")
