"""The hamster killers (docs/architecture.md#the-hamster-killers): a mayor hands out contracts, elves compete
for contracts, then safety pins, then poison, with Lamport's algorithm generalised to
multi-unit resources.

Participants: the mayor (pid 0, ``mayor``) and elves 1..N (``elf-i``). Every message carries
the ``round`` it belongs to.

**The core rule** (per resource, per round). Each elf keeps every request it knows, ordered by
``(ts, pid)``. An elf with a REPLY from every other elf for its current request sums the units
of the requests *ahead* of its own; it gets the resource when ``total − ahead ≥ its units``.
A RELEASE removes the sender's request. Contract requests are never removed (contracts are
one-shot) and the contract an elf gets is the position of its request in that order
(``contract:<round>.<position>``); a position past the last contract means "none left".

Mayor (``INITIAL → MAYOR_WAITING → INITIAL ... → MAYOR_DONE``):

| state         | start / request (local)                    | CONTRACT_COMPLETED(r, i)                                   |
|---------------|--------------------------------------------|------------------------------------------------------------|
| INITIAL       | next round: INIT_CONTRACTS → MAYOR_WAITING | ignored                                                    |
| MAYOR_WAITING | error                                      | round r: mark i done; all done: STOP to all elves,         |
|               |                                            |   → INITIAL + schedule the next round (pause), or,         |
|               |                                            |   after the last round, → MAYOR_DONE; another round: error |
| MAYOR_DONE    | error                                      | ignored                                                    |

Elf (``X`` = CONTRACT, PINS or POISON; the phase says which resource the elf is after):

| state                | INIT_CONTRACTS(r)            | X_REQUEST      | X_REPLY                    | X_RELEASE             | STOP(r)                 | local                        |
|----------------------|------------------------------|----------------|----------------------------|-----------------------|-------------------------|------------------------------|
| INITIAL (no round)   | fresh queues, replay early   | later round:   | later round: buffer;       | later round:          | error                   | request: stale timer,        |
|                      |   requests, next contract*   |   buffer; else |   else dropped             |   buffer; else        |                         |   ignored                    |
|                      |   → ELF_REQUESTING / INITIAL |   dropped      |                            |   dropped             |                         |                              |
| INITIAL (none left)  | error                        | queue, REPLY   | error                      | dequeue sender        | → INITIAL / ELF_DONE    | request: stale, ignored      |
| ELF_REQUESTING       | error                        | queue, REPLY   | count; N−1 in: the check   | dequeue sender        | contract phase: drop it | request: stale timer,        |
|                      |                              |                |   (below) → ELF_CRITICAL / |                       |   → INITIAL / ELF_DONE; |   ignored                    |
|                      |                              |                |   ELF_REQUESTING /         |                       |   pins/poison: error    |                              |
|                      |                              |                |   ELF_WAIT_FOR_RELEASE /   |                       |                         |                              |
|                      |                              |                |   INITIAL                  |                       |                         |                              |
| ELF_WAIT_FOR_RELEASE | error                        | queue, REPLY   | error                      | dequeue; X: the check | error (holds contract)  | request: stale timer,        |
|                      |                              |                |                            |   → ELF_REQUESTING /  |                         |   ignored                    |
|                      |                              |                |                            |   ELF_CRITICAL        |                         |                              |
| ELF_CRITICAL         | error                        | queue, REPLY   | error                      | dequeue sender        | error (holds contract)  | exit: contract_done, exits,  |
|   (working)          |                              |                |                            |                       |                         |   RELEASEs, COMPLETED        |
|                      |                              |                |                            |                       |                         |   → ELF_FINISHED + rest;     |
|                      |                              |                |                            |                       |                         |   request: stale timer,      |
|                      |                              |                |                            |                       |                         |   ignored                    |
| ELF_FINISHED         | error                        | queue, REPLY   | error                      | dequeue sender        | → INITIAL / ELF_DONE    | request: next contract*      |
|                      |                              |                |                            |                       |                         |   → ELF_REQUESTING / INITIAL |
| ELF_DONE (final)     | error                        | dropped        | dropped                    | dropped               | error                   | request: stale, ignored      |

A ``request`` (a rest timer firing) is ignored in every state but ELF_FINISHED: its round was
stopped while the elf rested. With no rest timer pending it is an error in every state.

(*) next contract: CONTRACT_REQUEST to every other elf → ELF_REQUESTING; but when the elf already
knows as many contract requests as there are contracts, its own would come after all of them
(its clock is past every timestamp it has seen), so it goes straight to INITIAL (none left).

The check (ELF_CRITICAL, with every reply in): contract phase — position ≤ contracts: Enter
``contract:r.i`` and request pins; else → INITIAL (none left; it keeps answering the round's
requests and waits for STOP). Pins/poison phase — enough left: Enter, then request poison
(after pins) or start working (``Schedule("exit", "work")``, staying in ELF_CRITICAL); not
enough → ELF_WAIT_FOR_RELEASE.

Rounds: an elf message of a later round is buffered (clock updated) and replayed, in arrival
order, when that round's INIT_CONTRACTS arrives; one of an earlier round, or of the round this
elf has already seen stopped, is dropped as if never received (no clock step). Queues are
fresh each round. The mayor → elf link is FIFO, so STOP(r) always precedes INIT(r+1); STOP(r)
is sent only once every contract of r is completed, so nobody holds pins or poison then.

Invariants: an elf holds pins only while holding a contract, and poison only while holding
pins (order contract → pins → poison, never the reverse); it replies to each request of its
running round exactly once, at once; it has at most one request per resource outstanding.
"""

