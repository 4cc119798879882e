"""The constraints a document's types carry into its JSON Schema (``Annotated[int, Constraint(minimum=0)]``),
apart from the schema generator (:mod:`paddle_doctor.base.schema`), so that the types load without it."""

from __future__ import annotations

import dataclasses
import json
from typing import Annotated, Any


@dataclasses.dataclass(frozen=True)
class Constraint:
    """JSON Schema keywords a type carries: ``Annotated[int, Constraint(minimum=0)]``."""

    keywords: dict[str, Any]

    def __init__(self, **keywords: Any) -> None:
        object.__setattr__(self, "keywords", keywords)

    def __hash__(self) -> int:
        return hash(json.dumps(self.keywords, sort_keys=True))


Count = Annotated[int, Constraint(minimum=0)]
Positive = Annotated[int, Constraint(minimum=1)]
NonNegative = Annotated[float, Constraint(minimum=0)]
RuleId = Annotated[str, Constraint(pattern=r"^PD-[A-Z]+-[0-9]{3}$")]
Url = Annotated[str, Constraint(format="uri")]
UrlReference = Annotated[str, Constraint(format="uri-reference")]
ExitCode = Annotated[int, Constraint(enum=[0, 1, 2])]


def version_metadata(version: int) -> dict[str, Any]:
    """The metadata of a document's ``schema_version`` field: the schema admits this version and no
    other (``field(metadata=version_metadata(N))`` where the field comes without a default)."""
    return {"schema": {"const": version}}


def version_field(version: int) -> int:
    """A document's ``schema_version``: this version by default, and the schema admits no other."""
    return dataclasses.field(default=version, metadata=version_metadata(version))
