"""Exhaustive exploration: every interleaving that FIFO links and local decisions allow.

A *world* is the protocols' states, the messages in flight on each link (FIFO), the local
decisions each process has pending (its ``Schedule`` effects, fired in any order), and who
holds what. From a world, each step either delivers the oldest message of one link or fires
one pending local decision. Worlds are hashed by the protocols' ``snapshot()`` and the rest,
so each distinct world is expanded once (depth-first).

Checked in every reachable world: no resource holds more units than its capacity (these are
real global states, so occupancy is exact). A world with no step left is *final* when every
process is ``finished``, otherwise a *deadlock*.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protocol import Enter, Exit, Protocol, ProtocolError
from ..setup import Setup, capacity_of
from ..words import count
from .driver import Driver


@dataclass
class World:
    protocols: Mapping[int, Protocol]
    links: dict[tuple[int, int], tuple] = field(default_factory=dict)
    pending: dict[int, tuple[str, ...]] = field(default_factory=dict)
    holdings: dict[str, tuple[tuple[int, int], ...]] = field(
        default_factory=dict
    )  # resource → ((pid, units), ...)


@dataclass
class Finding:
    kind: str  # "violation", "deadlock" or "error"
    message: str
    path: list[str]  # the steps from the initial world


@dataclass
class Exploration:
    states: int = 0
    transitions: int = 0
    finals: int = 0
    max_depth: int = 0
    complete: bool = True
    violations: list[Finding] = field(default_factory=list)
    deadlocks: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.complete and not self.violations and not self.deadlocks

    def summary(self) -> str:
        return (
            f"{count(self.states, 'state')}, {count(self.transitions, 'transition')}, "
            f"{count(self.finals, 'final state')}, depth {self.max_depth}, "
            f"{count(len(self.violations), 'violation')}, {count(len(self.deadlocks), 'deadlock')}"
            + ("" if self.complete else " (INCOMPLETE: state limit reached)")
        )


_KEYS: dict[int, tuple[Any, Any]] = {}


def _msg_key(msg: Any) -> Any:
    """A hashable value for a message (cached per object: messages are immutable and shared)."""
    hit = _KEYS.get(id(msg))
    if hit is None or hit[0] is not msg:
        hit = _KEYS[id(msg)] = (msg, (msg.type, msg.model_dump_json()))
    return hit[1]


def _copy(world: World, pid: int) -> World:
    """A successor world: a step changes only process ``pid``, so only it is copied."""
    protocols = dict(world.protocols)
    protocols[pid] = copy.deepcopy(protocols[pid])
    return World(
        protocols=protocols,
        links=dict(world.links),
        pending=dict(world.pending),
        holdings=dict(world.holdings),
    )


class _Stepper(Driver):
    """Applies one step to a world in place, with the simulator's effect semantics."""

    def __init__(self, setup: Setup, world: World) -> None:
        super().__init__(setup, trace=None)
        self.world = world
        self.overfull: str | None = None

    def transmit(self, sender: int, to: int, msg: Any, msg_id: str, vc: dict | None) -> None:
        links = self.world.links
        links[(sender, to)] = links.get((sender, to), ()) + (msg,)

    def schedule(self, pid: int, action: str, dwell: str) -> None:
        self.world.pending[pid] = self.world.pending.get(pid, ()) + (action,)

    def holding_changed(self, pid: int, effect: Enter | Exit) -> None:
        held = list(self.world.holdings.get(effect.resource, ()))
        if isinstance(effect, Enter):
            held.append((pid, effect.units))
            cap = capacity_of(self.setup.capacities, effect.resource)
            if sum(u for _, u in held) > cap:
                self.overfull = f"{effect.resource} (capacity {cap}) held by " + ", ".join(
                    f"{self.names[p]}×{u}" for p, u in held
                )
        elif (pid, effect.units) in held:
            held.remove((pid, effect.units))
        self.world.holdings[effect.resource] = tuple(sorted(held))

    def use(self, world: World) -> None:
        self.world = world
        self.protocols = world.protocols
        self.overfull = None


def _key(world: World) -> Any:
    return (
        tuple(p.snapshot() for _, p in sorted(world.protocols.items())),
        tuple(sorted((link, tuple(_msg_key(m) for m in msgs)) for link, msgs in world.links.items() if msgs)),
        tuple(sorted((pid, tuple(sorted(a))) for pid, a in world.pending.items() if a)),
        tuple(sorted((r, h) for r, h in world.holdings.items() if h)),
    )


def _steps(world: World) -> list[tuple]:
    steps: list[tuple] = [("deliver", link) for link, msgs in sorted(world.links.items()) if msgs]
    for pid, actions in sorted(world.pending.items()):
        for action in sorted(set(actions)):
            steps.append(("local", pid, action))
    return steps


def explore(
    setup_factory: Callable[[], Setup], max_states: int = 200_000, max_findings: int = 5
) -> Exploration:
    """Explore every reachable world of ``setup_factory()`` (a fresh setup with a bounded workload)."""
    setup = setup_factory()
    start = World(protocols=setup.protocols)
    stepper = _Stepper(setup, start)
    stepper.use(start)
    stepper.start_all()
    result = Exploration()
    parents: dict[Any, tuple[Any, str] | None] = {}
    root = _key(start)
    parents[root] = None
    stack = [(start, root, 0)]
    names = setup.names

    def path_to(key: Any) -> list[str]:
        out = []
        while (parent := parents.get(key)) is not None:
            key, label = parent
            out.append(label)
        return out[::-1]

    _KEYS.clear()
    while stack:
        world, key, depth = stack.pop()
        result.states += 1
        result.max_depth = max(result.max_depth, depth)
        steps = _steps(world)
        if not steps:
            if all(p.finished for p in world.protocols.values()):
                result.finals += 1
            elif len(result.deadlocks) < max_findings:
                stuck = {
                    names[p]: proto.waiting_for()
                    for p, proto in sorted(world.protocols.items())
                    if not proto.finished
                }
                result.deadlocks.append(
                    Finding("deadlock", f"nothing can move; waiting: {stuck}", path_to(key))
                )
            continue
        for step in steps:
            nxt = _copy(world, step[1][1] if step[0] == "deliver" else step[1])
            stepper.use(nxt)
            if step[0] == "deliver":
                sender, to = step[1]
                msgs = nxt.links[(sender, to)]
                nxt.links[(sender, to)] = msgs[1:]
                label = f"deliver {msgs[0].type} {names[sender]}→{names[to]}"
                try:
                    stepper.deliver(sender, to, msgs[0], "", None)
                except ProtocolError as exc:
                    result.violations.append(Finding("error", str(exc), path_to(key) + [label]))
                    continue
            else:
                _, pid, action = step
                actions = list(nxt.pending[pid])
                actions.remove(action)
                nxt.pending[pid] = tuple(actions)
                label = f"{names[pid]} {action}"
                try:
                    stepper.feed(pid, lambda p, a=action: p.on_local(a))
                except ProtocolError as exc:
                    result.violations.append(Finding("error", str(exc), path_to(key) + [label]))
                    continue
            result.transitions += 1
            if stepper.overfull is not None:
                if len(result.violations) < max_findings:
                    result.violations.append(Finding("violation", stepper.overfull, path_to(key) + [label]))
                continue
            nkey = _key(nxt)
            if nkey in parents:
                continue
            if len(parents) >= max_states:
                result.complete = False
                return result
            parents[nkey] = (key, label)
            stack.append((nxt, nkey, depth + 1))
    return result