from __future__ import annotations

import copy
import importlib
import random
from collections import Counter
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

from pydantic import Field

from ..clock import LamportClock, priority
from ..messages import Codec, Message
from ..protocol import Enter, Exit, Note, Protocol, ProtocolError, Schedule, Send
from ..setup import ConfigError, Setup, positive_int
from ..show import attributes, fmt
from ..spec import AlgorithmSpec
from . import elves_flags
from .classic import expect

MAYOR = 0


class State(StrEnum):
    """The problem statement's states, in English: the mayor's three, then the elf's (INITIAL is both's)."""

    INITIAL = "INITIAL"
    MAYOR_WAITING = "MAYOR_WAITING"
    MAYOR_DONE = "MAYOR_DONE"
    ELF_REQUESTING = "ELF_REQUESTING"
    ELF_CRITICAL = "ELF_CRITICAL"
    ELF_WAIT_FOR_RELEASE = "ELF_WAIT_FOR_RELEASE"
    ELF_FINISHED = "ELF_FINISHED"
    ELF_DONE = "ELF_DONE"


# The members as plain names: on Python 3.11 every ``State.X`` goes through ``EnumType.__getattr__``
# (a Python call), and the handlers compare states on every message.
(
    INITIAL,
    MAYOR_WAITING,
    MAYOR_DONE,
    ELF_REQUESTING,
    ELF_CRITICAL,
    ELF_WAIT_FOR_RELEASE,
    ELF_FINISHED,
    ELF_DONE,
) = State

CONTRACT, PINS, POISON = "contract", "pins", "poison"
KINDS = (CONTRACT, PINS, POISON)


# -- messages ---------------------------------------------------------------------------
class RoundMessage(Message):
    round: int = Field(ge=1)


# The table's X_REQUEST, X_REPLY and X_RELEASE: what an elf sends the other elves about resource
# ``kind``. Plain classes (not models) mixed into the models below: an elf dispatches on them for
# every message, and ``isinstance`` against a plain class is a quick C check, against a pydantic
# model class a call through its metaclass.
if TYPE_CHECKING:

    class _Fields:  # what the models they are mixed into have (for the type checker only)
        type: str
        sender: int
        ts: int
        round: int
        kind: ClassVar[str]

    class _Units(_Fields):
        units: int
else:
    _Fields = _Units = object


class XRequest(_Units):
    __slots__ = ()


class XReply(_Fields):
    __slots__ = ()


class XRelease(_Units):
    __slots__ = ()


