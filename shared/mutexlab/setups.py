"""What a run is made of: the participants of one algorithm and what the audit must know.

Every algorithm module offers ``make_setup(processes, options, seed) -> Setup``; the simulator,
the scripted replayer and the RabbitMQ services all start from a ``Setup``.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import sys
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from pydantic import BaseModel

from . import beside as _beside
from .beside import LATE, beside, defining_module
from .clock import LamportClock
from .messages import Codec
from .protocol import HandlerError, Protocol, ProtocolError, raised_at, taking_text
from .show import state_text, unnamed
from .slots import attributes, slot_names
from .words import closest


class ConfigError(ValueError):
    """A configuration that is malformed or can never work; the message names the problem."""


class NoName(ConfigError):
    """A handler left its process in a state of no name (``unnamed_state``): refused. ``check``
    takes the step as a dead end and searches on (``check/model.py``); elsewhere, exit 2."""


@dataclass
class Setup:
    algorithm: str
    protocols: Mapping[int, Protocol]  # read-only: each algorithm's own node class
    names: dict[int, str]
    codec: Codec
    # Capacity per resource: an exact name ("cs") or a prefix pattern ("slot:*").
    capacities: dict[str, int]
    params: dict[str, Any] = field(default_factory=dict)
    # The problem the header names beside the algorithm (None: none, as every built-in solution's
    # header): a program's run, whose algorithm no other process knows (director/solution.py).
    problem: str | None = None
    # The network may deliver a message more than once (a scenario's ``duplicate`` steps): the
    # header says so, and the audit takes a second receive of a message as a delivery, not a forgery.
    duplicates: bool = False

    def run_event(self) -> dict[str, Any]:
        """The first line of every trace of this setup."""
        return {
            "event": "run",
            "pid": "run",
            "algorithm": self.algorithm,
            "processes": {str(p): n for p, n in sorted(self.names.items())},
            "capacities": self.capacities,
            "params": self.params,
            **({"problem": self.problem} if self.problem is not None else {}),
            **({"duplicates": True} if self.duplicates else {}),
        }


def capacity_of(capacities: dict[str, int], resource: str) -> int:
    """Capacity of ``resource`` under exact names, ``prefix:*`` patterns or ``*`` (any other
    resource: what a log without a header declares); 1 when unlisted."""
    if resource in capacities:
        return capacities[resource]
    head = resource.split(":", 1)[0]
    return capacities.get(head + ":*", capacities.get("*", 1))


def declares(capacities: dict[str, int], resource: str) -> bool:
    """Whether ``capacities`` names ``resource``: exactly, by its ``prefix:*`` pattern, or by ``*``."""
    return resource in capacities or resource.split(":", 1)[0] + ":*" in capacities or "*" in capacities


def positive_int(options: dict[str, Any], key: str, default: int | None = None, minimum: int = 1) -> int:
    """Read an integer option, refusing anything else with a message naming it."""
    value = options.get(key, default)
    if value is None:
        raise ConfigError(f"option {key!r} is required")
    if isinstance(value, bool) or not isinstance(value, int):
        # shown as given (-o KEY=JSON): true and "2", not Python's True and '2'
        raise ConfigError(f"option {key!r} must be a whole number, got {json.dumps(value, default=repr)}")
    if value < minimum:
        raise ConfigError(f"option {key!r} must be at least {minimum}, got {value}")
    return value


def refuse_options(algorithm: str, unknown: Iterable[str], taken: Iterable[str]) -> None:
    """ConfigError for the ``unknown`` option keys (none: nothing), naming the options ``taken``
    and, for a key close to one of them (``meal``), that one: a misspelt ``-o`` says so."""
    wrong, known = sorted(unknown), sorted(taken)
    if not wrong:
        return
    raise ConfigError(
        f"{algorithm} does not take option(s) {', '.join(wrong)} (it takes: {', '.join(known) or 'none'})"
        + closest(wrong, known)
    )


# What one process must not hold in common with another: the mutable built-in containers and a
# Lamport clock (a frozen message, a tuple or a frozenset may be shared: nobody can change it).
MUTABLE = (list, dict, set, bytearray, deque, LamportClock)


def _writable_object(value: Any, module: str) -> bool:
    """Is ``value`` an object of a class of the solution's own file (``module``: its protocol's)
    whose attributes a handler may set (a plain object, a dataclass that is not frozen)? Shared,
    one process's change is another's in one OS process (the simulator) and not in another
    (``check``, RabbitMQ). Objects of other modules' classes (a logger, a namespace of settings,
    mutexlab's own) are taken as shared read-only."""
    if isinstance(value, (type, Enum, LamportClock)) or callable(value):
        return False
    if not hasattr(value, "__dict__") and not slot_names(type(value)):  # slots: a dataclass(slots=True)
        return False
    if type(value).__module__ != module:
        return False
    params = getattr(type(value), "__dataclass_params__", None)
    return not (params is not None and params.frozen)


