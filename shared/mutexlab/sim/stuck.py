"""Who waits, for which resource, held by whom: a world where nothing can move, in words.

``waiting_for()`` says what a process lacks and from whom (``REPLY from node-2``); this adds what
it waits to enter and who holds that now, where the protocol or the problem knows it:

* the resource kind ``wants()`` names (bees: ``reed``, ``flower``; elves: ``contract``, ``pins``,
  ``poison``), any resource of that kind (``reed:1``) counted;
* a dining philosopher's forks it does not hold (the problem says which are its own);
* otherwise the problem's one resource (``cs`` of mutex and k-mutex), when it has one.

``node-3 for cs: REPLY from node-2``; ``bee-2 (holding reed:2) for flower (held
by bee-1): ACKflower from bee-1``; without a resource known, as before: ``node-3 REPLY from node-2``. Used by ``check``'s deadlock finding and by the
exhaustive exploration of the tests (``sim/explore.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..problems.philosophers import fork
from ..protocol import Protocol
from ..setups import capacity_of
from ..waiting import UNKNOWN, WaitsRaised
from ..words import lacks


def _kind(resource: str) -> str:
    return resource.split(":", 1)[0]


def wanted(proto: Any, resources: list[str], held: list[str]) -> list[str]:
    """What ``proto`` waits to enter: resource names (``cs``, ``fork:2``) or kinds (``reed``);
    empty when neither it nor its problem says, or when its own ``wants()`` raises (the solution's
    code: the stall it helps explain is said all the same, never an internal error)."""
    sides = (getattr(proto, "left", None), getattr(proto, "right", None))
    if any(_kind(r) == _kind(fork(1)) for r in resources) and all(isinstance(f, int) for f in sides):
        return [fork(int(f)) for f in sides if f is not None and fork(f) not in held]  # its own forks
    if type(proto).wants is not Protocol.wants:
        try:
            kind = proto.wants()
        except (Exception, SystemExit):  # noqa: BLE001 - the algorithm's code
            return []
        return [] if kind is None else [kind]
    kinds = {_kind(r) for r in resources}
    return sorted(kinds) if len(kinds) == 1 else []


def told(proto: Any) -> list[str] | None:
    """What ``proto`` itself says it waits to enter, by its own ``wants()`` (a bee's ``reed``, an
    elf's ``pins``), for a participant's status: a monitor's copies of the protocols hold none of
    the participants' state, so only the participant can say it. None when its class does not say
    (its problem does, ``wanted``, for the monitor as for the simulator)."""
    return None if type(proto).wants is Protocol.wants else wanted(proto, [], [])


def said(
    capacities: Mapping[str, int],
    stuck: list[tuple[str, Any, dict[str, list[str]]]],
    holdings: Mapping[str, list[tuple[str, int]]],
) -> str:
    """``stuck``: every unfinished process as (name, protocol object, what it lacks from whom by
    name); ``holdings``: resource → its holders (name, units). In words, ``; `` between them."""
    held: dict[str, list[tuple[str, int]]] = {}
    for resource, holders in holdings.items():
        for name, units in holders:
            held.setdefault(name, []).append((resource, units))

    def shown(resource: str, u: int) -> str:
        return resource if u == 1 and capacity_of(dict(capacities), resource) == 1 else f"{resource}×{u}"

    sharers: dict[str, list[str]] = {}  # a philosopher's fork → who eat with it, by name
    for name, proto, _ in stuck:
        for side in (getattr(proto, "left", None), getattr(proto, "right", None)):
            if isinstance(side, int):
                sharers.setdefault(fork(side), []).append(name)
    out = []
    for name, proto, what in stuck:
        text, mine = name, [r for r, _ in held.get(name, [])]
        if mine:
            text += f" (holding {', '.join(shown(r, u) for r, u in held[name])})"
        wants = _awaited(wanted(proto, list(capacities), mine), name, what, sharers)
        if wants:
            others = sorted(
                {n for r, hs in holdings.items() if r in wants or _kind(r) in wants for n, _ in hs} - {name}
            )
            # no holder named when none entered it: a fork may be with a philosopher who has
            # not entered it (only eating enters it), and "held by nobody" would say otherwise
            text += f" for {', '.join(wants)}" + (f" (held by {', '.join(others)}):" if others else ":")
        out.append(f"{text} {'what it waits for is unknown' if UNKNOWN in what else _lacks(proto, what)}")
    return "; ".join(out)


def _lacks(proto: Any, what: dict[str, list[str]]) -> str:
    """``lacks(what)``; for a process whose ``waiting_for()`` names nothing, also the state it is
    unfinished in and why: a class whose ``final_states`` is empty or does not hold that state (a
    bee ``DEAD`` but never declared final) reads as stuck, and saying so says what to fix."""
    finals = getattr(type(proto), "final_states", None)
    if what or not isinstance(finals, frozenset) or not hasattr(proto, "state"):
        return lacks(what)
    cls = type(proto).__name__
    why = f"{cls}.final_states is empty" if not finals else f"not one of {cls}.final_states"
    return f"(unfinished in state {proto.state}: {why}; its waiting_for() names nothing)"


def _awaited(
    wants: list[str], name: str, what: dict[str, list[str]], sharers: Mapping[str, list[str]]
) -> list[str]:
    """``wants`` narrowed to the forks ``name`` awaits: those whose other philosopher it waits for
    a message from (a fork its own protocol holds, not entered yet, is not awaited); all of them
    when it awaits none of its neighbours (a waiter's, a host's answer) or they are not forks."""
    senders = {n for whom in what.values() for n in whom}
    awaited = [r for r in wants if senders & (set(sharers.get(r, [])) - {name})]
    return awaited or wants


def stuck_said(model: Any, world: tuple) -> str:
    """Every unfinished process of ``world`` (a ``WorldModel``'s) in words."""
    name = {i: model.names[model.pids[i]] for i in range(model.n)}
    holdings: dict[str, list[tuple[str, int]]] = {}
    for rid, i, units in model.holdings(world):
        holdings.setdefault(model.resources[rid], []).append((name[i], units))
    unfinished = [i for i in range(model.n) if not model.finished(world[i])]
    stuck = [(name[i], model.objects[world[i]], _waits(model, world[i])) for i in unfinished]
    return said(model.setup.capacities, stuck, holdings)


def _waits(model: Any, sid: int) -> dict[str, list[str]]:
    """What the process in state ``sid`` waits for, by name; ``{UNKNOWN: []}`` when its
    ``waiting_for()`` raised (``check`` shows the stall all the same, not judged)."""
    try:
        return {k: [model.names.get(p, str(p)) for p in whom] for k, whom in model.waiting(sid).items()}
    except WaitsRaised:
        return {UNKNOWN: []}