class InitContracts(RoundMessage):
    """Mayor → every elf: the round's contracts, as numbers of hamsters (contract i = item i−1)."""

    type: Literal["INIT_CONTRACTS"] = "INIT_CONTRACTS"
    contracts: tuple[Annotated[int, Field(ge=1)], ...] = Field(min_length=1)


class ContractRequest(RoundMessage, XRequest):
    type: Literal["CONTRACT_REQUEST"] = "CONTRACT_REQUEST"
    kind: ClassVar[str] = CONTRACT
    units: Literal[1] = 1


class ContractReply(RoundMessage, XReply):
    type: Literal["CONTRACT_REPLY"] = "CONTRACT_REPLY"
    kind: ClassVar[str] = CONTRACT


class PinsRequest(RoundMessage, XRequest):
    type: Literal["PINS_REQUEST"] = "PINS_REQUEST"
    kind: ClassVar[str] = PINS
    units: int = Field(ge=1)


class PinsReply(RoundMessage, XReply):
    type: Literal["PINS_REPLY"] = "PINS_REPLY"
    kind: ClassVar[str] = PINS


class PinsRelease(RoundMessage, XRelease):
    type: Literal["PINS_RELEASE"] = "PINS_RELEASE"
    kind: ClassVar[str] = PINS
    units: int = Field(ge=1)


class PoisonRequest(RoundMessage, XRequest):
    type: Literal["POISON_REQUEST"] = "POISON_REQUEST"
    kind: ClassVar[str] = POISON
    units: int = Field(ge=1)


class PoisonReply(RoundMessage, XReply):
    type: Literal["POISON_REPLY"] = "POISON_REPLY"
    kind: ClassVar[str] = POISON


class PoisonRelease(RoundMessage, XRelease):
    type: Literal["POISON_RELEASE"] = "POISON_RELEASE"
    kind: ClassVar[str] = POISON
    units: int = Field(ge=1)


class ContractCompleted(RoundMessage):
    """Elf → mayor: contract ``contract`` of ``round`` is done."""

    type: Literal["CONTRACT_COMPLETED"] = "CONTRACT_COMPLETED"
    contract: int = Field(ge=1)


class Stop(RoundMessage):
    """Mayor → every elf: every contract of ``round`` is done; ``final`` after the last round."""

    type: Literal["STOP"] = "STOP"
    final: bool = False


CODEC = Codec(
    InitContracts,
    ContractRequest,
    ContractReply,
    PinsRequest,
    PinsReply,
    PinsRelease,
    PoisonRequest,
    PoisonReply,
    PoisonRelease,
    ContractCompleted,
    Stop,
)

# The requests that carry units (pins, poison): built by kind in ``Elf._request``.
UNITS_REQUEST: dict[str, type[PinsRequest] | type[PoisonRequest]] = {PINS: PinsRequest, POISON: PoisonRequest}
REQUEST: dict[str, type[RoundMessage]] = {CONTRACT: ContractRequest, **UNITS_REQUEST}
REPLY: dict[str, type[RoundMessage]] = {CONTRACT: ContractReply, PINS: PinsReply, POISON: PoisonReply}
RELEASE: dict[str, type[RoundMessage]] = {PINS: PinsRelease, POISON: PoisonRelease}
# "PINS_REPLY" → ("pins", "REPLY")
ELF_MESSAGES = {
    model.model_fields["type"].default: (kind, verb)
    for verb, table in (("REQUEST", REQUEST), ("REPLY", REPLY), ("RELEASE", RELEASE))
    for kind, model in table.items()
}


def elf_name(pid: int) -> str:
    return "mayor" if pid == MAYOR else f"elf-{pid}"


def contract_resource(round_: int, index: int) -> str:
    return f"contract:{round_}.{index}"


