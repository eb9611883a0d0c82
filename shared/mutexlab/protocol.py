"""The sans-I/O protocol interface (docs/architecture.md#protocol-interface).

A protocol object is one participant. It owns its state and its Lamport clock, and reacts to
three inputs:

* ``start()`` — once, before anything else;
* ``on_message(msg)`` — a message from another participant (links are reliable and FIFO);
* ``on_local(action)`` — a local decision: ``"request"`` (I want the resource) or ``"exit"``
  (I leave it). Which one applies is the protocol's business; a protocol with two kinds of
  resource, for instance, may use ``"request"`` for both.

Each returns a list of *effects*, in the order they must happen. The driver (simulator or RabbitMQ
service) carries them out in that order: an ``Exit`` is recorded before the ``Send`` that follows it, so
the trace shows the exit before anything that lets another process in.

A protocol never touches a socket, a thread, a timer or the wall clock. When it wants time to pass (a
process dwelling on a resource), it returns ``Schedule``; the driver later calls ``on_local(action)``.

States are a ``StrEnum`` per protocol (the trace writes a state as its name). Each protocol class declares
its transition table as data, ``TABLE`` (machine.py): (state, input) → the handler that runs and the
states it may move to, where an input is a message's type tag or a local action. ``on_message`` and
``on_local`` dispatch through it (compiled per class, so a subclass's handler override runs);
docs/protocols.md is rendered from it, and tests/test_state_tables.py holds every run's steps to it.

Impossible input — one policy for every protocol. An input that the current state does not accept (a table
cell "error" or "(never)", or a message class the protocol does not know) raises ``ProtocolError``, whose
message names the process, its state and the input. It is raised before the input changes anything but, at
most, the Lamport clock. Inputs that *can* arrive, though they change nothing (a stale INQUIRE, a message
to a process that is gone), are not errors: the table says "ignore" and why. The drivers report a
``ProtocolError``, never swallow it: the simulator stops the run with it (``simulate`` prints it and exits
1, the explorer records the path as an error, a scripted replay names the step); a RabbitMQ participant
logs it and dead-letters the message with the error as reason (a peer sent what this state cannot take),
or, for a local input, logs it and exits with an error.

A handler that raises anything else (a ``KeyError`` in the algorithm's code) is the algorithm's bug, and a
finding like a refusal: the dispatch (``on_message``, ``on_local``, and a ``start`` or dispatch written by
hand) turns it into ``HandlerError``, a ``ProtocolError`` naming the process, the input, the state it was
taken in, the exception and the line of the algorithm's own file (``handler_raised``), so every driver
reports it where it reports a refusal, with its scenario. What mutexlab raises outside a handler stays
mutexlab's bug (the CLI's exit 4)."""

from __future__ import annotations

import os
import re
import sysconfig
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any, ClassVar

from . import fastpath
from .clock import LamportClock
from .machine import Handler, Table
from .show import state_text, unnamed
from .slots import fork_value, slot_values

if TYPE_CHECKING:
    from .messages import Message


class ProtocolError(Exception):
    """An input the protocol does not accept in its current state (e.g. exit while not inside);
    the message names the process, its state and the input."""


class HandlerError(ProtocolError):
    """A handler of the protocol raised (a ``KeyError`` in the algorithm's code): a finding about
    the algorithm, like a refused input, never a crash of mutexlab. Made only by
    ``handler_raised``; the message names the process, the input, the state it was taken in, the
    exception and the line of the algorithm's file that raised it."""

    scenario = ""  # how a driver reached it, when the driver says (the simulator: its seed and event)

    def __init__(self, process: str, state: str, taking: str, error: str, where: str) -> None:
        self.process, self.state, self.taking, self.error, self.where = process, state, taking, error, where
        super().__init__(f"{process} raised {error} at {where}, taking {taking} in state {state}")

    def finding(self) -> str:
        """The message, and the scenario that reaches it when known."""
        return str(self) + (f"; reached with {self.scenario}" if self.scenario else "")

    def as_dict(self) -> dict[str, str]:
        """The finding's parts, for a JSON summary."""
        parts = {"process": self.process, "input": self.taking, "state": self.state, "error": self.error}
        return {"finding": "handler-raised", **parts, "where": self.where, "scenario": self.scenario}

    def __reduce__(self) -> tuple[Any, ...]:  # pickled (to another process), it keeps its fields
        return (HandlerError, (self.process, self.state, self.taking, self.error, self.where))


