"""An elf's state and the core rule (package docstring): requests, the check, what it shows.

``Elf`` (elf.py) adds the transition table and the handlers it names.

(*) next contract: CONTRACT_REQUEST to every other elf → ELF_REQUESTING; but when the elf already
knows as many contract requests as there are contracts, its own would come after all of them
(its clock is past every timestamp it has seen), so it goes straight to INITIAL (none left).
A lone elf needs no replies: it goes on at once (→ ELF_CRITICAL, working).

The check (with every reply in): contract phase — position ≤ contracts: Enter
``contract:r.i`` and request pins; else → INITIAL (none left; it keeps answering the round's
requests and waits for STOP). Pins/poison phase — enough left: Enter, then request poison
(after pins) or start working (``Schedule("exit", "work")``, in ELF_CRITICAL); not enough →
ELF_WAIT_FOR_RELEASE.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Iterator
from typing import Any

from ...clock import LamportClock, priority
from ...protocol import Effect, Enter, Protocol, Schedule, Send
from ...show import attributes, fmt
from ..classic import expect
from .messages import (
    CONTRACT,
    MAYOR,
    PINS,
    POISON,
    UNITS_REQUEST,
    ContractRequest,
    ElfState,
    RoundMessage,
    XMessage,
    contract_resource,
    elf_name,
)


class ElfCore(Protocol):
    """An elf's state and the core rule; invariants in the package's last paragraph."""

    CONFIG_FIELDS = frozenset({"totals", "pins_per_elf", "poison_per_hamster"})

    state: ElfState
    final_states = frozenset({ElfState.ELF_DONE})

    def __init__(
        self,
        pid: int,
        elves: int,
        pins: int,
        poison: int,
        pins_per_elf: int = 1,
        poison_per_hamster: int = 1,
        clock: int = 0,
    ) -> None:
        self.pid = pid
        self.n = elves
        self.totals = {PINS: pins, POISON: poison}
        self.pins_per_elf = pins_per_elf
        self.poison_per_hamster = poison_per_hamster
        self.clock = LamportClock(clock)
        self.state = ElfState.INITIAL
        self.round = 0  # the last round whose INIT_CONTRACTS arrived
        self.active = False  # between INIT_CONTRACTS(round) and STOP(round)
        self.contracts: tuple[int, ...] = ()
        self.contract_requests: set[tuple[int, int]] = set()  # (ts, pid), never removed in a round
        self.queues: dict[str, dict[int, tuple[int, int]]] = {PINS: {}, POISON: {}}  # pid → (ts, units)
        self.phase: str | None = None  # the resource of the current request
        self.my_request: tuple[int, int] | None = None
        self.replies: set[int] = set()
        self.holding: tuple[int, int] | None = None  # (contract index, hamsters)
        self.future: list[XMessage] = []  # messages of a later round, in arrival order
        self.rest_timers = 0  # "request" timers scheduled and not yet fired
        # Statistics only (not part of the snapshot, never read by the protocol):
        self.done: dict[int, list[int]] = {}  # round → contracts this elf completed
        self.waits: Counter[str] = Counter()  # times it had to wait for a release, per resource

    @property
    def name(self) -> str:
        return elf_name(self.pid)

    def _others(self) -> Iterator[int]:
        return (j for j in range(1, self.n + 1) if j != self.pid)

    def units_for(self, kind: str) -> int:
        if kind == CONTRACT:
            return 1
        if kind == PINS:
            return self.pins_per_elf
        return expect(self, self.holding, "contract")[1] * self.poison_per_hamster

    def _next_contract(self) -> list[Effect]:
        """Request a contract, unless this elf already knows it would come too late.

        Every request it has seen has a timestamp below its clock, so a new request would be
        ordered after all of them: with as many requests known as contracts, its position would
        be past the last contract. Then it goes straight to INITIAL (none left, wait for STOP)
        instead of spending 2(N−1) messages to learn that.
        """
        if len(self.contract_requests) >= len(self.contracts):
            self.state, self.phase, self.my_request = ElfState.INITIAL, None, None
            return []
        return self._request(CONTRACT)

    # -- the core rule ------------------------------------------------------------------
    def _request(self, kind: str) -> list[Effect]:
        ts = self.clock.tick()
        self.phase = kind
        self.my_request = priority(ts, self.pid)
        self.replies = set()
        self.state = ElfState.ELF_REQUESTING
        units = self.units_for(kind)
        if kind == CONTRACT:
            self.contract_requests.add(self.my_request)
            msg: RoundMessage = ContractRequest(sender=self.pid, ts=ts, round=self.round)
        else:
            self.queues[kind][self.pid] = (ts, units)
            msg = UNITS_REQUEST[kind](sender=self.pid, ts=ts, round=self.round, units=units)
        effects: list[Effect] = [Send(j, msg) for j in self._others()]
        if self.n == 1:
            effects += self._check()
        return effects

    def units_ahead(self, kind: str) -> int:
        """Units requested by requests ordered before mine (holders and waiters alike)."""
        mine = expect(self, self.my_request, "request")
        return sum(units for pid, (ts, units) in self.queues[kind].items() if priority(ts, pid) < mine)

    def _check(self) -> list[Effect]:
        """ELF_CRITICAL: every other elf has replied; does the resource suffice for me?"""
        kind = expect(self, self.phase, "resource it requested")
        was_waiting = self.state is ElfState.ELF_WAIT_FOR_RELEASE
        self.state = ElfState.ELF_CRITICAL
        if kind == CONTRACT:
            mine = expect(self, self.my_request, "request")
            position = 1 + sum(1 for request in self.contract_requests if request < mine)
            if position > len(self.contracts):
                self.state, self.phase, self.my_request = ElfState.INITIAL, None, None  # none left this round
                return []
            self.holding = (position, self.contracts[position - 1])
            return [Enter(contract_resource(self.round, position))] + self._request(PINS)
        need = self.queues[kind][self.pid][1]
        if self.totals[kind] - self.units_ahead(kind) < need:
            if not was_waiting:
                self.waits[kind] += 1
            self.state = ElfState.ELF_WAIT_FOR_RELEASE
            return []
        if kind == PINS:
            return [Enter(PINS, need)] + self._request(POISON)
        return [Enter(POISON, need), Schedule("exit", "work")]  # stays ELF_CRITICAL while working

    # -- observation --------------------------------------------------------------------
    def wants(self) -> str | None:
        """A contract, pins or poison, from its request until it takes it (or, for a contract,
        learns none is left): what ``check --metrics`` measures a wait for."""
        if self.state is ElfState.ELF_REQUESTING or self.state is ElfState.ELF_WAIT_FOR_RELEASE:
            return self.phase
        return None

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is ElfState.ELF_REQUESTING:
            phase = expect(self, self.phase, "resource it requested")
            return {f"{phase.upper()}_REPLY": [j for j in self._others() if j not in self.replies]}
        if self.state is ElfState.ELF_WAIT_FOR_RELEASE:
            phase, mine = (
                expect(self, self.phase, "resource it requested"),
                expect(self, self.my_request, "request"),
            )
            ahead = sorted(pid for pid, (ts, _) in self.queues[phase].items() if priority(ts, pid) < mine)
            return {f"{phase.upper()}_RELEASE": ahead}
        if self.state is ElfState.INITIAL:
            return {"STOP" if self.active else "INIT_CONTRACTS": [MAYOR]}
        return {}

    def card(self) -> list[tuple[str, str]]:
        """``holding`` is (contract index, hamsters) and a queue maps pid → (ts, units): neither is
        a request ``(ts, pid)``, so neither is shown as ``ts@pid`` by ``fmt`` (which showed
        contract 1 of 4 hamsters as ``1@4`` and pid 2's request at 14 for 1 unit as ``2: 14@1``)."""
        held = self.holding
        return (
            attributes(self, "round phase my_request replies", counts=frozenset({"replies"}))
            + [("holding", "—" if held is None else f"contract {held[0]} ({held[1]} hamsters)")]
            + attributes(self, "contracts contract_requests")
            + [
                ("pins queue", _queue_text(self.queues.get("pins", {}))),
                ("poison queue", _queue_text(self.queues.get("poison", {}))),
                ("done", fmt(self.done)),
            ]
        )

    def snapshot(self) -> tuple[Any, ...]:
        return (
            self.state,
            self.clock.time,
            self.round,
            self.active,
            self.contracts,
            frozenset(self.contract_requests),
            tuple(sorted(self.queues[PINS].items())),
            tuple(sorted(self.queues[POISON].items())),
            self.phase,
            self.my_request,
            frozenset(self.replies),
            self.holding,
            tuple(self.future),
            self.rest_timers,
        )

    def __deepcopy__(self, memo: dict[int, Any]) -> ElfCore:
        """Speed (the model checker and the explorer copy a process per transition): containers
        are copied, their contents (tuples, ints, frozen messages) are immutable and shared.
        Measured: the generic ``Protocol.__deepcopy__`` takes ×2 the time per elf (N = 3, mid-run)."""
        twin = copy.copy(self)
        twin.clock = LamportClock(self.clock.time)
        twin.contract_requests = set(self.contract_requests)
        twin.queues = {kind: dict(queue) for kind, queue in self.queues.items()}
        twin.replies = set(self.replies)
        twin.future = list(self.future)
        twin.done = {r: list(ids) for r, ids in self.done.items()}
        twin.waits = Counter(self.waits)
        return twin


def _queue_text(queue: dict[int, tuple[int, int]]) -> str:
    """A units queue (pid → (ts, units)) in priority order, each request ``ts@pid ×units``."""
    ordered = sorted(queue.items(), key=lambda item: priority(item[1][0], item[0]))
    return "[" + ", ".join(f"{ts}@{pid} ×{units}" for pid, (ts, units) in ordered) + "]"
