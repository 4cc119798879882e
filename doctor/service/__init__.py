"""The service: what it asks of Paddle, every place that says so, and where each value came from.

- ``config``: what a command declares of the service (``ServiceConfig``, a fact): its flags
  (``ServiceOptions``, ``check``, ``facts``, ``baseline`` and ``healthcheck`` alike) and the
  ``--config`` file, with its checks;
- ``sources``: what the service's source sets, setting by setting, and the predictors it builds;
- ``reading``: the live process, its source and its record (``paddle-doctor record``), read;
- ``record``: the service's record, read and checked;
- ``resolve``: the one function that merges them by precedence, each value with its origin.

Only ``config`` loads with the package.
"""

from __future__ import annotations

from .config import ServiceConfigError, ServiceOptions, service_from_data, validate_service  # noqa: F401 (the package's names)