class _EffectError(HandlerError):
    """A finding about an effect a handler returned, made from ``_parts`` (its constructor's
    arguments): pickled, it is made again from them."""

    _parts: tuple[Any, ...]

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), self._parts)


class UnknownPeer(_EffectError):
    """A handler returned a ``Send`` to a process the setup does not have: the algorithm's bug,
    a finding like a handler that raised, whatever the step (a driver finds it when it carries
    out the effect, after the handler returned)."""

    def __init__(self, process: str, state: str, kind: str, to: Any, known: str) -> None:
        self._parts = (process, state, kind, to, known)
        ProtocolError.__init__(
            self,
            f"{process} sent {kind} to process {to!r}, which is not one of this setup's ({known}), "
            f"its step leaving it in state {state}",
        )
        self.process, self.state, self.taking = process, state, f"its step (a {kind} it sent)"
        self.error, self.where = f"a {kind} to unknown process {to!r}", "an effect it returned"


class UnknownMessage(_EffectError):
    """A handler sent a message whose type its codec does not have (a class left out of
    ``classic_algorithm(...)`` or ``Codec(...)``): no receiver over the wire could decode it."""

    def __init__(self, process: str, state: str, kind: str, known: str) -> None:
        self._parts = (process, state, kind, known)
        ProtocolError.__init__(
            self,
            f"{process} sent {kind}, which is not one of the algorithm's message types ({known}): "
            f"add its class to the codec (the messages its SPEC lists), its step leaving it in state {state}",
        )
        self.process, self.state, self.taking = process, state, f"its step (a {kind} it sent)"
        self.error, self.where = f"a message of unknown type {kind!r}", "an effect it returned"


class Undecodable(_EffectError):
    """A handler sent a message whose own JSON does not decode as its type (NaN, written as null; a
    value its model refuses on the way in): a receiver would refuse it, a finding on the sender."""

    def __init__(self, process: str, state: str, kind: str, why: str) -> None:
        self._parts = (process, state, kind, why)
        ProtocolError.__init__(
            self,
            f"{process} sent {kind}, which does not decode from its own JSON ({why}): a receiver "
            f"over the wire would refuse it, its step leaving it in state {state}",
        )
        self.process, self.state, self.taking = process, state, f"its step (a {kind} it sent)"
        self.error, self.where = f"a {kind} that does not decode: {why}", "an effect it returned"


class NotAnEffect(_EffectError):
    """A handler returned, among its effects, something that is none (a ``(to, msg)`` tuple, a
    message without its ``Send``): the algorithm's bug, a finding found when the effects are
    carried out."""

    def __init__(self, process: str, state: str, effect: Any) -> None:
        self._parts = (process, state, effect)
        try:
            shown = repr(effect)
        except Exception:  # noqa: BLE001 - named by its type
            shown = type(effect).__name__
        shown = shown if len(shown) <= 200 else shown[:200] + "…"
        ProtocolError.__init__(
            self,
            f"{process} returned {shown} among its effects, which is not an effect "
            f"(Send, Enter, Exit, Note, Schedule), its step leaving it in state {state}",
        )
        self.process, self.state, self.taking = process, state, "its step (an effect it returned)"
        self.error, self.where = f"TypeError: {shown} is not an effect", "an effect it returned"


@fastpath.slot_init
@dataclass(frozen=True, slots=True)
class Send:
    """Send ``msg`` to participant ``to``. A send to oneself is handled at once, locally."""

    to: int
    msg: Message


@dataclass(frozen=True, slots=True)
class Enter:
    """The process has entered ``resource`` holding ``units`` of it."""

    resource: str
    units: int = 1


@dataclass(frozen=True, slots=True)
class Exit:
    """The process has left ``resource``, giving back ``units``."""

    resource: str
    units: int = 1


@dataclass(frozen=True, slots=True)
class Note:
    """A scenario event for the trace (a problem's own: ``request``, ``round`` ...)."""

    event: str
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Schedule:
    """Ask the driver to call ``on_local(action)`` after a dwell of kind ``dwell``.

    ``dwell`` names a duration class (``"rest"``, ``"flower"``, ``"cs"`` ...) whose length the
    driver chooses: random virtual time in the simulator, configured seconds over RabbitMQ.
    """

    action: str
    dwell: str


Effect = Send | Enter | Exit | Note | Schedule