def shared_state(setup: Setup) -> str | None:
    """Why ``setup``'s processes are not separate (two hold one mutable object among their
    attributes: a mutable default argument, one dict passed to every process), or None. Each is
    its own OS process over RabbitMQ, and ``check`` keeps each one's state apart: shared, the
    simulator would run one program and ``check`` verify another."""
    owner: dict[int, tuple[str, str]] = {}  # id of a mutable attribute value → (process, attribute)
    for pid, proto in setup.protocols.items():
        for attribute, value in attributes(proto).items():  # its __slots__ too
            # an iterator (an itertools.count, a generator) moves on for every process that holds
            # it; a file (sys.stderr) is an iterator too, but each process has its own
            moves_on = isinstance(value, Iterator) and not isinstance(value, io.IOBase)
            if (
                not isinstance(value, MUTABLE)
                and not moves_on
                and not _writable_object(value, type(proto).__module__)
            ):
                continue
            first = owner.setdefault(id(value), (setup.names.get(pid, str(pid)), attribute))
            if first[0] != setup.names.get(pid, str(pid)):
                return (
                    f"{first[0]}.{first[1]} and {setup.names.get(pid, str(pid))}.{attribute} are one "
                    f"{type(value).__name__}: processes share no state (each is a process of its own over "
                    "RabbitMQ, and check keeps each one's state apart); give each its own (a mutable "
                    "default argument, `queue={}`, is one object for all), or share read-only data as a "
                    "tuple, a frozenset, a types.MappingProxyType or a frozen dataclass"
                )
    return None


def missing_parts(setup: Setup) -> str | None:
    """Why a process of ``setup`` lacks what every command reads of it (``Protocol``'s contract:
    ``pid``, ``clock`` a LamportClock, ``state``), or None. ``check`` reads only the snapshot, so
    without this a solution passed there and failed inside ``simulate`` and ``run``."""
    for pid, proto in setup.protocols.items():
        cls = type(proto)
        if isinstance(proto, Protocol):  # a TABLE set after the class was made: compiled now
            cls.compile_table()
        where = f"{cls.__qualname__} ({getattr(sys.modules.get(cls.__module__), '__file__', cls.__module__)})"
        name = setup.names.get(pid, str(pid))
        if not isinstance(getattr(getattr(proto, "clock", None), "time", None), int):
            return (
                f"{name}, a {where}, has no `clock` (a mutexlab.clock.LamportClock): every process sets "
                "`pid`, `clock` and `state`; the traces stamp each event with the clock's time"
            )
        if not hasattr(proto, "state") or not isinstance(getattr(proto, "pid", None), int):
            return f"{name}, a {where}, does not set `pid` (an int) and `state`: every process sets both"
        if unnamed(proto.state):
            return f"{name}, a {where}, starts in state {_no_name(proto.state)}"
    return None


def _no_name(state: Enum | float) -> str:
    """Why the state ``state``, a member of a plain ``Enum`` or a plain number (``int``, ``bool``,
    ``float``), is refused, and what to write."""
    if not isinstance(state, Enum):
        return (
            f"{state!r}, a plain {type(state).__name__}: the traces, the audit and the problem's rules read a state by "
            f'its name, and a number is no name; make the states strings (`ST_DEAD = "DEAD"`) or '
            f"a `StrEnum`, each value its state's name"
        )
    kind = type(state).__qualname__
    return (
        f"{kind}.{state.name}, a member of {kind}, an enum.Enum whose "
        f"members are not strings: the traces, the audit and the problem's rules read a state "
        f"by its name ({state.name!r}), and a plain Enum member is no name; make it "
        f"`class {kind}(StrEnum)` (or `class {kind}(str, Enum)`), each value its state's name"
    )


# What the refusal of a state of no name says (``unnamed_state``): a participant over RabbitMQ reports
# it as its rejected input's reason, and the run ends on it as the other commands do (exit 2, outcome.py)
LEFT_UNNAMED = ", left it in state "


