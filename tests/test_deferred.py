"""A deferred dataclass (base/deferred.py) is the dataclass ``dataclasses.dataclass`` makes, made at its
first use: the same fields, signature, repr, equality, hash, frozenness and docstring, whatever asks first."""

from __future__ import annotations

import dataclasses
import inspect
import threading
import typing

import pytest
from paddle_doctor.base.deferred import deferred_dataclass, is_pending, made_all


def declare(decorator, frozen: bool = True):
    class Point:
        x: int
        y: tuple[str, ...] = ()
        z: str | None = None
        tags: list[str] = dataclasses.field(default_factory=list, hash=False)

    return decorator(frozen=frozen)(Point)


def eager_and_deferred(frozen: bool = True) -> tuple[type, type]:
    return declare(dataclasses.dataclass, frozen), declare(deferred_dataclass, frozen)


def test_a_deferred_class_is_made_only_when_used():
    _, deferred = eager_and_deferred()
    assert is_pending(deferred)
    point = deferred(1, ("a",))
    assert not is_pending(deferred)
    assert (point.x, point.y, point.z, point.tags) == (1, ("a",), None, [])


@pytest.mark.parametrize("first_use", [
    lambda cls: cls(1),
    lambda cls: dataclasses.fields(cls),
    lambda cls: dataclasses.is_dataclass(cls),
    lambda cls: inspect.signature(cls),
    lambda cls: cls.__init__,
    lambda cls: cls.__doc__,
    lambda cls: cls.__match_args__,
    lambda cls: cls.__dataclass_params__,
])
def test_whatever_asks_first_sees_the_made_dataclass(first_use):
    eager, deferred = eager_and_deferred()
    first_use(deferred)
    assert not is_pending(deferred)
    assert [(f.name, f.type, f.default) for f in dataclasses.fields(deferred)] == \
        [(f.name, f.type, f.default) for f in dataclasses.fields(eager)]
    assert str(inspect.signature(deferred)) == str(inspect.signature(eager))
    assert deferred.__doc__ == eager.__doc__ and deferred.__match_args__ == eager.__match_args__
    assert deferred.__dataclass_params__.frozen and dataclasses.is_dataclass(deferred)


def test_instances_behave_as_the_eager_dataclass_s():
    eager, deferred = eager_and_deferred()
    a, b = deferred(1, ("a",)), deferred(1, ("a",))
    assert a == b and hash(a) == hash(b) and a != deferred(2)
    assert repr(a) == repr(eager(1, ("a",)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.x = 3  # type: ignore[misc]
    assert dataclasses.replace(a, z="z") == deferred(1, ("a",), "z")
    assert dataclasses.asdict(a) == {"x": 1, "y": ("a",), "z": None, "tags": []}
    assert typing.get_type_hints(deferred) == typing.get_type_hints(eager)


def test_a_plain_deferred_class_stays_mutable_and_unhashable():
    plain = declare(deferred_dataclass, frozen=False)
    point = plain(1)
    point.x = 2
    assert point == plain(2) and type(point).__hash__ is None


def test_a_subclass_makes_its_deferred_base_first():
    @deferred_dataclass(frozen=True)
    class Base:
        a: int

    @deferred_dataclass(frozen=True)
    class Derived(Base):
        b: str = "b"

    assert is_pending(Base) and is_pending(Derived)
    assert Derived(1) == Derived(1, "b") and [f.name for f in dataclasses.fields(Derived)] == ["a", "b"]
    assert not is_pending(Base)


def test_a_declaration_the_decorator_refuses_fails_at_its_first_use_and_again_after():
    class Unordered:
        a: int = 1
        b: int

    deferred_dataclass(frozen=True)(Unordered)
    try:
        for _ in range(2):
            with pytest.raises(TypeError, match="follows default argument"):
                Unordered(1, 2)
        assert is_pending(Unordered)
    finally:
        _pending_classes().pop(Unordered, None)  # not left for made_all


def test_slots_are_refused():
    with pytest.raises(TypeError, match="slots"):
        declare(lambda **options: deferred_dataclass(slots=True, **options))


def test_threads_that_use_it_at_once_get_one_made_class():
    _, deferred = eager_and_deferred()
    made_in: list[object] = []
    start = threading.Barrier(8)

    def use() -> None:
        start.wait()
        made_in.append(deferred(1).__init__.__func__)

    threads = [threading.Thread(target=use) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made_in) == 8 and len(set(made_in)) == 1


def test_every_deferred_dataclass_of_the_doctor_and_its_checks_is_made_without_error():
    """A class the decorator would refuse is found here, not at the first run that makes one."""
    from paddle_doctor.checks import BUILT_IN
    from paddle_doctor.health import healthcheck  # noqa: F401 (its path, every module the probe imports)
    from paddle_doctor.judge.findings import Evidence

    assert BUILT_IN
    for cls in made_all():
        assert dataclasses.is_dataclass(cls) and not is_pending(cls)
    for check in BUILT_IN:
        for rule in check.rules:
            for kind in check.evidence_types(rule):
                assert issubclass(kind, Evidence) and kind.__dataclass_params__.frozen


def _pending_classes():
    from paddle_doctor.base import deferred

    return deferred._pending
