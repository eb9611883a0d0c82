"""A protocol's transition table as data: (state, input) → the handler that runs, and where it may go.

The model is h11's ``_state.py``: the table *is* the dispatch. A protocol class declares::

    TABLE = Table(State, {
        State.RELEASED: {"request": on("broadcast REQUEST", "_request", to=(State.WANTED, State.HELD)),
                         "REQUEST": on("reply", "_on_request")},
        State.WANTED:   {"REQUEST": on("reply if (t, j) < mine, else defer", "_on_request"),
                         "REPLY": on("count; all → HELD", "_on_reply", to=(State.HELD,))},
        ...
    })

An input is a message's type tag (``msg.type``) or a local action (``"request"``, ``"exit"`` ...).
``Protocol.on_message``/``on_local`` look the pair up in the table compiled for the protocol's
class (``Table.compile``: handlers are resolved by name on each class, so a subclass's override
runs) and call the cell's handler with the message, or the action's name; a pair the table does
not hold raises ``ProtocolError`` naming the process, its state and the input, before anything
changes.
``ignore(why)`` is a cell that accepts the input and changes nothing (or runs only ``handler``, e.g.
one that takes the message's clock); ``never(why)`` names a pair only to say why it cannot come:
it is refused like a pair the table lacks, and the error says why.

Invariants the tests hold every protocol to (``Table.check_step``): after a handler returns, the
state is one of the cell's ``to`` states, or the state it was in. The docs' tables are rendered
from the data (``Table.markdown``), never written by hand.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from inspect import getattr_static
from types import FunctionType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .protocol import Effect

Handler = Callable[[Any, Any], "list[Effect]"]


@dataclass(frozen=True)
class Cell:
    """What one (state, input) pair does: ``text`` for the docs, the method ``handler`` names
    (None: accept and do nothing), the states it may move to (``to``; empty: it stays);
    ``refused``: the pair cannot come, and ``text`` says why."""

    text: str
    handler: str | None = None
    to: tuple[StrEnum, ...] = ()
    refused: bool = False


def on(text: str, handler: str, to: Iterable[StrEnum] | StrEnum = ()) -> Cell:
    """A cell that runs the protocol's method ``handler`` (described as ``text``), named by its
    name (a function is refused, naming the cell); ``to``: the states it may move to, or one."""
    if not isinstance(handler, str):
        raise TypeError(
            f"on({text!r}, …) was given {type(handler).__name__} {getattr(handler, '__name__', handler)!r}: "
            'a table names its handler by the method\'s name, a string such as "_on_request" '
            "(a method of the class, taking (self, msg) or (self, action))"
        )
    return Cell(text, handler, (to,) if isinstance(to, StrEnum) else tuple(to))


def ignore(why: str, handler: str | None = None) -> Cell:
    """A cell for an input that can arrive but changes nothing (``why`` says why it can), or only
    what ``handler`` does (the Lamport clock); the state stays."""
    return Cell(f"ignore ({why})", handler)


def never(why: str) -> Cell:
    """A cell for an input that cannot arrive in this state (``why``): refused (ProtocolError)."""
    return Cell(why, refused=True)


def _nothing(_proto: Any, _arg: Any) -> list[Effect]:
    return []


def _per_instance(name: str, static: Any) -> Handler:
    """A handler that is no plain function (a ``functools.singledispatchmethod``, a
    ``partialmethod``, a ``staticmethod``, a callable object): looked up on the process itself at
    every call, as ``proto.name(arg)`` would, so that the descriptor binds it as Python does (one
    taken from the class would dispatch on the process, not on the message)."""

    def call(proto: Any, arg: Any) -> Any:  # what it returns is judged by the caller (on_message)
        return getattr(proto, name)(arg)

    call.__wrapped__ = getattr(static, "func", None) or getattr(static, "__func__", None) or static  # type: ignore[attr-defined]  # its line, for a finding
    call.__qualname__ = call.__name__ = name
    return call


def _refuser(why: str) -> Handler:
    def refused(proto: Any, what: Any) -> list[Effect]:
        raise proto.refuse(what, why)

    return refused


@dataclass
class Table:
    """A protocol's transitions. ``rows`` maps each state to its accepted inputs; every other
    (state, input) pair is refused. ``never`` documents why a refused message cannot arrive,
    ``legend`` the words the cells use."""

    states: type[StrEnum]
    rows: Mapping[StrEnum, Mapping[str, Cell]]
    never: str = ""
    legend: str = ""
    inputs: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        for state in self.rows:
            if not isinstance(state, self.states):
                raise TypeError(f"table row {state!r} is not a {self.states.__name__}")
        seen: dict[str, None] = {}
        for cells in self.rows.values():
            for inp in cells:
                seen.setdefault(inp, None)
        self.inputs = tuple(seen)

    def shape(self) -> tuple[tuple[StrEnum, str, Cell], ...]:
        """Every (state, input, cell) the rows hold now: a table filled in place after its class
        was made has another shape than the one compiled (``Protocol.compile_table``)."""
        return tuple((state, inp, cell) for state, cells in self.rows.items() for inp, cell in cells.items())

    def compile(self, cls: type) -> dict[tuple[str, str], Handler]:
        """(state, input) → the function that runs, resolved by name on ``cls`` (once per class,
        at class creation); a name ``cls`` does not define is a bug in the table and fails then."""
        compiled: dict[tuple[str, str], Handler] = {}
        for state, cells in self.rows.items():
            for inp, cell in cells.items():
                if cell.handler is None:
                    compiled[state, inp] = _refuser(cell.text) if cell.refused else _nothing
                    continue
                fn = getattr(cls, cell.handler, None)
                if not callable(fn):
                    raise TypeError(
                        f"{cls.__name__}'s table names {cell.handler!r}, which it does not define"
                    )
                static = getattr_static(cls, cell.handler, None)
                compiled[state, inp] = (
                    fn if isinstance(static, FunctionType) else _per_instance(cell.handler, static)
                )
        return compiled

    def cell(self, state: StrEnum, inp: str) -> Cell | None:
        """What the table says of (``state``, ``inp``): None when it does not name the pair."""
        return self.rows.get(state, {}).get(inp)

    def accepts(self, state: StrEnum, inp: str) -> bool:
        cell = self.cell(state, inp)
        return cell is not None and not cell.refused

    def check_step(self, before: StrEnum, inp: str, after: StrEnum) -> None:
        """Raise AssertionError when a step from ``before`` on ``inp`` ended in a state the
        table does not allow (the tests' differential check of code against table)."""
        cell = self.cell(before, inp)
        if cell is None or cell.refused:
            raise AssertionError(f"{inp} accepted in {before}, which the table refuses")
        if after != before and after not in cell.to:
            raise AssertionError(
                f"{inp} in {before} moved to {after}; the table allows {' / '.join(cell.to) or 'no move'}"
            )

    def markdown(self, local: Iterable[str] = ("request", "exit")) -> str:
        """The table as Markdown (state × input → action), for the docs: a refused local action
        reads "error", a refused message "(never)", each followed by why when the table says."""
        local = set(local)
        head = ["state", *(f"{i} (local)" if i in local else i for i in self.inputs)]
        lines = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
        for state in self.states:
            cells = self.rows.get(state, {})
            row = [str(state)]
            for inp in self.inputs:
                cell = cells.get(inp)
                if cell is None or cell.refused:
                    refused = "error" if inp in local else "(never)"
                    row.append(f"{refused}: {cell.text}" if cell is not None else refused)
                else:
                    moves = " / ".join(str(s) for s in cell.to)
                    row.append(cell.text + (f" → {moves}" if moves and "→" not in cell.text else ""))
            lines.append("| " + " | ".join(text.replace("|", "\\|") for text in row) + " |")
        return "\n".join(lines)
