"""Whether a step is a function of its process's state alone.

``mutexlab check`` takes its first inputs again on copies (sim/world.py, ``random`` seeded as
here) and calls a process that does differently not deterministic (a handler reading random numbers, the time or
anything outside its process). ``replay`` and ``explore`` take each step (the first
``PROBED_STEPS``) again on copies of the process as it was before it (``twins``, then
``differs`` once the step itself was played), so the counterexample of such a finding stops at
the step where ``check`` found it, with the same sentence, instead of running past it.
"""

from __future__ import annotations

import copy
import dis
import random
from collections.abc import Callable
from types import ModuleType
from typing import Any

from ..protocol import Send
from ..setups import module_random
from ..slots import attributes as attributes_of

# Copies a step is taken on besides the first, each with the module ``random`` seeded by its
# number (then given back its state): a handler drawing from it is told apart the same way on
# every replay, not by chance; one choosing between two answers agrees on every copy once in 2**TRIES.
TRIES = 4
# The steps of a replay or an explorer session taken again, from its first: a counterexample of
# check reaches its finding within its first few hundred inputs; past them a step costs what it did.
PROBED_STEPS = 1000
MAX_EFFECTS = 100_000  # what one step may do, its sends to itself included, before it is cut short


def seeded(seed: int | None, run: Callable[..., Any], *args: Any) -> Any:
    """``run(*args)`` with the module ``random`` seeded ``seed`` (None: as it is), its state given
    back after: check's probes draw as replay's copies do, so both stop at the same step."""
    with module_random(seed):
        return run(*args)


def not_deterministic(who: str, state: Any, what: str, proto: Any = None) -> str:
    """The finding's sentence (``what``: "state" or "effects"), the same in every command; naming
    ``proto``'s attributes that hold a closure, which every copy of the process shares."""
    shared = closures(proto) if proto is not None else []
    return (
        f"{who} is not deterministic: one input, taken twice from one state ({state}), gave different "
        f"{what}: a handler reading random numbers, the time or anything outside its process"
        + (
            f" (its attribute{'s' * (len(shared) > 1)} {', '.join(shared)} hold{'s' * (len(shared) == 1)} "
            f"a function keeping variables of its own, a closure every copy of the process shares: keep "
            "them in attributes)"
            if shared
            else ""
        )
    )


def closures(proto: Any) -> list[str]:
    """The attributes of ``proto`` holding a function (or a method) with variables of its own:
    ``copy.deepcopy`` hands every copy that one function, so what it counts is no process's. Those
    that may keep something — a variable they assign (``nonlocal``), or one holding anything but a
    plain value — come first and alone; a closure over a pid or a name only is named when no other is.
    One level down too: a function an attribute's own object (``keeper.want_reed``, what a factory
    of closures returns) or its dict, list or tuple (``handlers['WANT']``) holds."""
    held: dict[str, Any] = {}
    for name, value in attributes_of(proto).items():
        for label, inner in [(name, value), *_inside(name, value)]:
            if getattr(function := getattr(inner, "__func__", inner), "__closure__", None):
                held.setdefault(label, function)
    return sorted(name for name, function in held.items() if _keeps(function)) or sorted(held)


INSIDE = 100  # what of one attribute's object or container is looked into for closures


def _inside(name: str, value: Any) -> list[tuple[str, Any]]:
    """(label, value) of what ``value``, a process's attribute ``name``, holds one level down: a
    dict's values, a list's or tuple's items, an object's attributes (none of a class, a module or
    a function)."""
    if isinstance(value, dict):
        return [(f"{name}[{k!r}]", v) for k, v in list(value.items())[:INSIDE]]
    if isinstance(value, (list, tuple)):
        return [(f"{name}[{i}]", v) for i, v in enumerate(value[:INSIDE])]
    if isinstance(value, (type, ModuleType)) or callable(value):
        return []
    try:
        held = attributes_of(value)
    except Exception:  # noqa: BLE001 - an object whose attributes cannot be listed: none looked into
        return []
    return [(f"{name}.{attr}", v) for attr, v in list(held.items())[:INSIDE]]


# What a closure may hold and share unseen with no harm: values nobody can change.
_PLAIN = (int, float, complex, str, bytes, bool, type(None), range, type)


def _keeps(function: Any) -> bool:
    """Whether ``function`` assigns a variable it closes over, or closes over anything but a plain
    value (a list, a dict, an object of its own): what every copy of the process would share."""
    code = function.__code__
    if any(i.opname == "STORE_DEREF" and i.argval in code.co_freevars for i in dis.get_instructions(code)):
        return True
    for cell in function.__closure__:
        try:
            value = cell.cell_contents
        except ValueError:  # not yet assigned
            continue
        if not isinstance(value, _PLAIN) and not callable(value):
            return True
    return False


def twins(proto: Any) -> Any | None:
    """A copy of ``proto`` as it is now, to take its next step again on; None if it cannot be copied."""
    try:
        return copy.deepcopy(proto)
    except Exception:  # noqa: BLE001 - a state deepcopy cannot copy: nothing to compare, no finding
        return None


def _outcome(proto: Any, call: Callable[[Any], Any], by_value: bool = True) -> tuple[Any, Any]:
    """What ``call`` does to ``proto``: (its effects or the error it raised, its state after by
    value — None when ``snapshot()`` fails, or tells a copy of the state from the state itself, as
    an object kept by identity does: then only the effects are compared, as check does).
    ``by_value=False`` skips that last test: the first copy already passed it (the state's kind,
    not the input, decides whether a copy's snapshot equals the original's)."""
    try:
        done: Any = _expand(proto, call(proto))
    except Exception as exc:  # noqa: BLE001 - a raise is an outcome like any other
        done = (type(exc),)  # by its type: a message may name an address
    try:
        after = proto.snapshot()
        if by_value and copy.deepcopy(proto).snapshot() != after:
            after = None
    except Exception:  # noqa: BLE001 - a state check cannot keep: compared by effects alone
        after = None
    return done, after


def _expand(proto: Any, effects: Any) -> list:
    """``effects`` with each send to ``proto`` itself replaced by what handling it did, as every
    driver hands such a send back at once (sim/driver.py)."""
    out: list = []
    todo = list(effects)[::-1]
    while todo and len(out) < MAX_EFFECTS:
        effect = todo.pop()
        if type(effect) is Send and effect.to == proto.pid:
            todo += list(proto.on_message(effect.msg))[::-1]
        out.append(effect)
    return out


def differs(who: str, before: Any, call: Callable[[Any], Any], tries: int = TRIES) -> str | None:
    """Why taking ``call`` from ``before`` (a ``twins`` copy) is no function of that state — it
    ended elsewhere, or did other effects, on another copy — or None."""
    kept = random.getstate()  # each copy draws from the module's generator seeded anew
    try:
        random.seed(0)
        first = _outcome(copy.deepcopy(before), call)
        for seed in range(1, tries + 1):
            random.seed(seed)
            again = _outcome(copy.deepcopy(before), call, by_value=False)
            if again[0] != first[0]:
                return not_deterministic(who, before.state, "effects", before)
            if again[1] != first[1] and first[1] is not None and again[1] is not None:
                return not_deterministic(who, before.state, "state", before)
        return None
    finally:
        random.setstate(kept)
