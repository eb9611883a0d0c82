"""K-mutex with a ticket office: node 1 hands out K seats, the oldest request first.

Written from the user docs only (docs/your-algorithm.md, docs/problems-and-solutions.md).
A node asks node 1 with ASK; node 1 keeps the waiting askers in a heap ordered by (Lamport
timestamp, pid), stamps each seat it grants with a ticket number drawn from an
``itertools.count``, and hands the seat back out when a LEAVE names its ticket. The ticket
travels as a ``typing.NamedTuple`` inside the messages.

Messages per entry: 3 (ASK, SEAT, LEAVE), none for node 1 itself.
"""

from __future__ import annotations

import heapq
import itertools
from typing import Literal, NamedTuple

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

NAME = "o10-heap-tickets"
OFFICE = 1
EXTRA_SEATS = 0  # 1: the office believes it has one seat more than K
TICKETS = "count"  # "shared": every office draws from one counter made at import


class Ticket(NamedTuple):
    number: int
    holder: int


class Ask(Message):
    type: Literal["ASK"] = "ASK"


class Seat(Message):
    type: Literal["SEAT"] = "SEAT"
    ticket: Ticket


class Leave(Message):
    type: Literal["LEAVE"] = "LEAVE"
    ticket: Ticket


_SHARED_COUNTER = itertools.count(1)

OFFICE_ROWS = {
    "ASK": on("office: seat it if a seat is free, else queue it by (ts, pid)", "_on_ask"),
    "LEAVE": on("office: the seat is free again; seat the oldest asker", "_on_leave"),
}


class TicketNode(ClassicNode):
    TABLE = classic_table(
        request="ASK the office → WANTED",
        exit="LEAVE with my ticket → RELEASED",
        rows={
            RELEASED: OFFICE_ROWS,
            WANTED: {**OFFICE_ROWS, "SEAT": on("take the seat", "_on_seat", to=[HELD])},
            HELD: OFFICE_ROWS,
        },
        never="a SEAT answers my one ASK",
    )

    def __init__(self, pid: int, n: int, requests: int = 0, clock: int = 0, k: int = 1) -> None:
        super().__init__(pid, n, requests, clock)
        self.k = k
        self.ticket: Ticket | None = None
        # the office's own
        self.queue: list[tuple[int, int]] = []
        self.seated: dict[int, int] = {}  # ticket number -> holder
        self.numbers = _SHARED_COUNTER if TICKETS == "shared" else itertools.count(1)

    def _request(self) -> list:
        self.state = WANTED
        return [Send(OFFICE, Ask(sender=self.pid, ts=self.clock.tick()))]

    def _on_seat(self, msg: Seat) -> list:
        self.clock.receive(msg.ts)
        self.ticket = msg.ticket
        return self._enter()

    def _release(self) -> list:
        ticket, self.ticket = self.ticket, None
        assert ticket is not None
        return [Send(OFFICE, Leave(sender=self.pid, ts=self.clock.tick(), ticket=ticket))]

    def _on_ask(self, msg: Ask) -> list:
        self.clock.receive(msg.ts)
        heapq.heappush(self.queue, (msg.ts, msg.sender))
        return self._seat_more()

    def _on_leave(self, msg: Leave) -> list:
        self.clock.receive(msg.ts)
        if self.seated.pop(msg.ticket.number, None) != msg.ticket.holder:
            raise ValueError(f"ticket {msg.ticket} was never handed out")
        return self._seat_more()

    def _seat_more(self) -> list:
        out = []
        while self.queue and len(self.seated) < self.k + EXTRA_SEATS:
            _, who = heapq.heappop(self.queue)
            ticket = Ticket(next(self.numbers), who)
            self.seated[ticket.number] = who
            out.append(Send(who, Seat(sender=self.pid, ts=self.clock.tick(), ticket=ticket)))
        return out

    def waiting_for(self) -> dict[str, list[int]]:
        return {"SEAT": [OFFICE]} if self.state == WANTED else {}


SPEC = classic_algorithm(
    NAME,
    "k-mutex: node 1 hands out K seats by ticket, oldest request first (a heap)",
    TicketNode,
    Ask,
    Seat,
    Leave,
    problem="kmutex",
)