def unnamed_state(proto: Any, before: Any, taking: Any, fn: Any) -> NoName:
    """The error for ``proto``, whose handler ``fn`` (taking ``taking`` in state ``before``) left it
    in a state of a plain ``Enum`` (``show.unnamed``): refused as a starting state is (exit 2,
    never a verdict), naming the process, the handler and its line, and the input it took."""
    code = getattr(getattr(fn, "__wrapped__", fn), "__code__", None)
    where = f" ({os.path.abspath(code.co_filename)}:{code.co_firstlineno})" if code is not None else ""
    return NoName(
        f"{named_process(proto)}: its handler {getattr(fn, '__qualname__', fn)!s}{where}, taking {taking_text(taking)} in "
        f"state {state_text(before)}{LEFT_UNNAMED}{_no_name(proto.state)}"
    )


def class_state(setup: Setup) -> dict[str, tuple[Any, Any]]:
    """The mutable containers a solution's own classes hold as class attributes, that some process
    reads as its own (no instance attribute of that name), and what else of their modules every
    process reaches alike: a mutable global, one held by an object of the file's own class at the
    top of the file, a class attribute of another class of the file, a default argument of a
    function or method of the file, or a variable a function of the file closes over —
    qualified name (``Class.name``, or ``the global name of FILE``, ...) → (the value, a copy).
    Every process — and every world ``check`` keeps — shares such a value; only one a deep copy
    equals is kept (compared later by value)."""
    found: dict[str, tuple[Any, Any]] = {}
    late = _beside.Late()  # where a module a handler imports later is watched
    # a global iterator a process holds as its attribute is its own (shared_state refuses a second
    # holder): check steps a copy of it, as the process over RabbitMQ its own module's
    owned = {id(v) for proto in setup.protocols.values() for v in attributes(proto).values()}
    for proto in setup.protocols.values():
        for cls in type(proto).__mro__:
            if cls.__module__.startswith("mutexlab.") or cls is object:
                continue  # mutexlab's own classes keep nothing there
            for name, value in vars(cls).items():
                if name.startswith("__") or name == "_transitions" or not isinstance(value, MUTABLE):
                    continue  # (the table mutexlab compiles into the class)
                if name not in getattr(proto, "__dict__", {}):
                    _keep(found, cls, name, value, f"{cls.__qualname__}.{name}")
            module = defining_module(cls)  # (two files' own modules of one name: the one holding it)
            if module is not None:
                for mine in (module, *beside(module)):  # its file, and the modules beside it it imports
                    _watch(found, mine, owned)
                late.add(module)
    found[LATE] = (late, None)
    for mine in late.ran():  # those a handler of a run before imported, too
        _watch(found, mine, owned)
    return found


# A module a handler imported from its solution's folder: its globals kept as it ran, before the
# handler goes on (``_keep``'s first copies), so that what the handler changes in them is seen.
_beside.on_late_import = lambda module: _watch({}, module, set())


def _watch(found: dict[str, tuple[Any, Any]], module: Any, owned: set[int]) -> None:
    """``_module_state`` of ``module``, named by its file."""
    _module_state(found, module, getattr(module, "__file__", None) or module.__name__, owned)


def _keep(found: dict[str, tuple[Any, Any]], owner: Any, key: str, value: Any, label: str) -> None:
    """Keep ``value`` under ``label`` with its copy as first seen in this process (a run before, as
    check builds several, may have changed it), unless no deep copy of it equals it (no value to
    compare by: its objects are equal by identity, or it holds a module)."""
    first = _FIRST_SEEN.get((id(owner), key))
    if first is None or first[0] is not value:
        try:
            first = (value, copy.deepcopy(value))
            if bool(first[1] != value):  # numpy's arrays compare to an array: bool() raises
                return
        except Exception:  # noqa: BLE001 - no value to compare by (a module in it, an array)
            return
        _FIRST_SEEN[(id(owner), key)] = first
    found.setdefault(label, first)


