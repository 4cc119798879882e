"""The service's thread variables (``OMP_NUM_THREADS``, ``MKL_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``)
and Paddle's ``FLAGS_*``: which names are noted, how many and how long (a record holds no more), and
each place the service's source sets one (``os.environ[NAME] = value``, ``os.environ.setdefault``,
``os.environ.update``, ``os.putenv``), with where."""

from __future__ import annotations

from ..base.constraints import Count
from ..base.deferred import deferred_dataclass
from ..base.vocabulary import Word

THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
FLAGS_PREFIX = "FLAGS_"
MAX_VARIABLES = 64  # the most a record notes (the thread variables first, then FLAGS_* by name)
MAX_NAME = 100
MAX_VALUE = 200


def noted_name(name: str) -> bool:
    """Whether the variable ``name`` is one the record and the source reader note."""
    return name in THREAD_VARIABLES or (name.startswith(FLAGS_PREFIX) and 0 < len(name) <= MAX_NAME and name.isidentifier())


def noted(environ: dict[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that are noted: the thread variables, then the first FLAGS_* by name,
    at most :data:`MAX_VARIABLES`, each value cut to :data:`MAX_VALUE` characters."""
    names = [name for name in THREAD_VARIABLES if name in environ]
    names += sorted(name for name in environ if name not in THREAD_VARIABLES and noted_name(name))
    return {name: str(environ[name])[:MAX_VALUE] for name in names[:MAX_VARIABLES]}


class EnvironmentChange(Word):
    """How the source sets a variable: ``os.environ[NAME] = value`` (``assigned``), ``os.environ.update``
    (``updated``), ``os.environ.setdefault`` (``defaulted``: only where it is unset), ``os.putenv``
    (``putenv``: the C environment only; ``os.environ`` and what reads it do not see it)."""

    ASSIGNED = "assigned"
    UPDATED = "updated"
    DEFAULTED = "defaulted"
    PUTENV = "putenv"


@deferred_dataclass(frozen=True)
class SourceEnvironment:
    """One place the service's source sets a noted variable of its own environment, at its module's top
    level or in a function it runs there or that builds a Config: ``value`` is None when ``evaluated``
    is False (an expression the doctor cannot evaluate); ``function`` the function it is in, None at the
    top level."""

    name: str
    value: str | None
    evaluated: bool
    change: EnvironmentChange
    file: str
    line: Count
    code: str
    function: str | None = None

    def where(self) -> str:
        return f"{self.file}:{self.line}"
