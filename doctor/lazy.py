"""Names a module publishes but imports only when first asked for (PEP 562), so that a cheap path
(the healthcheck) never pays for sections it does not use, while serde and the schema generator,
which resolve annotations by name, still reach them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def lazy_names(module: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports each name in ``homes`` from its module (relative to
    ``module``'s package, as in ``.graph``) on first use and keeps it in ``module``'s globals."""
    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        owner = sys.modules[module]
        value = getattr(importlib.import_module(home, owner.__package__), name)
        setattr(owner, name, value)
        return value

    return __getattr__