class Protocol:
    """Base class: one participant of one algorithm. A subclass declares its transition table
    as data, ``TABLE``, and ``on_message``/``on_local`` dispatch through it (never by ``match``).

    Subclasses set ``pid`` (int, numbered from 1; a coordinator may be 0), ``clock`` and ``state``.
    """

    # ``_named``: its setup's name for it (``give_name``), per instance, so two setups of one class
    # in one process each name their own; a slot: no snapshot, card or shared-state check sees it.
    __slots__ = ("__dict__", "_named")
    pid: int
    clock: LamportClock
    state: StrEnum
    final_states: ClassVar[frozenset[StrEnum]] = frozenset()  # where ``finished`` holds, by default
    # Attributes that are fixed configuration, not state: the explorer shows them in the run's
    # header, not on every card.
    CONFIG_FIELDS: ClassVar[frozenset[str]] = frozenset()
    # The transition table (machine.py), the dispatch of on_message and on_local; compiled per
    # class into ``_transitions`` so that a subclass's handler overrides run.
    TABLE: ClassVar[Table | None] = None
    _transitions: ClassVar[dict[tuple[str, str], Handler]] = {}
    _compiled_from: ClassVar[tuple[Any, ...] | None] = None  # the TABLE shape compiled

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for method in _GUARDED:  # one written by hand, not the table's dispatch: guarded alike
            fn = cls.__dict__.get(method)
            if (
                callable(fn)
                and not getattr(fn, "guarded", False)
                and not getattr(fn, "table_dispatch", False)
            ):
                setattr(cls, method, _guard(fn, method))
        cls.compile_table()

    @classmethod
    def compile_table(cls) -> None:
        """Compile ``TABLE`` into the dispatch when the class is made, and again when its setup is
        built (``setups.missing_parts``) if it changed since: set by a base's ``__init_subclass__``
        after ``super().__init_subclass__()``, or its rows filled in place after the class."""
        table = cls.TABLE
        if table is not None and cls.__dict__.get("_compiled_from") != (shape := table.shape()):
            table.__post_init__()  # (its rows may have been filled in place: checked, listed again)
            cls._transitions = table.compile(cls)
            cls._compiled_from = shape
            fastpath.bind_table_dispatch(cls, Protocol.on_message)

    @property
    def name(self) -> str:
        """The process's name in traces and errors (``node-3``, ``<process>-2``, a role ...): by
        default the name its setup gives it (``named``), else ``process <pid>``."""
        return getattr(self, "_named", None) or f"process {self.pid}"

    def give_name(self, name: str) -> None:
        """Name it as its setup does (``node-1``), for a class that says no ``name`` of its own."""
        self._named = name

    def refuse(self, what: Any, why: str = "") -> ProtocolError:
        """The error for an input this state does not accept: ``what`` is a message (named by its
        type) or a local action. ``raise self.refuse(msg)``."""
        what, why = getattr(what, "type", what), f": {why}" if why else ""
        return ProtocolError(f"{self.name} cannot take {what} in state {state_text(self.state)}{why}")

    def start(self) -> list[Effect]:
        return []

    def on_message(self, msg: Message) -> list[Effect]:
        """The table's handler for (state, ``msg.type``); refused when the table has none."""
        state = self.state
        fn = self._transitions.get((state, msg.type))
        if fn is None:
            raise self.refuse(msg)
        try:
            effects: Any = fn(self, msg)
        except ProtocolError:
            raise
        except (Exception, SystemExit, GeneratorExit) as exc:  # the algorithm's bug (sys.exit too): a finding
            raise handler_raised(self, state, msg, exc) from exc
        if type(effects) is not list and type(effects) is not tuple:
            raise wrong_return(self, state, msg, fn, effects)
        if self.state is not state and unnamed(self.state):  # a plain Enum member: exit 2
            raise no_name(self, state, msg, fn)
        return effects  # type: ignore[return-value]  # a list, or a tuple the drivers read alike

    def on_local(self, action: str) -> list[Effect]:
        """The table's handler for (state, ``action``); refused when the table has none."""
        state = self.state
        fn = self._transitions.get((state, action))
        if fn is None:
            raise self.refuse_local(action)
        try:
            effects: Any = fn(self, action)
        except ProtocolError:
            raise
        except (Exception, SystemExit, GeneratorExit) as exc:  # the algorithm's bug (sys.exit too): a finding
            raise handler_raised(self, state, action, exc) from exc
        if type(effects) is not list and type(effects) is not tuple:
            raise wrong_return(self, state, action, fn, effects)
        if self.state is not state and unnamed(self.state):
            raise no_name(self, state, action, fn)
        return effects  # type: ignore[return-value]  # a list, or a tuple the drivers read alike

    def refuse_local(self, action: str) -> ProtocolError:
        """The error for a local action the table refuses in this state."""
        return self.refuse(f"local action {action!r}")

    @property
    def finished(self) -> bool:
        """True when this participant is in a proper final state (nothing more to do): by default,
        one of ``final_states``."""
        return self.state in self.final_states

    def card(self) -> list[tuple[str, str]]:
        """The explorer card's rows, (label, text) in the order of the state table (show.py renders
        values). Every attribute the card does not read is shown below it anyway; the default
        card is empty, so a new protocol's card lists its attributes."""
        return []

    def waiting_for(self) -> dict[str, list[int]]:
        """What this process waits for and from whom, e.g. ``{"ACKflower": [2, 5]}``.

        Empty when it waits for nothing. Used by stall diagnosis.
        """
        return {}

    def stall_hint(self) -> str | None:
        """Why this process may be stuck that ``waiting_for`` cannot say (a hosted program's output
        no input asked for, say), for the stall report; None: nothing to add."""
        return None

    def wants(self) -> str | None:
        """The kind of resource this process has asked for and waits to enter (``cs``;
        ``slot`` for any ``slot:i``), or None. ``check --metrics`` reads it where a protocol does
        not note its requests (``Note("request")``): a request opens when it turns to a kind and
        is served by the next entry of that kind (given up when it turns away without one). It
        must depend only on ``snapshot()`` (and on the canonical key, when one is declared)."""
        return None

    def snapshot(self) -> Any:
        """A hashable summary of the full state, for exhaustive exploration."""
        raise NotImplementedError

    def __deepcopy__(self, memo: dict[int, Any]) -> Protocol:
        """An independent copy of the state (the explorer forks worlds with it), faster than the
        generic deepcopy: plain containers copied structurally, immutable values shared."""
        clone = object.__new__(type(self))
        memo[id(self)] = clone  # an attribute holding the process itself (a bound method) holds the clone
        try:  # a generator, a lock, a file cannot be copied: the algorithm's state, named (setups.py)
            clone.__dict__.update({name: fork_value(value, memo) for name, value in self.__dict__.items()})
            for name, value in slot_values(self):  # a subclass's __slots__ (slots.py)
                setattr(clone, name, fork_value(value, memo))
        except TypeError as exc:
            from .setups import uncopyable

            raise uncopyable(self, exc) from exc
        if hasattr(self, "_named"):
            clone._named = self._named
        return clone