# -- the mayor ----------------------------------------------------------------------------
class Mayor(Protocol):
    """Hands out ``plan[r-1]`` in round r and stops the round once every contract is completed.

    Invariant: STOP(r) is sent only after CONTRACT_COMPLETED(r, i) arrived for every contract i.
    """

    CONFIG_FIELDS = frozenset(
        {
            "flowers",
            "reeds",
            "eggs",
            "cocoons",
            "per_reed",
            "totals",
            "pins_per_elf",
            "poison_per_hamster",
            "plan",
        }
    )

    state: State
    final_states = frozenset({MAYOR_DONE})
    name = "mayor"

    def __init__(self, elves: int, plan: list[tuple[int, ...]], clock: int = 0) -> None:
        if not plan or any(not contracts for contracts in plan):
            raise ValueError("the mayor needs at least one round with at least one contract")
        self.pid = MAYOR
        self.n = elves
        self.plan = [tuple(contracts) for contracts in plan]
        self.clock = LamportClock(clock)
        self.state = INITIAL
        self.round = 0
        self.completed: set[int] = set()

    def start(self) -> list:
        return self._begin()

    def _begin(self) -> list:
        self.round += 1
        self.completed = set()
        self.state = MAYOR_WAITING
        contracts = self.plan[self.round - 1]
        msg = InitContracts(sender=self.pid, ts=self.clock.tick(), round=self.round, contracts=contracts)
        return [Note("round", {"round": self.round, "contracts": list(contracts)})] + [
            Send(j, msg) for j in range(1, self.n + 1)
        ]

    def on_local(self, action: str) -> list:
        match action:
            case "request" if self.state is INITIAL and 1 <= self.round < len(self.plan):
                return self._begin()
            case _:
                raise ProtocolError(f"mayor cannot {action!r} in state {self.state} (round {self.round})")

    def on_message(self, msg) -> list:
        match msg:
            case ContractCompleted() if self.state is MAYOR_WAITING:
                if msg.round != self.round:
                    raise self.refuse(msg, f"it is for round {msg.round}, this is round {self.round}")
                self.clock.receive(msg.ts)
                return self._completed(msg)
            case ContractCompleted():
                self.clock.receive(msg.ts)
                return []  # INITIAL or MAYOR_DONE: ignored, as the statement's table says
            case _:
                raise ProtocolError(f"mayor does not take {msg.type} (state {self.state})")

    def _completed(self, msg: ContractCompleted) -> list:
        contracts = self.plan[self.round - 1]
        if not 1 <= msg.contract <= len(contracts):
            raise ProtocolError(f"mayor: round {msg.round} has no contract {msg.contract}")
        self.completed.add(msg.contract)
        if len(self.completed) < len(contracts):
            return []
        final = self.round == len(self.plan)
        stop = Stop(sender=self.pid, ts=self.clock.tick(), round=self.round, final=final)
        effects: list = [Send(j, stop) for j in range(1, self.n + 1)]
        if final:
            self.state = MAYOR_DONE
        else:
            self.state = INITIAL
            effects.append(Schedule("request", "pause"))
        return effects

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not MAYOR_WAITING:
            return {}
        missing = [i for i in range(1, len(self.plan[self.round - 1]) + 1) if i not in self.completed]
        return {f"CONTRACT_COMPLETED of round {self.round}, contract(s) {', '.join(map(str, missing))}": []}

    def card(self) -> list[tuple[str, str]]:
        round_plan = self.plan[self.round - 1] if 1 <= self.round <= len(self.plan) else ()
        return [
            ("round", f"{self.round} of {len(self.plan)}"),
            ("contracts (hamsters)", fmt(list(round_plan))),
            ("completed", fmt(self.completed)),
        ]

    def snapshot(self):
        return (self.state, self.clock.time, self.round, frozenset(self.completed))

    def __deepcopy__(self, memo):
        """A fast deep copy for exhaustive exploration: only the mutable parts are copied (speed:
        see ``Elf.__deepcopy__``)."""
        twin = copy.copy(self)
        twin.clock = LamportClock(self.clock.time)
        twin.completed = set(self.completed)
        return twin


