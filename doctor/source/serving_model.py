"""How requests reach a module's code: in several threads of one process at once, or one at a time, said
with where that is decided (the source line, or the launcher's setting).

- A thread-maker in the code (``ThreadPoolExecutor``, ``ThreadingHTTPServer``, ``threading.Thread``, a
  ``ThreadingMixIn`` server) runs requests in threads.
- FastAPI and Starlette run a plain ``def`` route in their thread pool; an ``async def`` route runs on the
  event loop, one at a time, unless it hands its work to threads (``loop.run_in_executor(...)``,
  ``asyncio.to_thread(...)``, ``run_in_threadpool(...)``).
- Flask's ``app.run()`` is threaded unless ``threaded=False`` (Flask's default since 1.0), and
  ``processes=N`` serves each request in a process of its own. A launcher that imports the app (gunicorn,
  uvicorn, hypercorn) never runs the ``app.run()`` under ``if __name__ == "__main__":``: under gunicorn
  its worker class and ``threads`` decide (sync with one thread: one request at a time per worker; gthread,
  or sync with threads above 1: that many threads).
- Where none of these says, the model is unknown (None): nothing is guessed, save a Flask app whose
  server the source does not show at all (``flask run`` serves it in threads, its default).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from ..facts.launcher import Launcher, LauncherFacts, LauncherKnob, LauncherSetting
from .module import Function, Module, in_main_block, text

THREAD_MAKERS = {
    "concurrent.futures.ThreadPoolExecutor": "a ThreadPoolExecutor",
    "http.server.ThreadingHTTPServer": "ThreadingHTTPServer",
    "socketserver.ThreadingTCPServer": "ThreadingTCPServer",
    "threading.Thread": "threading.Thread",
}
ASGI_APPS = {"fastapi.FastAPI": "FastAPI", "fastapi.APIRouter": "FastAPI", "starlette.applications.Starlette": "Starlette"}
FLASK_APPS = ("flask.Flask",)
TO_THREADS = ("asyncio.to_thread", "starlette.concurrency.run_in_threadpool", "fastapi.concurrency.run_in_threadpool")
IMPORTERS = (Launcher.GUNICORN, Launcher.UVICORN, Launcher.HYPERCORN, Launcher.CELERY, Launcher.CONSOLE_SCRIPT)
GREEN_WORKERS = ("gevent", "eventlet", "tornado")


@dataclass(frozen=True)
class ServingModel:
    """``threaded``: requests run in several threads of one process at once; ``said``: how, with its origin."""

    threaded: bool
    said: str


def serving_model(module: Module, routes: list[Function], launcher: LauncherFacts | None) -> ServingModel | None:
    """How requests reach the code of ``module`` (``routes``: its functions a web framework routes), where it is known."""
    for call in module.calls():
        name = module.canonical(call.func)
        if name in THREAD_MAKERS:
            return ServingModel(True, f"{THREAD_MAKERS[name]} (line {call.lineno})")
    for node in ast.walk(module.tree):
        if isinstance(node, ast.ClassDef) and any((module.canonical(base) or "").endswith("ThreadingMixIn") for base in node.bases):
            return ServingModel(True, f"ThreadingMixIn (line {node.lineno})")
    apps = [(module.canonical(call.func), call) for call in module.calls()]
    asgi = next(((ASGI_APPS[name], call) for name, call in apps if name in ASGI_APPS), None)
    if asgi is not None:
        return _asgi(module, asgi[0], routes)
    flask = next((call for name, call in apps if name in FLASK_APPS), None)
    if flask is not None:
        return _flask(module, flask, launcher)
    for call in module.calls():
        if isinstance(call.func, ast.Attribute) and call.func.attr == "run" and _constant(call, "threaded") is True:
            return ServingModel(True, f"{text(call.func)}(threaded=True) (line {call.lineno})")
    return None


def _asgi(module: Module, framework: str, routes: list[Function]) -> ServingModel | None:
    """A plain ``def`` route runs in the framework's thread pool; an ``async def`` route on the event loop,
    unless it hands its work to threads."""
    plain = [route for route in routes if isinstance(route, ast.FunctionDef)]
    if plain:
        return ServingModel(True, f"{framework}'s thread pool, which runs the plain def route {plain[0].name}() "
                                  f"(line {plain[0].lineno}) for each request")
    for route in routes:
        handed = next((call for call in ast.walk(route) if isinstance(call, ast.Call) and _to_threads(module, call)), None)
        if handed is not None:
            return ServingModel(True, f"the threads the async route {route.name}() (line {route.lineno}) hands its work to "
                                      f"with {text(handed.func)}() at line {handed.lineno}")
    if routes:
        names = ", ".join(f"{route.name}() (line {route.lineno})" for route in routes[:3])
        return ServingModel(False, f"{framework}'s event loop, one request at a time in each process: its async "
                                   f"route{'s' if len(routes) != 1 else ''} {names} hand{'s' if len(routes) == 1 else ''} "
                                   "nothing to threads (no run_in_executor(), to_thread() or run_in_threadpool())")
    return None


def _to_threads(module: Module, call: ast.Call) -> bool:
    name = module.canonical(call.func) or ""
    return (isinstance(call.func, ast.Attribute) and call.func.attr == "run_in_executor") or name in TO_THREADS \
        or name.endswith(".run_in_threadpool") or name == "run_in_threadpool"


def _flask(module: Module, app: ast.Call, launcher: LauncherFacts | None) -> ServingModel | None:
    """Flask's own server where its ``app.run()`` runs; else the launcher that imports the app."""
    imported = launcher is not None and launcher.launcher in IMPORTERS
    runs = [call for call in module.calls() if _app_run(module, call)]
    running = [call for call in runs if not (imported and in_main_block(module, call))]
    if running:
        return _app_run_model(running[0])
    skipped = (f"; its app.run() at line {runs[0].lineno}, under if __name__ == \"__main__\":, does not run when "
               f"{launcher.launcher if launcher else 'a launcher'} imports the app") if runs else ""
    if launcher is not None and launcher.launcher == Launcher.GUNICORN:
        model = gunicorn_model(launcher)
        return ServingModel(model.threaded, model.said + skipped) if model is not None else None
    if imported:
        return None
    return ServingModel(True, f"the Flask app (line {app.lineno}), whose server neither the source nor a launcher shows: "
                              "`flask run` serves it in threads (its default since Flask 1.0)")