def _module_state(found: dict[str, tuple[Any, Any]], module: Any, where: str, owned: set[int]) -> None:
    """What of ``module`` every process reaches alike (``class_state``): its mutable globals, and one
    level into its own functions (defaults, closures), classes (attributes, methods' defaults) and
    objects of its own classes (attributes)."""
    own = module.__name__
    for name, value in list(vars(module).items()):
        if name.startswith("__"):
            continue
        if isinstance(value, MUTABLE):
            _keep(found, module, name, value, f"{GLOBAL}{name} of {where}")
        elif isinstance(value, Iterator) and not isinstance(value, io.IOBase):  # a count, an iter()
            at = None if id(value) in owned else _Position.of(value)
            if at is not None:  # (a generator has no position to compare: never equal to itself)
                found.setdefault(f"{GLOBAL}{name} of {where}", (value, at))
        elif isinstance(value, type) and value.__module__ == own:
            plain = not issubclass(value, (Enum, BaseModel))  # (their machinery's own tables)
            for attr, held in list(vars(value).items()):
                if attr.startswith("__") or (attr.startswith("_") and attr.endswith("_")):
                    continue
                if plain and isinstance(held, MUTABLE) and attr != "_transitions":
                    _keep(found, value, attr, held, f"{value.__qualname__}.{attr}")
                else:
                    _function_state(found, getattr(held, "__func__", held), own, where)
        elif _writable_object(value, own):
            for attr, held in list(attributes(value).items()):
                if isinstance(held, MUTABLE):
                    _keep(found, value, attr, held, f"{GLOBAL}{name}'s attribute {attr} of {where}")
        else:
            _function_state(found, value, own, where)


class _Position:
    """Where a global iterator stood when first seen (``__reduce__``: ``count(5)``'s is 5, a list
    iterator's its list and index), equal to it while a handler has not advanced it. Used by one
    process alone, ``next()`` on it is still every world's ``check`` keeps, and every run's: the
    simulator's first run leaves the next one a count that does not start where the file does."""

    def __init__(self, reduced: Any) -> None:
        self.reduced = reduced

    @classmethod
    def of(cls, value: Any) -> _Position | None:
        try:
            return cls(copy.deepcopy(value.__reduce__()))
        except Exception:  # noqa: BLE001 - no position to compare by (a generator)
            return None

    def __eq__(self, other: object) -> bool:
        now = _Position.of(other)
        return now is not None and now.reduced == self.reduced

    __hash__ = None  # type: ignore[assignment]


def _function_state(found: dict[str, tuple[Any, Any]], fn: Any, own: str, where: str) -> None:
    """The mutable default arguments of a function of module ``own`` and the mutable values it
    closes over: one object for every call, hence every process's."""
    fn = getattr(fn, "__wrapped__", fn)  # functools.wraps: the function written in the file
    code = getattr(fn, "__code__", None)
    if code is None or getattr(fn, "__module__", None) != own:
        return
    names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    defaults = fn.__defaults__ or ()
    pairs = list(zip(names[code.co_argcount - len(defaults) : code.co_argcount], defaults, strict=True))
    pairs += list((fn.__kwdefaults__ or {}).items())
    for param, value in pairs:
        if isinstance(value, MUTABLE):
            _keep(
                found,
                fn,
                "default " + param,
                value,
                f"{SHARED}default argument {param} of {fn.__qualname__}() in {where}",
            )
    for var, cell in zip(code.co_freevars, fn.__closure__ or (), strict=True):
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, MUTABLE):
            _keep(
                found,
                fn,
                "cell " + var,
                value,
                f"{SHARED}variable {var} that {fn.__qualname__}() closes over, in {where},",
            )


GLOBAL = "the global "  # how ``class_state`` names a module's global (a class's attribute: Class.name)
SHARED = "the "  # a function's default argument or a variable it closes over


_FIRST_SEEN: dict[tuple[int, str], tuple[Any, Any]] = {}  # (class, attribute) → (value, its first copy)


class SharedState(HandlerError):
    """A handler changed a class attribute or a module's global (``class_state_changed`` says which):
    a finding."""

    def __init__(self, text: str) -> None:
        ProtocolError.__init__(self, text)
        self.process, self.state, self.taking = "every process", "any", "its run"
        self.error, self.where = text, "a class attribute"

    def __reduce__(self) -> tuple[Any, ...]:
        return (SharedState, (str(self),))


# Whether a changed value is only a memo (its value a function of its key, whoever asks) or a
# statistics counter cannot be told from its changes: a dict keyed by pid is a memo in form and
# shared state in fact. So every change is a finding, and the finding says how a memo is kept.
MEMO = (
    "Only a cache of a function of its arguments (the same arguments, the same value, in every "
    "process)? Decorate that function with functools.cache, which is not watched; a counter kept "
    "for statistics belongs in an attribute too"
)