# -- the elf ------------------------------------------------------------------------------
class Elf(Protocol):
    """One elf. See the module's table; invariants in its last paragraph."""

    CONFIG_FIELDS = frozenset(
        {
            "flowers",
            "reeds",
            "eggs",
            "cocoons",
            "per_reed",
            "totals",
            "pins_per_elf",
            "poison_per_hamster",
            "plan",
        }
    )

    state: State
    final_states = frozenset({ELF_DONE})

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
        self.state = INITIAL
        self.round = 0  # the last round whose INIT_CONTRACTS arrived
        self.active = False  # between INIT_CONTRACTS(round) and STOP(round)
        self.contracts: tuple[int, ...] = ()
        self.contract_requests: set[tuple[int, int]] = set()  # (ts, pid), never removed in a round
        self.queues: dict[str, dict[int, tuple[int, int]]] = {PINS: {}, POISON: {}}  # pid → (ts, units)
        self.phase: str | None = None  # the resource of the current request
        self.my_request: tuple[int, int] | None = None
        self.replies: set[int] = set()
        self.holding: tuple[int, int] | None = None  # (contract index, hamsters)
        self.future: list = []  # messages of a later round, in arrival order
        self.rest_timers = 0  # "request" timers scheduled and not yet fired
        # Statistics only (not part of the snapshot, never read by the protocol):
        self.done: dict[int, list[int]] = {}  # round → contracts this elf completed
        self.waits: Counter[str] = Counter()  # times it had to wait for a release, per resource

    @property
    def name(self) -> str:
        return elf_name(self.pid)

    def _others(self):
        return (j for j in range(1, self.n + 1) if j != self.pid)

    def units_for(self, kind: str) -> int:
        if kind == CONTRACT:
            return 1
        if kind == PINS:
            return self.pins_per_elf
        return expect(self, self.holding, "contract")[1] * self.poison_per_hamster

    # -- inputs -------------------------------------------------------------------------
    def on_message(self, msg) -> list:
        match msg:
            case XRequest() | XReply() | XRelease():
                if not 1 <= msg.sender <= self.n or msg.sender == self.pid:
                    raise ProtocolError(
                        f"{self.name} got {msg.type} from {msg.sender}, not another elf (state {self.state})"
                    )
                if msg.round < self.round or (msg.round == self.round and not self.active):
                    return []  # a round already stopped here: stale, dropped as if never received
                self.clock.receive(msg.ts)
                if msg.round > self.round:
                    self.future.append(msg)  # that round has not begun here yet
                    return []
                return self._handle(msg)
            case InitContracts():
                self.clock.receive(msg.ts)
                return self._on_init(msg)
            case Stop():
                self.clock.receive(msg.ts)
                return self._on_stop(msg)
            case _:
                raise ProtocolError(f"{self.name} does not take {msg.type} (state {self.state})")

    def on_local(self, action: str) -> list:
        match action:
            case "exit" if self.state is ELF_CRITICAL and self.phase == POISON:
                return self._finish()
            case "exit":
                raise ProtocolError(f"{self.name} cannot finish work (exit) in state {self.state}")
            case "request" if self.rest_timers == 0:
                raise ProtocolError(f"{self.name} has no contract request pending (state {self.state})")
            case "request":
                self.rest_timers -= 1
                if self.state is ELF_FINISHED:
                    return self._next_contract()
                return []  # the round was stopped while resting: the timer is stale
            case _:
                raise self.refuse(f"local action {action!r}", "unknown action")

    # -- round boundaries ---------------------------------------------------------------
    def _on_init(self, msg) -> list:
        if self.active or self.state is ELF_DONE or msg.round != self.round + 1:
            raise ProtocolError(
                f"{elf_name(self.pid)} got INIT_CONTRACTS of round {msg.round} in state "
                f"{self.state} of round {self.round}"
            )
        self.round = msg.round
        self.active = True
        self.contracts = tuple(msg.contracts)
        self.contract_requests = set()
        self.queues = {PINS: {}, POISON: {}}
        now = [m for m in self.future if m.round == self.round]
        self.future = [m for m in self.future if m.round > self.round]
        effects: list = []
        for buffered in now:  # only CONTRACT_REQUESTs can be early: nothing else needs my reply
            effects += self._handle(buffered)
        return effects + self._next_contract()

    def _next_contract(self) -> list:
        """Request a contract, unless this elf already knows it would come too late.

        Every request it has seen has a timestamp below its clock, so a new request would be
        ordered after all of them: with as many requests known as contracts, its position would
        be past the last contract. Then it goes straight to INITIAL (none left, wait for STOP)
        instead of spending 2(N−1) messages to learn that.
        """
        if len(self.contract_requests) >= len(self.contracts):
            self.state, self.phase, self.my_request = INITIAL, None, None
            return []
        return self._request(CONTRACT)

    def _on_stop(self, msg) -> list:
        if not self.active or msg.round != self.round:
            raise ProtocolError(
                f"{elf_name(self.pid)} got STOP of round {msg.round} in state {self.state} "
                f"of round {self.round}"
            )
        if self.holding is not None:
            raise ProtocolError(
                f"{elf_name(self.pid)} got STOP of round {msg.round} while it still holds "
                f"contract {self.round}.{self.holding[0]} (state {self.state})"
            )
        self.active = False
        self.phase = None
        self.my_request = None
        self.replies = set()
        self.contract_requests = set()
        self.queues = {PINS: {}, POISON: {}}
        self.state = ELF_DONE if msg.final else INITIAL
        return []

    # -- the core rule ------------------------------------------------------------------
    def _handle(self, msg) -> list:
        """A message of the running round from another elf."""
        kind = msg.kind
        match msg:
            case XRequest():
                if kind == CONTRACT:
                    self.contract_requests.add(priority(msg.ts, msg.sender))
                else:
                    self.queues[kind][msg.sender] = (msg.ts, msg.units)
                return [Send(msg.sender, REPLY[kind](sender=self.pid, ts=self.clock.tick(), round=msg.round))]
            case XReply():
                if self.state is not ELF_REQUESTING or self.phase != kind or msg.sender in self.replies:
                    raise ProtocolError(
                        f"{self.name} got an unexpected {msg.type} from "
                        f"{elf_name(msg.sender)} in state {self.state}"
                    )
                self.replies.add(msg.sender)
                return self._check() if len(self.replies) == self.n - 1 else []
            case XRelease():
                held = self.queues[kind].get(msg.sender)
                if held is None or held[1] != msg.units:
                    raise ProtocolError(
                        f"{self.name} got {msg.type} of {msg.units} from "
                        f"{elf_name(msg.sender)}, which requested {held} (state {self.state})"
                    )
                del self.queues[kind][msg.sender]
                if self.state is ELF_WAIT_FOR_RELEASE and self.phase == kind:
                    return self._check()
                return []
            case _:
                raise ProtocolError(f"{self.name} does not take {msg.type} (state {self.state})")

    def _request(self, kind: str) -> list:
        ts = self.clock.tick()
        self.phase = kind
        self.my_request = priority(ts, self.pid)
        self.replies = set()
        self.state = ELF_REQUESTING
        units = self.units_for(kind)
        if kind == CONTRACT:
            self.contract_requests.add(self.my_request)
            msg: RoundMessage = ContractRequest(sender=self.pid, ts=ts, round=self.round)
        else:
            self.queues[kind][self.pid] = (ts, units)
            msg = UNITS_REQUEST[kind](sender=self.pid, ts=ts, round=self.round, units=units)
        effects: list = [Send(j, msg) for j in self._others()]
        if self.n == 1:
            effects += self._check()
        return effects

    def units_ahead(self, kind: str) -> int:
        """Units requested by requests ordered before mine (holders and waiters alike)."""
        mine = expect(self, self.my_request, "request")
        return sum(units for pid, (ts, units) in self.queues[kind].items() if priority(ts, pid) < mine)

    def _check(self) -> list:
        """ELF_CRITICAL: every other elf has replied; does the resource suffice for me?"""
        kind = expect(self, self.phase, "resource it requested")
        was_waiting = self.state is ELF_WAIT_FOR_RELEASE
        self.state = ELF_CRITICAL
        if kind == CONTRACT:
            mine = expect(self, self.my_request, "request")
            position = 1 + sum(1 for request in self.contract_requests if request < mine)
            if position > len(self.contracts):
                self.state, self.phase, self.my_request = INITIAL, None, None  # none left this round
                return []
            self.holding = (position, self.contracts[position - 1])
            return [Enter(contract_resource(self.round, position))] + self._request(PINS)
        need = self.queues[kind][self.pid][1]
        if self.totals[kind] - self.units_ahead(kind) < need:
            if not was_waiting:
                self.waits[kind] += 1
            self.state = ELF_WAIT_FOR_RELEASE
            return []
        if kind == PINS:
            return [Enter(PINS, need)] + self._request(POISON)
        return [Enter(POISON, need), Schedule("exit", "work")]  # stays ELF_CRITICAL while working

    def _finish(self) -> list:
        """ELF_FINISHED: the work is noted while still holding everything; the exits come before the
        releases that let anyone else in; CONTRACT_COMPLETED last."""
        index, hamsters = expect(self, self.holding, "contract")
        pins = self.queues[PINS].pop(self.pid)[1]
        poison = self.queues[POISON].pop(self.pid)[1]
        effects: list = [
            Note("contract_done", {"round": self.round, "contract": index, "hamsters": hamsters}),
            Exit(POISON, poison),
            Exit(PINS, pins),
            Exit(contract_resource(self.round, index)),
        ]
        ts = self.clock.tick()
        effects += [
            Send(j, PinsRelease(sender=self.pid, ts=ts, round=self.round, units=pins)) for j in self._others()
        ]
        ts = self.clock.tick()
        effects += [
            Send(j, PoisonRelease(sender=self.pid, ts=ts, round=self.round, units=poison))
            for j in self._others()
        ]
        effects.append(
            Send(
                MAYOR,
                ContractCompleted(sender=self.pid, ts=self.clock.tick(), round=self.round, contract=index),
            )
        )
        self.done.setdefault(self.round, []).append(index)
        self.holding = None
        self.phase = None
        self.my_request = None
        self.state = ELF_FINISHED
        self.rest_timers += 1
        effects.append(Schedule("request", "rest"))
        return effects

    # -- observation --------------------------------------------------------------------
    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is ELF_REQUESTING:
            phase = expect(self, self.phase, "resource it requested")
            return {f"{phase.upper()}_REPLY": [j for j in self._others() if j not in self.replies]}
        if self.state is ELF_WAIT_FOR_RELEASE:
            phase, mine = (
                expect(self, self.phase, "resource it requested"),
                expect(self, self.my_request, "request"),
            )
            ahead = sorted(pid for pid, (ts, _) in self.queues[phase].items() if priority(ts, pid) < mine)
            return {f"{phase.upper()}_RELEASE": ahead}
        if self.state is INITIAL:
            return {"STOP" if self.active else "INIT_CONTRACTS": [MAYOR]}
        return {}

    def card(self) -> list[tuple[str, str]]:
        names = "round phase my_request replies holding contracts contract_requests"
        return attributes(self, names, counts=frozenset({"replies"})) + [
            ("pins queue", fmt(self.queues.get("pins", {}))),
            ("poison queue", fmt(self.queues.get("poison", {}))),
            ("done", fmt(self.done)),
        ]

    def snapshot(self):
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

    def __deepcopy__(self, memo):
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


