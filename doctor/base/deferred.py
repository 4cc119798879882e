"""Dataclasses made when first used: :func:`deferred_dataclass`.

Making a dataclass compiles its methods (``__init__``, ``__repr__``, ``__eq__``, and for a frozen
one ``__setattr__``, ``__delattr__`` and ``__hash__``): about half a millisecond a class. A module
of the healthcheck's path that declares types only some runs make (each check's evidence types,
made where its rule fails) pays that at every probe for nothing. A deferred dataclass is the same
``dataclasses.dataclass(cls, **options)``, made the first time anything asks the class for what the
decorator adds: an instance built, ``dataclasses.fields`` or ``is_dataclass``, its ``__init__`` or
its ``__doc__`` read. Until then the class holds, in place of each of those names, a placeholder
that makes it and then answers as the made class does. :func:`made_all` makes every one not made
yet (the tests: a declaration the decorator refuses fails there, not at some later first use).
"""

from __future__ import annotations

import dataclasses
import threading
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from typing_extensions import dataclass_transform
else:
    def dataclass_transform(**_options: Any) -> Any:
        """typing's marker of a dataclass-like decorator, for the type checker only (3.11 has it, 3.10 not)."""
        return lambda decorator: decorator

C = TypeVar("C", bound=type)

# what dataclasses.dataclass adds to a class (frozen and eq included): each is a placeholder until then
ADDED = ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__", "__match_args__",
         "__dataclass_fields__", "__dataclass_params__")
_pending: dict[type, tuple[dict[str, Any], tuple[str, ...]]] = {}  # class -> the decorator's options, the names it holds placeholders for
_making = threading.RLock()  # checks run in threads of their own: one makes a class, the others wait for it


class _MadeOnUse:
    """A pending class's placeholder for one name the decorator adds."""

    def __init__(self, owner: type, name: str):
        self.owner, self.name = owner, name

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        made(self.owner)
        return getattr(instance if instance is not None else owner, self.name)


@dataclass_transform()
def deferred_dataclass(cls: C | None = None, /, **options: Any) -> Any:
    """``dataclasses.dataclass(cls, **options)`` (``slots`` aside), made when first used; with no class, the decorator."""
    if cls is None:
        return lambda later: deferred_dataclass(later, **options)
    if options.get("slots"):
        raise TypeError("a deferred dataclass cannot make slots: that replaces the class")
    names = tuple(name for name in ADDED if name not in cls.__dict__)
    if cls.__dict__.get("__doc__") is None:  # the decorator writes the signature there
        names += ("__doc__",)
    with _making:
        for name in names:
            setattr(cls, name, _MadeOnUse(cls, name))
        _pending[cls] = (options, names)
    return cls


def made(cls: type) -> type:
    """``cls`` made a dataclass now, where it is a deferred one not made yet; ``cls`` itself."""
    with _making:
        pending = _pending.pop(cls, None)
        if pending is None:
            return cls
        options, names = pending
        for name in names:
            if name == "__doc__":
                cls.__doc__ = None
            else:
                delattr(cls, name)
        try:
            result: Any = dataclasses.dataclass(cls, **options)
        except BaseException:
            _pending[cls] = pending  # the placeholders go: each later use raises the same error again
            for name in names:
                setattr(cls, name, _MadeOnUse(cls, name))
            raise
    assert result is cls  # without slots the decorator changes the class in place
    return cls


def made_all() -> list[type]:
    """Every deferred dataclass of the modules imported so far made now; the classes made."""
    with _making:
        classes = list(_pending)
        for cls in classes:
            made(cls)
    return classes


def is_pending(cls: type) -> bool:
    """Whether ``cls`` is a deferred dataclass not made yet."""
    return cls in _pending
