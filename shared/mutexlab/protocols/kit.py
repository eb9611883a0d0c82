"""Everything a protocol author imports, from one place (docs/your-algorithm.md).

A classic algorithm (one critical section ``cs``, N nodes, each asking ``requests`` times) is
one file::

    from mutexlab.protocols.kit import HELD, RELEASED, WANTED, ClassicNode, Message, Send, ...

    class Request(Message): ...                  # the messages
    class MyNode(ClassicNode):                   # the node: its states are RELEASED, WANTED, HELD
        TABLE = classic_table(...)               # (state, input) → handler, as data (machine.py)
        def _request(self): ...                  # and its handlers, returning effects (Send ...)
    SPEC = classic_algorithm("my-algo", "one line", MyNode, Request, ...)

``ClassicNode`` here is ``classic.ClassicNode`` with the two defaults a new protocol would
otherwise have to write before ``check`` and ``explore`` can run it: ``snapshot()`` (every
attribute but the workload's bookkeeping, made hashable) and ``waiting_for()`` (a WANTED node waits to enter). A protocol that
knows better overrides them (the built-in ones all do).
"""

from __future__ import annotations

import dataclasses
import random
from collections import Counter, OrderedDict, defaultdict, deque
from collections.abc import Callable
from enum import Enum
from typing import Any, ClassVar

from ..clock import LamportClock, priority
from ..machine import Cell, Table, ignore, on
from ..messages import Codec, Message
from ..problems import philosopher, philosophers
from ..problems.philosopher import (
    EATING,
    HUNGRY,
    THINKING,
    philosopher_table,
    philosophers_setup,
)
from ..protocol import Effect, Enter, Exit, Note, ProtocolError, Schedule, Send
from ..reduction import Canonical, ClockOffsets, Reductions, SendBound
from ..setups import Setup
from ..slots import attributes
from ..spec import AlgorithmSpec, Figure
from . import classic
from .classic import CS, State, classic_spec, classic_table, expect, workload_setup

# A classic node's three states by their plain names: what an author writes in a table.
RELEASED, WANTED, HELD = State.RELEASED, State.WANTED, State.HELD

__all__ = [
    "CS",
    "EATING",
    "HUNGRY",
    "THINKING",
    "Philosopher",
    "philosopher_table",
    "philosophers_algorithm",
    "philosophers_setup",
    "HELD",
    "RELEASED",
    "WANTED",
    "AlgorithmSpec",
    "Canonical",
    "ClockOffsets",
    "Reductions",
    "SendBound",
    "Cell",
    "ClassicNode",
    "Codec",
    "Effect",
    "Enter",
    "Exit",
    "Figure",
    "Message",
    "Note",
    "ProtocolError",
    "Schedule",
    "Send",
    "State",
    "Table",
    "classic_algorithm",
    "classic_spec",
    "classic_table",
    "expect",
    "freeze",
    "ignore",
    "on",
    "priority",
    "workload_setup",
]


