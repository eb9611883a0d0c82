"""A process's attributes wherever its class keeps them: in its ``__dict__`` and in the
``__slots__`` a solution's class declares (``__slots__ = ("queue",)``, ``@dataclass(slots=True)``).

Copying a world, snapshotting a node by default, showing its card and watching its counters all
read these; reading ``__dict__`` alone lost a slot (a copy without it raised AttributeError in
``check``, and two nodes differing only there were one state)."""

from __future__ import annotations

import copy
from collections import deque
from typing import Any

from .clock import LamportClock

# Slots of mutexlab's own bases, not a solution's state: ``Protocol._named`` (its setup's name).
OWN = frozenset({"__dict__", "__weakref__", "_named"})


_NAMES: dict[type, tuple[str, ...]] = {}


def slot_names(cls: type) -> tuple[str, ...]:
    """Every slot ``cls`` and its bases declare, base first, as the instance spells it (a private
    ``__x`` of class ``C`` is ``_C__x``), mutexlab's own left out; worked out once per class."""
    got = _NAMES.get(cls)
    if got is None:
        got = _NAMES[cls] = _declared(cls)
    return got


def _declared(cls: type) -> tuple[str, ...]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        declared = klass.__dict__.get("__slots__", ())
        for name in (declared,) if isinstance(declared, str) else declared:
            if name in OWN:
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{klass.__name__.lstrip('_')}{name}"
            if name not in names:
                names.append(name)
    return tuple(names)


def slot_values(obj: Any) -> list[tuple[str, Any]]:
    """``(name, value)`` of each slot of ``obj`` that is set."""
    missing = object()
    got = ((name, getattr(obj, name, missing)) for name in slot_names(type(obj)))
    return [(name, value) for name, value in got if value is not missing]


def attributes(obj: Any) -> dict[str, Any]:
    """``obj``'s attributes: its ``__dict__`` (in its order), then its slots that are set."""
    out = dict(getattr(obj, "__dict__", {}))
    out.update(slot_values(obj))
    return out


_SHARED = (int, str, float, bool, type(None), frozenset, bytes)


def fork_value(value: Any, memo: dict[int, Any]) -> Any:
    """A copy of an attribute's ``value`` for a copied process (``Protocol.__deepcopy__``): plain
    containers copied structurally, immutable values shared, anything else deep-copied."""
    kind = type(value)
    if kind in _SHARED:
        return value
    if kind is list:
        return [fork_value(v, memo) for v in value]
    if kind is dict:
        return {k: fork_value(v, memo) for k, v in value.items()}
    if kind is set:
        return set(value)  # elements of a set are hashable, hence treated as immutable
    if kind is tuple:
        return tuple(fork_value(v, memo) for v in value)
    if kind is deque:
        return deque(fork_value(v, memo) for v in value)
    if kind is LamportClock:
        return LamportClock(value.time)
    return copy.deepcopy(value, memo)