def class_state_changed(kept: dict[str, tuple[Any, Any]]) -> str | None:
    """Which of ``class_state``'s values a handler changed (it is every process's at once), or None;
    a module a handler imported from its solution's folder since is watched too (``beside.Late``)."""
    late = kept.get(LATE, (None,))[0]
    for module in late.since() if isinstance(late, _beside.Late) else ():
        _watch(kept, module, set())
    for name, (value, before) in kept.items():
        if name == LATE or value == before:
            continue
        keep_it = "keep it in an attribute (self.… = … in __init__)"
        if isinstance(before, _Position):  # cannot be put back: kept[name] is where it stands now
            kept[name] = (value, _Position.of(value))
            what = f"is an iterator global to the module ({type(value).__name__}), and a handler advanced it"
            return (
                f"{name} {what}, even if one process alone calls next() on it: it is every run's and "
                "every world's check keeps (over RabbitMQ each process starts its own); "
                + keep_it
                + " (`self.numbers = itertools.count(1)`)"
            )
        _restore(value, before)  # the next run (check's counterexample, a replay) starts as the file did
        if name.startswith(GLOBAL):  # (before SHARED: "the global " begins with "the ")
            what = "is a mutable global of the module"
        elif name.startswith(SHARED):
            what = "is one object for every call"
        else:
            what = "is an attribute of the class"
            keep_it = "set it in __init__ (self." + name.rsplit(".", 1)[1] + " = ...)"
        return (
            f"{name} {what}, and a handler changed it: it is every process's at once (over RabbitMQ "
            f"each is a process of its own, and check keeps each one's state apart); {keep_it}. " + MEMO
        )
    return None


def named_process(proto: Any) -> str:
    """A process as the errors about its code name it: ``node-1 (MyNode, …/my_algo.py)``."""
    cls = type(proto)
    where = getattr(sys.modules.get(cls.__module__), "__file__", None) or cls.__module__
    return f"{getattr(proto, 'name', '?')} ({cls.__qualname__}, {where})"


def unkeepable(proto: Any, exc: BaseException) -> ConfigError:
    """The error for a process whose state cannot be kept: its ``snapshot()`` (or a canonical key)
    raised, or gave a value that cannot be hashed. The algorithm's code, not mutexlab's: named by
    the process, its class and file, and the exception — a state that cannot be kept cannot be
    checked (exit 2), never a verdict."""
    line = raised_at(exc)  # a line of mutexlab's (its default snapshot) says nothing of the algorithm
    line = "" if line.startswith(os.path.dirname(__file__)) else f" at {line}"
    return ConfigError(
        f"cannot keep the state of {named_process(proto)} to check it: "
        f"{type(exc).__name__}: {exc}{line}. Its snapshot() must return a hashable value "
        "that is equal exactly when the states are (tuples, frozensets, numbers, strings); the default "
        "one takes every attribute, and lists, sets, dicts and deques of such values"
    )


def uncopyable(proto: Any, exc: BaseException) -> ConfigError:
    """The error for a process ``copy.deepcopy`` cannot copy — a generator, a lock, a file in an
    attribute: ``check``, ``replay`` and ``explore`` take each step on a copy of the process, so its
    state must copy (exit 2, never a verdict). Named by the process, its class, file and attribute."""
    held = "?"
    for name, value in attributes(proto).items():
        try:
            copy.deepcopy(value)
        except Exception:  # noqa: BLE001 - the first that does not copy is named
            held = f"its attribute {name!r} holds a {type(value).__name__}"
            break
    return ConfigError(
        f"cannot copy the state of {named_process(proto)} to check it: {held}, which cannot be copied "
        f"({type(exc).__name__}: {exc}); check, replay and explore "
        "take each step on a copy of the process. Keep what it stands for in attributes (a count, an "
        "index; an iterator over a list or a range copies, a generator does not)"
    )


def _restore(value: Any, before: Any) -> None:
    """Put the shared ``value`` (one of ``MUTABLE``) back as its first copy ``before`` was."""
    if isinstance(value, LamportClock):
        value.time = before.time
    elif isinstance(value, (dict, set)):
        value.clear()
        value.update(copy.deepcopy(before))
    else:  # list, deque, bytearray
        value.clear()
        value.extend(copy.deepcopy(before))


@contextmanager
def module_random(seed: int | None) -> Iterator[None]:
    """The module ``random`` seeded ``seed`` (None: as it is) for what runs inside, its state given
    back after: a solution drawing from it — as its processes are made (``build_setup``), in a
    run's steps (``Simulation.run``), in ``check``'s probes (``sim/determinism.py``) — draws the
    same under one seed, whatever state the module was in, so the seed a run names reaches it again."""
    if seed is None:
        yield
        return
    outside = random.getstate()
    random.seed(seed)
    try:
        yield
    finally:
        random.setstate(outside)
