"""K-mutex as a deli counter: take a number, wait to be called, hand the number back.

Node 1 runs the counter besides being a node. A node wanting in sends TAKE; the counter answers
NUMBER(ticket) with the next ticket number, and calls the lowest waiting tickets (CALL(ticket))
while fewer than K tickets are inside. The caller enters with the ticket it was given and leaves
with DONE(ticket). Tickets are never reused, so a CALL for a ticket that is not mine now is
stale and ignored.

The counter's own requests go through the same code: it sends nothing to itself, it just takes
a number. Every message goes through one ``_dispatch`` handler with a ``match`` on the type (I
come from Scala). The node takes ``k`` keyword-only.

Planted bug (a module constant the tests edit):

* LOOSE_COUNT = True: the counter calls the next ticket while ``len(inside) <= k`` — one more
  than there is room for.
"""

from __future__ import annotations

import heapq
from typing import Literal

from mutexlab.protocols.kit import (
    HELD,
    RELEASED,
    WANTED,
    ClassicNode,
    Message,
    Send,
    classic_algorithm,
    classic_table,
    on,
)

NAME = "o18-kmutex-tickets"
COUNTER = 1
LOOSE_COUNT = False


class Take(Message):
    type: Literal["TAKE"] = "TAKE"


class Number(Message):
    type: Literal["NUMBER"] = "NUMBER"
    ticket: int


class Call(Message):
    type: Literal["CALL"] = "CALL"
    ticket: int


class Done(Message):
    type: Literal["DONE"] = "DONE"
    ticket: int


EVERYWHERE = {t: on(f"{t}: see _dispatch", "_dispatch") for t in ("TAKE", "DONE", "NUMBER")}


class DeliNode(ClassicNode):
    TABLE = classic_table(
        request="TAKE a number → WANTED",
        exit="DONE(ticket) → RELEASED",
        rows={
            RELEASED: EVERYWHERE,
            WANTED: {**EVERYWHERE, "CALL": on("called: enter", "_dispatch", to=[HELD])},
            HELD: EVERYWHERE,
        },
        never="a CALL answers my ticket, and I hold one ticket at a time",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, *, k: int) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.ticket: int | None = None  # my ticket while I want in or am inside
        # the counter's (node 1's) book
        self.next_ticket = 1
        self.waiting: list[tuple[int, int]] = []  # heap of (ticket, who)
        self.inside: dict[int, int] = {}  # ticket -> who

    def _msg(self, to: int, model: type[Message], **fields: int) -> Send:
        return Send(to, model(sender=self.pid, ts=self.clock.tick(), **fields))

    # -- the node -----------------------------------------------------------------------------
    def _request(self) -> list:
        self.state = WANTED
        if self.pid == COUNTER:
            return self._hand_out(self.pid)
        return [self._msg(COUNTER, Take)]

    def _release(self) -> list:
        ticket, self.ticket = self.ticket, None
        assert ticket is not None
        return self._back(ticket) if self.pid == COUNTER else [self._msg(COUNTER, Done, ticket=ticket)]

    def _called(self, ticket: int) -> list:
        return self._enter() if self.state == WANTED and ticket == self.ticket else []

    def _dispatch(self, msg: Message) -> list:
        self.clock.receive(msg.ts)
        match msg:
            case Take(sender=who):
                return self._hand_out(who)
            case Done(ticket=ticket):
                return self._back(ticket)
            case Number(ticket=ticket):
                self.ticket = ticket
                return []
            case Call(ticket=ticket):
                return self._called(ticket)
        raise AssertionError(f"no case for {msg.type}")

    # -- the counter ----------------------------------------------------------------------------
    def _room(self) -> bool:
        return len(self.inside) <= self.k if LOOSE_COUNT else len(self.inside) < self.k

    def _hand_out(self, who: int) -> list:
        ticket, self.next_ticket = self.next_ticket, self.next_ticket + 1
        heapq.heappush(self.waiting, (ticket, who))
        out: list = []
        if who == COUNTER:
            self.ticket = ticket
        else:
            out.append(self._msg(who, Number, ticket=ticket))
        return out + self._call_next()

    def _back(self, ticket: int) -> list:
        del self.inside[ticket]
        return self._call_next()

    def _call_next(self) -> list:
        out: list = []
        while self.waiting and self._room():
            ticket, who = heapq.heappop(self.waiting)
            self.inside[ticket] = who
            out += self._called(ticket) if who == COUNTER else [self._msg(who, Call, ticket=ticket)]
        return out

    def waiting_for(self) -> dict[str, list[int]]:
        if self.state != WANTED or self.pid == COUNTER:
            return {}
        return {"CALL": [COUNTER]} if self.ticket is not None else {"NUMBER": [COUNTER]}


SPEC = classic_algorithm(NAME, "k-mutex: a deli counter of tickets at node 1", DeliNode, Take, Number, Call, Done,
                         problem="kmutex")  # fmt: skip