def freeze(value: Any) -> Any:
    """``value`` as a hashable value that is equal exactly when the state is: lists, deques and
    tuples → tuples, sets → frozensets, dicts → tuples of items (in their order: code may iterate
    them; a ``Counter``, ``defaultdict`` or ``OrderedDict`` → its kind's name and its items), a Lamport clock → its time, a ``random.Random`` → its state, a dataclass that cannot be
    hashed (not frozen), or a message holding a list, dict or set → its class's name and every
    attribute, frozen. Anything else must be
    hashable already."""
    kind = type(value)
    if kind in (list, tuple, deque):
        return tuple(freeze(v) for v in value)
    if kind in (set, frozenset):
        return frozenset(freeze(v) for v in value)
    if kind is dict:
        return tuple((k, freeze(v)) for k, v in value.items())
    if kind in (Counter, defaultdict, OrderedDict):  # its kind told apart: it behaves otherwise
        return (kind.__name__, tuple((k, freeze(v)) for k, v in value.items()))
    if kind is LamportClock:
        return value.time
    if kind is random.Random:  # a seeded generator of its own: its state, not its identity
        return ("random.Random", value.getstate())
    if isinstance(value, Message) and not value.is_value():  # a list in it: by value, as a dataclass
        return (kind.__qualname__, tuple((name, freeze(v)) for name, v in vars(value).items()))
    if isinstance(value, (Enum, Message)) or value is None:
        return value
    try:
        hash(value)
    except TypeError:
        if dataclasses.is_dataclass(value) and not isinstance(value, type):  # a mutable one: by value
            attrs = (
                vars(value)
                if hasattr(value, "__dict__")
                else {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
            )
            return (kind.__qualname__, tuple((name, freeze(v)) for name, v in attrs.items()))
        raise TypeError(
            f"cannot snapshot a {kind.__name__}: write the node's own snapshot() (a hashable summary)"
        ) from None
    return value


class ClassicNode(classic.ClassicNode):
    """``classic.ClassicNode`` (its states RELEASED, WANTED, HELD; implement ``_request()`` and
    ``_release()``, call ``_enter()``), with a default ``snapshot()`` and ``waiting_for()``."""

    # Workload bookkeeping, not protocol state: the count of entries made so far (the node's card
    # shows it; the audit, the metrics and check's liveness count the enter events themselves).
    # The default snapshot leaves it out: it decides nothing, and under an endless workload it
    # grows forever, so no world would ever come back. A subclass may name more of its own.
    BOOKKEEPING: ClassVar[frozenset[str]] = frozenset({"entries"})

    def snapshot(self) -> Any:
        """Every attribute (its slots too) but the ``BOOKKEEPING``, frozen (``freeze``): two nodes with equal
        attributes are one state."""
        skip, own = self.BOOKKEEPING, attributes(self)  # __dict__ and a subclass's __slots__
        try:
            return tuple((name, freeze(value)) for name, value in own.items() if name not in skip)
        except TypeError:  # name the attribute that cannot be frozen
            for name, value in own.items():
                try:
                    freeze(value)
                except TypeError as exc:
                    raise TypeError(f"its attribute {name!r}: {exc}") from None
            raise

    def waiting_for(self) -> dict[str, list[int]]:
        """A WANTED node waits for the messages its table lets it enter on (the WANTED cells
        whose ``to`` names HELD), from anyone; when no cell says so, to enter. From whom: unknown
        here (override to name them, as the stall explanation then can). ``check --metrics``
        charges such a message to the request it serves (docs/check.md#metrics)."""
        if self.state is not WANTED:
            return {}
        return {kind: [] for kind in entered_on(type(self))} or {"entry": []}


_ENTERED_ON: dict[type, tuple[str, ...]] = {}


def entered_on(cls: type) -> tuple[str, ...]:
    """The message types ``cls``'s table lets a WANTED node enter on (``to`` naming HELD)."""
    got = _ENTERED_ON.get(cls)
    if got is None:
        table = getattr(cls, "TABLE", None)
        cells = table.rows.get(WANTED, {}) if isinstance(table, Table) else {}
        local = ("request", "exit")
        got = _ENTERED_ON[cls] = tuple(i for i, c in cells.items() if HELD in c.to and i not in local)
    return got


class Philosopher(philosopher.Philosopher):
    """``problems.philosopher.Philosopher`` (implement ``_hungry()`` and ``_done()``, call
    ``_eat()``), with the default ``snapshot()`` ``ClassicNode`` has: every attribute but the
    ``BOOKKEEPING`` — ``eaten``, which ``meals_left`` and the state already decide — frozen."""

    BOOKKEEPING: ClassVar[frozenset[str]] = frozenset({"eaten"})
    snapshot = ClassicNode.snapshot


# A literature figure: a Figure, or (text, value for N) with the value a number or (low, high).
FigureLike = Figure | tuple[str, Callable[[int], float | tuple[float, float]]]


def as_figure(given: FigureLike) -> Figure:
    if isinstance(given, Figure):
        return given
    text, value = given

    def span(n: int, _params: dict[str, Any]) -> tuple[float, float]:
        got = value(n)
        return (got, got) if isinstance(got, (int, float)) else (got[0], got[1])

    return Figure(text, span)


def classic_algorithm(
    name: str,
    summary: str,
    node: Callable[[int, int, int, int], classic.ClassicNode],
    *messages: type[Message],
    literature: dict[str, FigureLike] | None = None,
    reductions: Reductions | Callable[[], Reductions] | None = None,
    problem: str = "mutex",
) -> AlgorithmSpec:
    """The ``SPEC`` of a solution of ``problem`` (``mutex``, or ``kmutex``: ``cs`` of capacity
    K) whose nodes are ``node(pid, n, requests, clock)`` (kmutex: also ``k=K``), talking in
    ``messages``, taking the problem's options only (``requests``, ``initial_clocks``, kmutex's
    ``k``); ``literature``: ``{"messages": ("2(N−1)", lambda n: 2 * (n - 1))}`` (messages per
    entry; ``"sync"``: synchronization delay in T), a value or (low, high); ``reductions``: what
    ``check`` may reduce, declared for exact classes, each with its reason (docs/check.md)."""
    codec = Codec(*messages)

    def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
        return workload_setup(name, processes, options, node, codec, problem)

    make_setup.__module__ = node.__module__  # the algorithm's module (its tables are read there)

    figures = {key: as_figure(value) for key, value in (literature or {}).items()}
    return classic_spec(name, summary, make_setup, codec, figures, reductions=reductions, problem=problem)


def philosophers_algorithm(
    name: str,
    summary: str,
    node: Callable[[int, int, int, int], Philosopher],
    *messages: type[Message],
    literature: dict[str, FigureLike] | None = None,
    reductions: Reductions | Callable[[], Reductions] | None = None,
) -> AlgorithmSpec:
    """The ``SPEC`` of a solution of the ``philosophers`` problem whose philosophers are
    ``node(pid, n, meals, clock)`` (subclasses of ``Philosopher``), talking in ``messages``,
    taking the problem's options only (``meals``, ``initial_clocks``)."""
    codec = Codec(*messages)
    problem = philosophers.PROBLEM

    def make_setup(processes: int, options: dict[str, Any], seed: int = 0) -> Setup:
        return philosophers_setup(name, processes, options, node, codec)

    def estimate(processes: int, options: dict[str, Any]) -> float:
        meals = options.get("meals", 1)
        return 4.0 * processes * (meals if isinstance(meals, int) and not isinstance(meals, bool) else 1)

    make_setup.__module__ = node.__module__  # the algorithm's module (its tables are read there)
    return AlgorithmSpec(
        name,
        problem.name,
        summary,
        make_setup,
        codec,
        role="philosopher",
        options=dict(problem.options),
        literature={key: as_figure(value) for key, value in (literature or {}).items()},
        reductions=reductions,
        estimate_messages=estimate,
        problem=problem,
    )
