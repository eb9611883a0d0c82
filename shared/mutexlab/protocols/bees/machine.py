"""One mason bee: its transition table (``Bee.TABLE``) and the handlers it names.

The table's legend says its words ("ack", "gone"); "try reed" and "try flower" are defined in the
package's docstring (``_try_reed``, ``_try_flower``). A live bee steps its clock on every message
it takes, even one it then ignores; a DEAD or RETIRED bee ignores everything without a step.

Speed: the handlers of most messages (``_on_reqreed``, ``_ack_reqflower``, ``_on_ackflower``,
``_try_flower``, ``_leave_flower``'s deferred ACKs) are written short — a receive and the ACK's
tick as one ``LamportClock.answer``; the flower request, its threshold (unless a subclass
overrides ``flower_threshold``) and the ACK without a call — with the same effects and clocks as
their plain statement; ``tests/test_bees_answers.py`` holds them to it, trace for trace, and
catches broken variants. Gain: written plain, bees P = 50 and 100 take ×1.047 the instructions
(``python -m bench.instructions``).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any

from ...clock import LamportClock, priority
from ...fastpath import trusted
from ...machine import Table, ignore, on
from ...messages import Message
from ...protocol import Effect, Enter, Exit, Note, Protocol, ProtocolError, Schedule, Send
from ...show import counted, fmt
from ..classic import expect
from .messages import (
    FINAL_STATES,
    FLOWER,
    ACKflower,
    ACKreed,
    BeeState,
    RELEASEreed,
    REQflower,
    REQreed,
    bee_name,
    reed_name,
)

S = BeeState  # short, for the table
INSERT = on("insert + ack", "_on_reqreed")
STALE = ignore("stale", "_stale")
ACK = on("ack", "_ack_reqflower")
GONE = on("mark sender gone", "_on_gone")
GONE_DEFERRED = on("mark gone, drop its deferral", "_on_gone")
TRY_REED = (S.ON_REED, S.RETIRED)
IGNORED = {t: ignore("gone") for t in ("REQreed", "ACKreed", "REQflower", "ACKflower", "RELEASEreed")}
# The ACKs, most of the traffic, built without validation from ints the bee knows valid
# (fastpath.trusted): (sender, ts, req_ts).
make_ackreed, make_ackflower = trusted(ACKreed), trusted(ACKflower)
_deferred_pid = itemgetter(0)  # of a deferred (pid, req_ts)
LOCAL_RULES = {  # why the table refuses a local action, for the error
    "request": "a bee asks for a reed in REST and for a flower in ON_REED",
    "exit": "it is not on a flower",
}


class Bee(Protocol):
    """One mason bee. ``n`` bees, ``flowers`` (K), ``reeds`` (T), ``eggs`` per bee, ``cocoons`` per reed."""

    TABLE = Table(
        BeeState,
        {
            S.REST: {
                "REQreed": INSERT,
                "ACKreed": STALE,
                "REQflower": ACK,
                "ACKflower": STALE,
                "RELEASEreed": GONE,
                "request": on("broadcast REQreed; try reed", "_ask_reed", to=(S.WAIT_REED, *TRY_REED)),
            },
            S.WAIT_REED: {
                "REQreed": INSERT,
                "ACKreed": on("count if it echoes my request; try reed", "_on_ackreed", to=TRY_REED),
                "REQflower": ACK,
                "ACKflower": STALE,
                "RELEASEreed": on("mark gone; try reed", "_on_gone_try_reed", to=TRY_REED),
            },
            S.ON_REED: {
                "REQreed": INSERT,
                "ACKreed": STALE,
                "REQflower": ACK,
                "ACKflower": STALE,
                "RELEASEreed": GONE,
                "request": on(
                    "broadcast REQflower; try flower", "_ask_flower", to=(S.WAIT_FLOWER, S.ON_FLOWER)
                ),
            },
            S.WAIT_FLOWER: {
                "REQreed": INSERT,
                "ACKreed": STALE,
                "REQflower": on("ack if (ts, pid) earlier than mine, else defer", "_compete"),
                "ACKflower": on(
                    "count if it echoes my current request; try flower", "_on_ackflower", to=(S.ON_FLOWER,)
                ),
                "RELEASEreed": on(
                    "mark gone, drop its deferral; try flower", "_on_gone_try_flower", to=(S.ON_FLOWER,)
                ),
            },
            S.ON_FLOWER: {
                "REQreed": INSERT,
                "ACKreed": STALE,
                "REQflower": on("defer", "_defer"),
                "ACKflower": ignore("late, for this request", "_stale"),
                "RELEASEreed": GONE_DEFERRED,
                "exit": on(
                    "ack deferred; egg; after the last egg RELEASEreed",
                    "_leave_flower",
                    to=(S.ON_REED, S.DEAD),
                ),
            },
            S.DEAD: IGNORED,
            S.RETIRED: IGNORED,
        },
        legend="ack = answer the sender at once, echoing its request's timestamp (req_ts); gone = "
        "whose RELEASEreed arrived (the sender's last message); try reed, try flower: the package's "
        "docstring. Every message is taken in every state; a DEAD or RETIRED bee ignores it unread",
    )
    CONFIG_FIELDS = frozenset({"flowers", "reeds", "eggs", "cocoons", "per_reed"})

    state: BeeState
    final_states = frozenset(FINAL_STATES)
    _own_threshold = True  # ``flower_threshold`` is this class's: ``_try_flower`` may compute it inline

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._own_threshold = cls.flower_threshold is Bee.flower_threshold

    def __init__(
        self, pid: int, n: int, flowers: int, reeds: int, eggs: int = 5, cocoons: int = 15, clock: int = 0
    ) -> None:
        self.pid = pid
        self.n = n
        self.flowers = flowers
        self.reeds = reeds
        self.eggs = eggs
        self.cocoons = cocoons
        self.per_reed = cocoons // eggs
        self.clock = LamportClock(clock)
        self.state = BeeState.REST
        self.alive: set[int] = {j for j in range(1, n + 1) if j != pid}  # others not known gone
        self.requests: dict[int, tuple[int, int]] = {}  # every reed request ever seen: pid → (ts, pid)
        # ``sorted(requests.values())`` and my rank in it, None until needed again after a request
        # arrived (``_ordered``). Speed, the bees' one cache: sorting again on every ACKreed and
        # RELEASEreed that finds the ACKs complete costs ×1.15 the instructions at P = 100, ×1.07 at
        # P = 50 (bench.instructions bees-100, bees-50). Not part of ``snapshot()``.
        self._order: tuple[list[tuple[int, int]], int] | None = None
        self.reed_acks: set[int] = set()  # who acked my reed request (gone bees included)
        # Speed: len(alive - reed_acks) and len(flower_acks & alive), kept as the sets change, so
        # "try reed" and "try flower" need no pass over P entries (``alive <= reed_acks`` on every
        # RELEASEreed was 4% of the run at P = 1000). Derived: not part of ``snapshot()``.
        self._reed_missing = len(self.alive)
        self._flower_live = 0
        self.reed = 0  # my reed while ON_REED/WAIT_FLOWER/ON_FLOWER
        self.reed_eggs: dict[int, int] = {}  # eggs per reed, as RELEASEreed reports them
        self.flower_request: tuple[int, int] | None = None
        self.flower_acks: set[int] = set()  # who acked my current flower request (gone bees included)
        self.deferred: list[tuple[int, int]] = []  # (pid, req_ts) of REQflowers to answer on exit
        self.laid = 0

    def __deepcopy__(self, memo: dict[int, Any]) -> Bee:
        """Speed (the model checker and the explorer copy a process per transition): the
        containers are copied, their contents are immutable and shared. Measured: the generic
        ``Protocol.__deepcopy__`` takes ×4–×8 the time per bee (P = 3 and 10, mid-run)."""
        twin = object.__new__(type(self))
        twin.__dict__.update(self.__dict__)
        twin.clock = LamportClock(self.clock.time)
        twin.alive, twin.reed_acks, twin.flower_acks = (
            set(self.alive),
            set(self.reed_acks),
            set(self.flower_acks),
        )
        twin.requests, twin.reed_eggs = dict(self.requests), dict(self.reed_eggs)
        twin.deferred = list(self.deferred)
        return twin

    # -- helpers -------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return bee_name(self.pid)

    @property
    def gone(self) -> set[int]:
        return {j for j in range(1, self.n + 1) if j != self.pid} - self.alive

    def _broadcast(self, msg: Message) -> list[Effect]:
        return [Send(j, msg) for j in sorted(self.alive)]

    def flower_threshold(self) -> int:
        """ACKflowers needed: the other live bees minus the K − 1 that may be on flowers."""
        return max(0, len(self.alive) - (self.flowers - 1))

    def rank(self) -> int:
        return self._ordered()[1]

    def refuse_local(self, action: str) -> ProtocolError:
        why = LOCAL_RULES.get(action)
        return self.refuse(action, why) if why else self.refuse(f"local action {action!r}", "unknown action")

    def _ordered(self) -> tuple[list[tuple[int, int]], int]:
        """``(sorted(self.requests.values()), my rank)``, sorted again only after a request arrived."""
        if self._order is None:
            order = sorted(self.requests.values())
            self._order = (order, order.index(self.requests[self.pid]))
        return self._order

    def _note_request(self, pid: int, ts: int) -> None:
        self.requests[pid] = priority(ts, pid)
        self._order = None

    def predecessors(self, rank: int, order: list[tuple[int, int]] | None = None) -> list[int]:
        """The bees whose requests come earlier on the same reed (ranks rank − T, rank − 2T ...).
        ``order``: ``sorted(self.requests.values())`` when the caller has it already."""
        if order is None:
            order = sorted(self.requests.values())
        return [order[r][1] for r in range(rank % self.reeds, rank, self.reeds)]

    # -- messages ------------------------------------------------------------------------
    def start(self) -> list[Effect]:
        return [Schedule("request", "rest")]

    def _stale(self, msg: Message) -> list[Effect]:
        self.clock.receive(msg.ts)
        return []

    def _on_reqreed(self, msg: REQreed) -> list[Effect]:
        sender, ts = msg.sender, msg.ts
        self._note_request(sender, ts)  # (reads no clock: the receive and the ACK's tick are one step)
        return [Send(sender, make_ackreed(self.pid, self.clock.answer(ts), ts))]

    def _on_ackreed(self, msg: ACKreed) -> list[Effect]:
        self.clock.receive(msg.ts)
        if msg.req_ts != self.requests[self.pid][0]:
            return []  # stale: for a request of mine that is over
        sender = msg.sender
        if sender not in self.reed_acks:
            self.reed_acks.add(sender)
            if sender in self.alive:
                self._reed_missing -= 1
        return self._try_reed()

    def _ack_reqflower(self, msg: REQflower) -> list[Effect]:
        ts = msg.ts  # the receive and the ACK's tick, as ``_ack_flower`` makes it
        return [Send(msg.sender, make_ackflower(self.pid, self.clock.answer(ts), ts))]

    def _compete(self, msg: REQflower) -> list[Effect]:
        self.clock.receive(msg.ts)
        if expect(self, self.flower_request, "flower request") < priority(msg.ts, msg.sender):
            return self._defer_request(msg)
        return [self._ack_flower(msg.sender, msg.ts)]

    def _defer(self, msg: REQflower) -> list[Effect]:
        self.clock.receive(msg.ts)
        return self._defer_request(msg)

    def _defer_request(self, msg: REQflower) -> list[Effect]:
        self.deferred.append((msg.sender, msg.ts))
        return []

    def _on_ackflower(self, msg: ACKflower) -> list[Effect]:
        self.clock.receive(msg.ts)
        request = self.flower_request  # set in WAIT_FLOWER: ``expect`` names the broken guarantee
        if msg.req_ts != (request if request is not None else expect(self, request, "flower request"))[0]:
            return []  # late: for an earlier flower request
        sender = msg.sender
        if sender not in self.flower_acks:
            self.flower_acks.add(sender)
            if sender in self.alive:
                self._flower_live += 1
        return self._try_flower()

    def _on_gone(self, msg: RELEASEreed) -> list[Effect]:
        """The sender is gone for good: never waited for again; its report of its reed is kept."""
        self.clock.receive(msg.ts)
        sender = msg.sender
        if sender in self.alive:
            self.alive.remove(sender)
            if sender not in self.reed_acks:
                self._reed_missing -= 1
            if sender in self.flower_acks:
                self._flower_live -= 1
        if msg.reed:
            self.reed_eggs[msg.reed] = msg.cocoons
        # Speed: most deferrals are not the sender's; looking first (in C, no frame per entry) spares
        # rebuilding a list of up to P per RELEASEreed (8% of the run at P = 1000, where it grew as P³).
        if self.deferred and sender in map(_deferred_pid, self.deferred):
            self.deferred = [(j, ts) for j, ts in self.deferred if j != sender]
        return []

    def _on_gone_try_reed(self, msg: RELEASEreed) -> list[Effect]:
        return self._on_gone(msg) + self._try_reed()

    def _on_gone_try_flower(self, msg: RELEASEreed) -> list[Effect]:
        return self._on_gone(msg) + self._try_flower()

    # -- reeds ---------------------------------------------------------------------------
    def _ask_reed(self, _action: str = "request") -> list[Effect]:
        ts = self.clock.tick()
        self._note_request(self.pid, ts)
        self.reed_acks = set()
        self._reed_missing = len(self.alive)
        self.state = BeeState.WAIT_REED
        return self._broadcast(REQreed(sender=self.pid, ts=ts)) + self._try_reed()

    def _try_reed(self) -> list[Effect]:
        """In WAIT_REED: "try reed" (package docstring)."""
        if self._reed_missing:  # a live bee has not acked yet (``not alive <= reed_acks``)
            return []
        order, rank = self._ordered()
        reed, turn = rank % self.reeds + 1, rank // self.reeds
        if turn >= self.per_reed:
            return self._retire(reed, rank)
        if any(j in self.alive for j in self.predecessors(rank, order)):
            return []
        self.state = BeeState.ON_REED
        self.reed = reed
        self.reed_eggs[reed] = turn * self.eggs
        return [Enter(reed_name(reed)), Schedule("request", "reed")]

    def _retire(self, reed: int, rank: int) -> list[Effect]:
        self.state = BeeState.RETIRED
        msg = RELEASEreed(sender=self.pid, ts=self.clock.tick(), reed=0, status="NO_ROOM", cocoons=0)
        return [Note("retire", {"rank": rank, "would_be_reed": reed})] + self._broadcast(msg)

    # -- flowers -------------------------------------------------------------------------
    def _ask_flower(self, _action: str = "request") -> list[Effect]:
        ts = self.clock.tick()
        self.flower_request = priority(ts, self.pid)
        self.flower_acks = set()
        self._flower_live = 0
        self.state = BeeState.WAIT_FLOWER
        return self._broadcast(REQflower(sender=self.pid, ts=ts)) + self._try_flower()

    def _try_flower(self) -> list[Effect]:
        """In WAIT_FLOWER: "try flower" — the ACKflowers of bees not gone reach the threshold."""
        # ``flower_threshold()``, computed here unless a subclass overrides it (broken variants in
        # the tests do); without its max(0, …): the live count, never below 0, meets a need of 0
        # and a negative one alike
        need = len(self.alive) - self.flowers + 1 if self._own_threshold else self.flower_threshold()
        if self._flower_live < need:  # ``len(flower_acks & alive) < need``
            return []
        self.state = BeeState.ON_FLOWER
        return [Enter(FLOWER), Schedule("exit", "flower")]

    def _ack_flower(self, to: int, req_ts: int) -> Send:
        return Send(to, make_ackflower(self.pid, self.clock.tick(), req_ts))

    def _leave_flower(self, _action: str = "exit") -> list[Effect]:
        deferred, self.deferred = self.deferred, []
        self.flower_request = None
        self.flower_acks = set()
        self._flower_live = 0
        self.state = BeeState.ON_REED
        pid, tick = self.pid, self.clock.tick  # each deferred ACK as ``_ack_flower`` makes it
        effects: list[Effect] = [
            Exit(FLOWER),
            *[Send(j, make_ackflower(pid, tick(), ts)) for j, ts in deferred],
        ]
        self.laid += 1
        self.reed_eggs[self.reed] = self.reed_eggs.get(self.reed, 0) + 1
        effects.append(
            Note("egg", {"reed": self.reed, "count": self.laid, "in_reed": self.reed_eggs[self.reed]})
        )
        if self.laid < self.eggs:
            return effects + [Schedule("request", "reed")]
        # The last egg: leave the reed and die.
        cocoons = self.reed_eggs[self.reed]
        msg = RELEASEreed(
            sender=self.pid,
            ts=self.clock.tick(),
            reed=self.reed,
            status="FULL" if cocoons >= self.cocoons else "AVAILABLE",
            cocoons=cocoons,
        )
        effects += [Exit(reed_name(self.reed))] + self._broadcast(msg) + [Note("death", {"eggs": self.laid})]
        self.state = BeeState.DEAD
        return effects

    # -- the driver's questions ----------------------------------------------------------
    def wants(self) -> str | None:
        """A reed (any ``reed:i``) from REQreed until it takes one (or retires: no room), a flower
        from REQflower until it lands: what ``check --metrics`` measures a wait for."""
        if self.state is BeeState.WAIT_REED:
            return "reed"
        if self.state is BeeState.WAIT_FLOWER:
            return FLOWER
        return None

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is BeeState.WAIT_REED:
            lacks = {"ACKreed": sorted(self.alive - self.reed_acks)}
            if not lacks["ACKreed"]:
                lacks = {"RELEASEreed": [j for j in self.predecessors(self.rank()) if j in self.alive]}
            return lacks
        if self.state is BeeState.WAIT_FLOWER:
            return {"ACKflower": sorted(self.alive - self.flower_acks)}
        return {}

    def card(self) -> list[tuple[str, str]]:
        live_reed, live_flower = len(self.reed_acks & self.alive), len(self.flower_acks & self.alive)
        return [
            ("reed", "—" if not self.reed else f"reed:{self.reed}"),
            ("eggs laid", f"{self.laid} of {self.eggs}"),
            ("my reed request", fmt(self.requests.get(self.pid))),
            ("ACKreed", f"{counted(self.reed_acks)}; live {live_reed} of {len(self.alive)} needed"),
            ("my flower request", fmt(self.flower_request)),
            (
                "ACKflower",
                f"{counted(self.flower_acks)}; live {live_flower}, needed {self.flower_threshold()}",
            ),
            ("deferred REQflower", fmt([f"{j}@ts{ts}" for j, ts in self.deferred])),
            ("not gone", fmt(self.alive)),
            ("reed requests seen", fmt(sorted(self.requests.values()))),
            ("eggs per reed (from RELEASEreed)", fmt(self.reed_eggs)),
        ]

    def snapshot(self) -> tuple[Any, ...]:
        """The state that decides this bee's future behaviour, and nothing else.

        Two bees with equal snapshots react identically to every input from now on, so exhaustive
        exploration may merge them: the request history and reed ACKs matter only until the bee has
        its reed (its rank is then fixed), the flower request and ACKs only while it waits for a
        flower, the deferred requests only while it competes or sits on a flower, the reeds' egg
        counts never (its own reed's count follows from its rank and its eggs). A gone bee ignores
        everything.
        """
        state = self.state
        if state in FINAL_STATES:
            return (state, self.reed, self.laid)
        common = (state, self.clock.time, frozenset(self.alive), self.reed, self.laid)
        if state is BeeState.REST or state is BeeState.WAIT_REED:
            return common + (frozenset(self.requests.values()), frozenset(self.reed_acks))
        if state is BeeState.WAIT_FLOWER:
            return common + (self.flower_request, frozenset(self.flower_acks), tuple(self.deferred))
        if state is BeeState.ON_FLOWER:
            return common + (tuple(self.deferred),)
        return common
