"""The service: what it asks of Paddle, every place that says so, and where each value came from.

- ``config``: the declared configuration (``ServiceConfig``) and what a command declares of it: its
  flags (``ServiceOptions``, ``check``, ``facts``, ``baseline`` and ``healthcheck`` alike) and the
  ``--config`` file, with its checks;
- ``sources``: what the service's source sets, setting by setting, and the predictors it builds;
- ``reading``: the live process, its source and its record (``paddle-doctor record``), read;
- ``resolve``: the one function that merges them by precedence, each value with its origin.

Only ``config`` loads with the package: ``Facts`` holds a ``ServiceConfig``.
"""

from __future__ import annotations

from .config import (  # noqa: F401 (the package's names)
    PADDLE_DEFAULT_THREADS,
    ServiceConfig,
    ServiceConfigError,
    ServiceOptions,
    SettingOrigin,
    SourceInputError,
    TensorRTSettings,
    load_service_config,
    service_from_data,
    serving_layout,
    validate_service,
)