# -- setup --------------------------------------------------------------------------------
DEFAULTS = {
    "pins": 3,
    "poison": 10,
    "contracts": 6,
    "hamsters": (1, 5),
    "rounds": 2,
    "pins_per_elf": 1,
    "poison_per_hamster": 1,
}


def hamster_range(value) -> tuple[int, int]:
    """``[min, max]``, ``(min, max)``, one number, or ``"MIN-MAX"`` → (min, max), both ≥ 1."""
    if isinstance(value, str):
        text, parts = value, value.split("-")
        try:
            value = [int(p) for p in parts] if len(parts) in (1, 2) else None
        except ValueError:
            value = None
        if value is None:
            raise ConfigError(f"hamsters must be MIN-MAX (e.g. 1-5), got {text!r}")
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value, value]
    if (
        not isinstance(value, (list, tuple))
        or len(value) not in (1, 2)
        or any(isinstance(v, bool) or not isinstance(v, int) for v in value)
    ):
        raise ConfigError(f"option 'hamsters' must be [min, max] whole numbers, got {value!r}")
    low, high = value[0], value[-1]
    if low < 1:
        raise ConfigError(f"a contract must have at least 1 hamster, got min {low}")
    if low > high:
        raise ConfigError(f"hamsters: min {low} is above max {high}")
    return low, high