# -- a handler that raises ------------------------------------------------------------------
# Every input reaches a protocol's code through ``on_message``/``on_local`` (the table's dispatch,
# here and in fastpath.py) or ``start``; each catches what the code it calls raises, other than a
# ProtocolError, and hands it to ``handler_raised``: the one place an exception of the algorithm
# becomes a finding. What mutexlab raises outside those calls stays a bug of mutexlab (exit 4).
_GUARDED = ("start", "on_message", "on_local")
MESSAGE_SHOWN = 700  # characters of an exception's message a finding quotes: a node's advice fits
_MINE = os.path.dirname(os.path.abspath(__file__)) + os.sep  # mutexlab's own files
_PROTOCOLS = os.path.join(_MINE, "protocols") + os.sep  # the built-in algorithms
_LIBRARIES = tuple(
    os.path.abspath(path) + os.sep
    for path in {sysconfig.get_paths()[key] for key in ("stdlib", "platstdlib", "purelib", "platlib")}
)


def handler_raised(proto: Protocol, state: Any, taking: Any, exc: BaseException) -> HandlerError:
    """The finding for ``exc``, raised by ``proto``'s code while it took ``taking`` (a message,
    a local action, or ``"start"``) in ``state``: the process, the input, the state, the exception
    and the innermost line of the algorithm's own file (not mutexlab's, not a library's)."""
    what = taking_text(taking)
    try:
        text = str(exc)
    except Exception:  # noqa: BLE001 - an exception whose own __str__ fails: named by its type
        text = "(its message cannot be shown)"
    text = text if len(text) <= MESSAGE_SHOWN else text[:MESSAGE_SHOWN] + "…"
    error = type(exc).__name__ + (f": {text}" if text else "")
    return HandlerError(proto.name, state_text(state), what, error, raised_at(exc))


