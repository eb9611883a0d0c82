"""How a protocol's state reads on a card: compact, deterministic renderings of state values.

A protocol's ``card()`` (protocol.py) returns ``Card`` rows built with these; the explorer shows
them first, then every other attribute rendered by ``fmt``. Requests are ``(timestamp, pid)``
pairs, shown as ``ts@pid``. Core layer: no imports from higher layers.
"""

from __future__ import annotations

import dataclasses
import re
from collections import deque
from collections.abc import Mapping, ValuesView
from collections.abc import Set as AbstractSet
from enum import Enum
from types import SimpleNamespace
from typing import Any

# A card: (label, text) rows in the order of the protocol's state table.
Card = list[tuple[str, str]]


def fmt(value: Any) -> str:
    """A compact, deterministic rendering of a state value, never a Python repr: a set (any
    ``Set``, a dict's keys) as ``{1, 3}`` in sorted order, a sequence (a deque, a dict's values)
    as ``[3, 1]``, a dict as ``{1: yes}``, an enum by its value when a string, else its name
    (``WANTED``, never ``Phase.WANTED`` nor ``<Phase.WANTED: 2>``), a dataclass or
    NamedTuple as ``Name(field=value, …)``, a ``types.SimpleNamespace`` as ``namespace(field=value,
    …)``; ``—`` for None, yes/no for a bool."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, Enum):  # a str-valued one as the trace records it, by its value
        return str.__str__(value) if isinstance(value, str) else value.name
    if isinstance(value, AbstractSet):  # set, frozenset, a dict's keys or items
        return "{" + ", ".join(fmt(v) for v in sorted(value, key=order)) + "}"
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a NamedTuple: by its names, never ts@pid
        fields = ", ".join(f"{name}={fmt(getattr(value, name))}" for name in value._fields)
        return f"{type(value).__name__}({fields})"
    if isinstance(value, SimpleNamespace):  # by its attributes, in the order they were set
        return "namespace(" + ", ".join(f"{k}={fmt(v)}" for k, v in vars(value).items()) + ")"
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = ", ".join(f"{f.name}={fmt(getattr(value, f.name))}" for f in dataclasses.fields(value))
        return f"{type(value).__name__}({fields})"
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        return f"{value[0]}@{value[1]}"
    if isinstance(value, (list, tuple, deque, ValuesView)):
        return "[" + ", ".join(fmt(v) for v in value) + "]"
    if isinstance(value, Mapping):
        items = sorted(value.items(), key=lambda kv: order(kv[0]))
        return "{" + ", ".join(f"{fmt(k)}: {fmt(v)}" for k, v in items) + "}"
    if hasattr(value, "model_dump"):
        return describe_message(value)
    return _ADDRESS.sub("", str(value))  # a partial, a generator: the same text in every run


def state_text(state: Any) -> str:
    """A process's state as output says it and the trace records it: a string (a ``str``-valued
    enum by its value: ``DEAD``, never ``Phase.DEAD``); an enum of no string by its class and name
    (``St.WANTED``: not the kit's ``WANTED``, which a table would take); else as ``fmt`` renders it."""
    if isinstance(state, str):
        return str.__str__(state)
    return f"{type(state).__name__}.{state.name}" if isinstance(state, Enum) else fmt(state)


def unnamed(state: Any) -> bool:
    """Whether ``state`` is a member of a plain ``Enum`` (or ``IntEnum``), or a plain number (a
    module constant ``ST_DEAD = 5``; a ``bool``, ``float`` alike): no name a trace holds, refused
    wherever a process is given or takes one (``setups.unnamed_state``)."""
    return (isinstance(state, Enum) and not isinstance(state, str)) or type(state) in (int, bool, float)


# An object's memory address in its default text (``<generator object g at 0x7f…>``): another in every run.
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def order(value: Any) -> tuple[Any, ...]:
    """Numbers first, by value; then tuples of numbers (requests ``ts@pid``), by value; anything
    else by its text as shown."""
    if _number(value):
        return (0, value, "")
    if isinstance(value, tuple) and value and all(_number(v) for v in value):
        return (1, value, "")
    return (2, (), fmt(value))


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def describe_message(msg: Any) -> str:
    """``REQUEST ts 3`` / ``ACKflower ts 7 req_ts 4`` / ``TOKEN ts 5 last [..] queue [..]``."""
    fields = msg.model_dump()
    parts = [str(fields.pop("type", type(msg).__name__))]
    fields.pop("sender", None)
    if "ts" in fields:
        parts.append(f"ts {fields.pop('ts')}")
    parts += [f"{k} {fmt(v)}" for k, v in fields.items()]
    return " ".join(parts)


def counted(items: Any) -> str:
    """A set of pids as its size and members: ``2 {1, 3}``."""
    return f"{len(items)} {fmt(set(items))}"


def attributes(p: Any, names: str, counts: frozenset[str] = frozenset(), **labels: str) -> Card:
    """A row for each attribute in ``names`` (space-separated), labelled by ``labels`` (else the
    name, "_" → " "); those in ``counts`` are shown ``counted``."""
    return [
        (labels.get(name) or name.replace("_", " "), (counted if name in counts else fmt)(getattr(p, name)))
        for name in names.split()
    ]