def make_plan(rounds: int, contracts: int, hamsters: tuple[int, int], seed: int) -> list[tuple[int, ...]]:
    """The mayor's contracts for every round, drawn from one seeded RNG (same seed, same plan)."""
    rng = random.Random(f"elves-mayor-{seed}")
    return [tuple(rng.randint(*hamsters) for _ in range(contracts)) for _ in range(rounds)]


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    """``processes`` elves and a mayor. Refuses, up front, any configuration that could never finish."""
    if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
        raise ConfigError(f"the hamster killers need at least one elf, got {processes!r}")
    unknown = set(options) - set(SPEC.options)
    if unknown:
        raise ConfigError(
            f"elves do not take option(s) {', '.join(sorted(unknown))}; "
            f"they take {', '.join(sorted(SPEC.options))}"
        )
    opts = {**DEFAULTS, **options}
    pins = positive_int(opts, "pins")
    poison = positive_int(opts, "poison")
    contracts = positive_int(opts, "contracts")
    rounds = positive_int(opts, "rounds")
    pins_per_elf = positive_int(opts, "pins_per_elf")
    per_hamster = positive_int(opts, "poison_per_hamster")
    low, high = hamster_range(opts["hamsters"])
    if pins_per_elf > pins:
        raise ConfigError(
            f"an elf needs {pins_per_elf} pins but only {pins} exist: no contract could ever be done"
        )
    if high * per_hamster > poison:
        raise ConfigError(
            f"a contract of {high} hamsters needs {high * per_hamster} poison portions "
            f"({per_hamster} per hamster) but only {poison} exist: it could never be done; "
            f"lower the hamster maximum or add poison"
        )
    plan = make_plan(rounds, contracts, (low, high), seed)
    protocols: dict[int, Protocol] = {MAYOR: Mayor(processes, plan)}
    for pid in range(1, processes + 1):
        protocols[pid] = Elf(pid, processes, pins, poison, pins_per_elf, per_hamster)
    params = {
        "elves": processes,
        "pins": pins,
        "poison": poison,
        "contracts": contracts,
        "hamsters": [low, high],
        "rounds": rounds,
        "pins_per_elf": pins_per_elf,
        "poison_per_hamster": per_hamster,
        "plan": [list(p) for p in plan],
        "seed": seed,
    }
    return Setup(
        "elves",
        protocols,
        {pid: elf_name(pid) for pid in protocols},
        CODEC,
        {"contract:*": 1, PINS: pins, POISON: poison},
        params,
    )


# -- how the commands present the elves (flags, summary) and a run's messages: elves_flags.py --
FLAGS, estimate_messages = elves_flags.flags(DEFAULTS, hamster_range)

SPEC = AlgorithmSpec(
    "elves",
    "elves",
    "the hamster killers: a mayor hands out contracts, elves share pins and poison",
    make_setup,
    CODEC,
    "mutexlab.audit.elves",
    role="elf",
    fixed_roles=("mayor",),
    options={
        "pins": "pins in the village (default 3)",
        "poison": "poison portions (default 10)",
        "contracts": "contracts per round (default 6)",
        "hamsters": "hamsters per contract, MIN-MAX (default 1-5)",
        "rounds": "rounds of contracts (default 2)",
        "pins_per_elf": "pins an elf needs (default 1)",
        "poison_per_hamster": "poison portions per hamster (default 1)",
    },
    reductions=lambda: importlib.import_module(f"{__package__}.elves_reductions").REDUCTIONS,  # reads Elf
    flags=FLAGS,
    estimate_messages=estimate_messages,
)
