"""Where the simulator's tallied fast loop reads a process's state (``sim/fastpath.state_source``):
what it reads is ``proto.state`` itself, for every way a class may hold ``state`` (an attribute,
a class default, a property, a slot, a ``__getattribute__`` of its own, a state deleted), before and
after the state changes; broken variants of ``state_source`` are caught."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from mutexlab.sim import fastpath as sim_fastpath


class Plain:
    def __init__(self) -> None:
        self.state = "idle"

    def change(self, value: str) -> None:
        self.state = value


class ClassDefault(Plain):
    state = "default"


class Property(Plain):
    def __init__(self) -> None:
        self.__dict__["state"] = "shadowed"  # what the dict says; the property comes first
        self._state = "idle"

    @property
    def state(self) -> str:  # type: ignore[override]
        return self._state

    @state.setter
    def state(self, value: str) -> None:
        self._state = value


class Slotted:
    __slots__ = ("state", "__dict__")

    def __init__(self) -> None:
        self.state = "idle"
        self.__dict__["state"] = "shadowed"

    def change(self, value: str) -> None:
        self.state = value


class Intercepting(Plain):
    def __getattribute__(self, name: str) -> Any:
        value = object.__getattribute__(self, name)
        return f"seen {value}" if name == "state" else value


class Deleting(ClassDefault):
    def change(self, value: str) -> None:
        del self.state  # the class default shows through


CLASSES = [Plain, ClassDefault, Property, Slotted, Intercepting, Deleting]


def read(source: Any, proto: Any) -> Any:
    """The fast loop's read of ``proto.state`` from its ``source``, written as the loop has it."""
    try:
        return source["state"]
    except KeyError:
        return proto.state


def check(state_source) -> None:
    for cls in CLASSES:
        proto = cls()
        source = state_source(proto)
        assert read(source, proto) == proto.state, cls.__name__
        proto.change("busy")
        assert read(source, proto) == proto.state, cls.__name__


def test_the_state_read_is_proto_state_for_every_kind_of_class():
    check(sim_fastpath.state_source)
    assert type(sim_fastpath.state_source(Plain())) is dict  # the quick read where it is exact


BROKEN = {
    "a property's state read from the dict": (
        'if not hasattr(type(declared), "__set__") and not hasattr(type(declared), "__delete__"):',
        "if True:",
    ),
    "an own __getattribute__ passed by": ("kind.__getattribute__ is object.__getattribute__", "True"),
}


@pytest.mark.parametrize("name", BROKEN)
def test_a_broken_state_source_is_caught(name):
    old, new = BROKEN[name]
    source = inspect.getsource(sim_fastpath.state_source)
    assert source.count(old) == 1, f"the broken variant no longer applies: {old!r}"
    namespace = dict(vars(sim_fastpath))
    exec(compile(source.replace(old, new), sim_fastpath.__file__, "exec"), namespace)  # noqa: S102
    with pytest.raises(AssertionError):
        check(namespace["state_source"])
