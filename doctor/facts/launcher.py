"""How the service is started: the launcher its command line runs (gunicorn, uvicorn, hypercorn, celery,
``python -m``, a console script, a script), the file that launcher runs as the service's code, and the
launcher's own settings (its workers, threads, worker class, preload), each with where it was read."""

from __future__ import annotations

from dataclasses import field

from ..base.deferred import deferred_dataclass
from ..base.vocabulary import Word


class Launcher(Word):
    """What runs the service's code: a server or task queue that imports it by name, Python's ``-m``, a
    console script of an installed distribution, or a script given by its path."""

    GUNICORN = "gunicorn"
    UVICORN = "uvicorn"
    HYPERCORN = "hypercorn"
    CELERY = "celery"
    MODULE = "python -m"
    CONSOLE_SCRIPT = "console script"
    SCRIPT = "script"
    UNKNOWN = "unknown"


class LauncherKnob(Word):
    """A launcher's setting that decides how many copies of the service's code run, and how: ``workers``
    (gunicorn -w, uvicorn and hypercorn --workers, celery's --concurrency), ``threads`` (gunicorn --threads),
    ``worker_class`` (gunicorn -k, celery's --pool), ``preload_app`` (gunicorn --preload)."""

    WORKERS = "workers"
    THREADS = "threads"
    WORKER_CLASS = "worker_class"
    PRELOAD_APP = "preload_app"


@deferred_dataclass(frozen=True)
class LauncherSetting:
    """One of the launcher's settings, as the launcher itself reads it: ``value`` None where it is set in a way
    the doctor cannot evaluate (``detail`` says where and why); ``detail`` says where it was read (the command
    line, ``GUNICORN_CMD_ARGS``, ``gunicorn.conf.py:3``, the launcher's own default); ``file`` and ``line`` the
    assignment of the configuration file that sets it, where one does."""

    name: LauncherKnob
    value: int | bool | str | None
    detail: str
    file: str | None = None  # the launcher's configuration file that assigns it, and the line, where one does
    line: int | None = None


@deferred_dataclass(frozen=True)
class LauncherFacts:
    """The launcher of the service and the file of the service's code it runs. ``target``: what the command
    names (``app:app``, ``pkg.mod:create_app()``, ``-m pkg``, ``-A proj``, a console script's entry point);
    ``entry``: the file, as the service's process sees it, found on the service interpreter's ``sys.path``
    (``search``: those folders, in order), and ``entry_source`` how; ``reason``: why there is no entry, one
    line. ``config_files``: the launcher's configuration files read (gunicorn's ``-c FILE`` or
    ``./gunicorn.conf.py``), whose hooks (``post_fork``, ``when_ready``) are read as the service's source too.
    ``live``: the launcher's worker count against the live deployment's, where both are known."""

    launcher: Launcher = Launcher.UNKNOWN
    target: str | None = None
    entry: str | None = None
    entry_source: str | None = None
    reason: str | None = None
    search: list[str] = field(default_factory=list)
    settings: list[LauncherSetting] = field(default_factory=list)
    config_files: list[str] = field(default_factory=list)
    live: str | None = None

    def setting(self, name: LauncherKnob) -> LauncherSetting | None:
        """The launcher's setting ``name``, where it is read."""
        return next((setting for setting in self.settings if setting.name == name), None)