def taking_text(taking: Any) -> str:
    """An input as a finding names it: ``REQ from process 2``, ``the local action 'exit'``."""
    if getattr(taking, "type", None) is not None:
        return f"{taking.type} from process {getattr(taking, 'sender', '?')}"
    return "its start" if taking == "start" else f"the local action {taking!r}"


EFFECTS_SHOWN = 200  # characters of a wrong return value a finding quotes


def wrong_return(proto: Protocol, state: Any, taking: Any, fn: Any, effects: Any) -> HandlerError:
    """The finding for a handler ``fn`` of ``proto`` that returned ``effects``, which is no list of
    effects (None, a bare ``Send``, a generator): named by the handler's own first line."""
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    where = (
        f"{os.path.abspath(code.co_filename)}:{code.co_firstlineno} (in {code.co_name})"
        if code is not None
        else "an unknown line"
    )
    try:
        shown = repr(effects)
    except Exception:  # noqa: BLE001 - a value whose own __repr__ fails: named by its type
        shown = type(effects).__name__
    shown = re.sub(r" at 0x[0-9a-fA-F]+", "", shown)  # a generator's address: not the same twice
    shown = shown if len(shown) <= EFFECTS_SHOWN else shown[:EFFECTS_SHOWN] + "…"
    error = (
        f"TypeError: the handler returned {shown}, not a list of effects (Send, Enter, Exit, Note, Schedule)"
    )
    return HandlerError(proto.name, state_text(state), taking_text(taking), error, where)


def no_name(proto: Protocol, state: Any, taking: Any, fn: Any) -> Exception:
    """``setups.unnamed_state``: a handler left ``proto`` in a state of a plain ``Enum`` (exit 2)."""
    from .setups import unnamed_state

    return unnamed_state(proto, state, taking, fn)


def hook_effects(proto: Protocol, hook: str, taking: Any) -> list[Effect] | tuple[Effect, ...]:
    """The effects of ``proto``'s hook ``hook`` (a base's ``_request()``, ``_hungry()`` ...), called
    while taking ``taking``; a value that is no list of effects is a finding naming the hook."""
    state = proto.state
    effects = getattr(proto, hook)()
    if type(effects) is list or type(effects) is tuple:
        return effects
    raise wrong_return(proto, state, taking, getattr(type(proto), hook), effects)


def raised_at(exc: BaseException) -> str:
    """``file:line (in function)`` of the innermost frame in the algorithm's file: outside
    mutexlab and the libraries, else in a built-in algorithm, else the innermost of all; or where
    the exception says it happened (``raised_where``: a hosted program's fault)."""
    named = getattr(exc, "raised_where", None)
    if isinstance(named, str):
        return named
    lines: list[tuple[str, int, str]] = []
    tb = exc.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        file = code.co_filename if code.co_filename.startswith("<") else os.path.abspath(code.co_filename)
        lines.append((file, tb.tb_lineno, code.co_name))
        tb = tb.tb_next
    for found in (
        [line for line in lines if not line[0].startswith((_MINE, *_LIBRARIES))],
        [line for line in lines if line[0].startswith(_PROTOCOLS)],
        lines,
    ):
        if found:
            file, number, function = found[-1]
            return f"{file}:{number} (in {function})"
    return "an unknown line"


def _guard(fn: Callable[..., list[Effect]], method: str) -> Callable[..., list[Effect]]:
    """``fn`` (a protocol's own ``start``, ``on_message`` or ``on_local``) with what it raises made
    a finding, as the table's dispatch does."""

    def guarded(self: Protocol, *args: Any) -> list[Effect]:
        state = getattr(self, "state", "(none set)")
        try:
            effects: Any = fn(self, *args)
        except ProtocolError:
            raise
        except (Exception, SystemExit, GeneratorExit) as exc:  # the algorithm's bug (sys.exit too): a finding
            raise handler_raised(self, state, args[0] if args else method, exc) from exc
        if type(effects) is not list and type(effects) is not tuple:
            raise wrong_return(self, state, args[0] if args else method, fn, effects)
        if getattr(self, "state", state) is not state and unnamed(self.state):
            raise no_name(self, state, args[0] if args else method, fn)
        return effects  # type: ignore[return-value]  # a list, or a tuple the drivers read alike

    guarded.guarded = True  # type: ignore[attr-defined]
    guarded.__name__, guarded.__qualname__, guarded.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    guarded.__wrapped__ = fn  # type: ignore[attr-defined]
    return guarded
