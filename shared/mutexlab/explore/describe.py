"""What a process card and a message chip show: each protocol's own state, in its own words.

``describe_process(proto, setup)`` gives ``[[label, text], ...]``: first the rows of the
protocol's own ``card()`` (protocol.py; the bees' reed, eggs and ACK counts, Maekawa's lock and
queue ...), then every other attribute the object has (so nothing is hidden when a protocol grows
a field), minus identity (pid, n, clock and state — the card shows those itself) and what the
protocol declares fixed configuration (``CONFIG_FIELDS``). Values are rendered by ``show.py``.
"""

from __future__ import annotations

import copy
from typing import Any

from ..setups import Setup
from ..show import describe_message, fmt
from ..slots import attributes

__all__ = ["describe_message", "describe_process", "fmt"]

# Identity: shown on every card's head, not as rows.
HIDDEN = {"pid", "n", "clock", "state"}
_SPIES: dict[type, type] = {}


def _spy_class(cls: type) -> type:
    """A subclass of ``cls`` that records every attribute read (the card's own rows are then not
    repeated below it); made once per class."""
    spy = _SPIES.get(cls)
    if spy is None:

        def __getattribute__(self: Any, name: str) -> Any:
            if not name.startswith("__"):
                object.__getattribute__(self, "_card_reads").add(name)
            return object.__getattribute__(self, name)

        # no slots of its own: the layout stays cls's (a slotted class without __weakref__ too)
        spy = _SPIES[cls] = type(
            cls.__name__, (cls,), {"__getattribute__": __getattribute__, "__slots__": ()}
        )
    return spy


def describe_process(proto: Any, setup: Setup | None = None) -> list[list[str]]:
    reads: set[str] = set()
    spy = copy.copy(proto)
    spy.__dict__["_card_reads"] = reads
    spy.__class__ = _spy_class(type(proto))
    rows = list(spy.card())
    hidden = HIDDEN | getattr(type(proto), "CONFIG_FIELDS", frozenset())
    for name, value in attributes(proto).items():
        if name in reads or name in hidden or name.startswith("_"):
            continue
        rows.append((name.replace("_", " "), fmt(value)))
    return [[label, text] for label, text in rows]