def _app_run(module: Module, call: ast.Call) -> bool:
    """``app.run(...)`` of a Flask app: a ``run`` call with Flask's options, or on a receiver named like an app."""
    if not (isinstance(call.func, ast.Attribute) and call.func.attr == "run"):
        return False
    receiver = text(call.func.value).lower()
    return "predictor" not in receiver and (
        "app" in receiver or any(keyword.arg in ("threaded", "processes", "host", "port", "debug") for keyword in call.keywords))


def _app_run_model(call: ast.Call) -> ServingModel | None:
    code = f"{text(call.func)}({', '.join(text(keyword) for keyword in call.keywords if keyword.arg in ('threaded', 'processes'))})"
    threaded, processes = _constant(call, "threaded"), _constant(call, "processes")
    if any(keyword.arg == "threaded" for keyword in call.keywords) and not isinstance(threaded, bool):
        return None  # threaded= an expression the source alone does not settle
    if isinstance(processes, int) and not isinstance(processes, bool) and processes > 1:
        return ServingModel(False, f"{code} at line {call.lineno}: Flask's server forks a process for each request, "
                                   "one request at a time in each")
    if threaded is False:
        return ServingModel(False, f"{code} at line {call.lineno}: Flask's server takes one request at a time")
    if threaded is True:
        return ServingModel(True, f"{code} at line {call.lineno}: Flask's server runs each request in a thread of its own")
    return ServingModel(True, f"{code} at line {call.lineno}, with no threaded=: Flask's server runs each request in a "
                              "thread of its own (threaded is its default since Flask 1.0)")


def gunicorn_model(launcher: LauncherFacts) -> ServingModel | None:
    """How gunicorn's workers take requests, from its worker class and threads; None where a setting is not evaluated."""
    worker_class, threads = launcher.setting(LauncherKnob.WORKER_CLASS), launcher.setting(LauncherKnob.THREADS)
    if (worker_class is not None and not isinstance(worker_class.value, str)) or (
            threads is not None and (not isinstance(threads.value, int) or isinstance(threads.value, bool))):
        return None
    kind = str(worker_class.value).strip().lower() if worker_class is not None else "sync"
    count = threads.value if threads is not None and isinstance(threads.value, int) else 1
    said = f"{_said(worker_class, 'worker_class sync')}; {_said(threads, 'threads 1')}"
    if kind in ("sync", "gthread") or kind.endswith(("workers.sync.syncworker", "workers.gthread.threadworker")):
        if count > 1:
            runs = ", which gunicorn runs as gthread with threads above 1" if kind != "gthread" else ""
            return ServingModel(True, f"gunicorn's {kind} workers{runs}, {count} threads in each ({said})")
        return ServingModel(False, f"gunicorn's {'sync' if kind == 'sync' else kind} workers, one request at a time in each ({said})")
    if any(green in kind for green in GREEN_WORKERS):
        return ServingModel(True, f"gunicorn's {kind} workers, many requests at once in each ({said})")
    return None


def _said(setting: LauncherSetting | None, default: str) -> str:
    return setting.detail if setting is not None else f"{default}, gunicorn's default"


def _constant(call: ast.Call, keyword: str) -> object:
    value = next((item.value for item in call.keywords if item.arg == keyword), None)
    return value.value if isinstance(value, ast.Constant) else None
