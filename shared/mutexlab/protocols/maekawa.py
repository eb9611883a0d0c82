"""Maekawa's quorum algorithm with INQUIRE / FAILED / YIELD (docs/architecture.md#maekawa).

Every node plays two roles: *requester* (asks its quorum S_i, quorums.py) and *arbiter* (grants
one requester of whose quorum it is a member at a time, the *lock*, queueing the others by
(timestamp, pid)). The owner is in its own quorum: its messages to itself go through the same
handlers, delivered at once by the driver. REQUEST and RELEASE carry the request's timestamp.

Requester (state × input → action):

| state    | request (local)         | REPLY from m          | FAILED from m       | INQUIRE from m                   | exit (local)              |
|----------|-------------------------|-----------------------|---------------------|----------------------------------|---------------------------|
| RELEASED | REQUEST to S_i → WANTED | (never)               | ignore (reordered)  | stale: ignore                    | error                     |
| WANTED   | error                   | grant; all S_i → HELD | failed += m; answer | m not granting: stale, ignore;   | error                     |
|          |                         |                       |   pending INQ       |   failed or yielded: YIELD to m; |                           |
|          |                         |                       |                     |   else keep pending              |                           |
| HELD     | error                   | (never)               | ignore (reordered)  | ignore (RELEASE follows)         | RELEASE to S_i → RELEASED |

Arbiter (lock × input → action; after each input ``settle`` restores the arbiter invariant):

| lock      | REQUEST r       | RELEASE from j              | YIELD from j                        |
|-----------|-----------------|-----------------------------|-------------------------------------|
| free      | lock = r; REPLY | (never)                     | (never)                             |
| held by k | queue r; settle | j = k: lock = free; settle; | j = k: queue k's request again;     |
|           |                 |   else (never)              |   lock = free; settle; else (never) |

"(never)" inputs are refused (ProtocolError). A REPLY answers my current request and comes
once per member, so none arrives outside WANTED; RELEASE and YIELD come only from the lock
holder, each once per grant — all even when links reorder, because each one is sent only
after a message that needs the previous one. A FAILED, though, is sent while the request is
queued and may be followed by the REPLY for it: on FIFO links it always arrives first, but
with reordering (the simulator's ``--reorder``) it can arrive once the request has entered or
is over; it is ignored then, as the table says.

``settle``: a free lock goes to the head of the queue (REPLY); every queued request later than
the lock that has not yet been told gets FAILED (once); if the queue's head precedes the lock,
the lock holder gets one INQUIRE per grant.

Invariants:
* an arbiter grants at most one request at a time, so two quorums' intersection keeps mutual
  exclusion; a requester enters only with a REPLY from every member of S_i;
* (arbiter) every queued request later than the lock has been sent FAILED, or has yielded
  this arbiter — so its owner knows it is not first and will YIELD when inquired;
* (arbiter) when the queue's head precedes the lock, an INQUIRE for the lock is on its way
  or has been answered; YIELD gives the lock to an earlier request, so yields cannot go round.
This is the notes' rule 2 (docs/architecture.md#maekawa) with one addition they leave open: FAILED also
goes to a queued request overtaken by a later grant (their rule only compares a request with the
lock when it arrives), without which Maekawa can deadlock (Sanders 1987).

Stale INQUIREs: an arbiter inquires only its current lock holder, after its REPLY (FIFO), so an
INQUIRE that arrives when the sender is not among the requester's current grants was sent
before a RELEASE or YIELD of an earlier grant: ignored. An INQUIRE that arrives before any
FAILED is remembered and answered when a FAILED arrives (rule 3), and forgotten on entry.
"""

from __future__ import annotations

import bisect
import math
from typing import Literal

from ..clock import priority
from ..messages import Codec, Message
from ..protocol import Send
from ..setup import Setup
from ..show import attributes, fmt
from ..spec import Figure
from . import quorums as qs
from .classic import (
    RELEASED,
    WANTED,
    ClassicNode,
    classic_setup,
    classic_spec,
    expect,
    node_name,
    refuse_unknown,
    workload_options,
)


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Reply(Message):
    type: Literal["REPLY"] = "REPLY"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


class Inquire(Message):
    type: Literal["INQUIRE"] = "INQUIRE"


class Failed(Message):
    type: Literal["FAILED"] = "FAILED"


class Yield(Message):
    type: Literal["YIELD"] = "YIELD"


CODEC = Codec(Request, Reply, Release, Inquire, Failed, Yield)

Req = tuple[int, int]  # (timestamp, pid)


class MaekawaNode(ClassicNode):
    def __init__(self, pid: int, n: int, quorum: tuple[int, ...], requests: int = 0, clock: int = 0) -> None:
        super().__init__(pid, n, requests, clock)
        self.quorum = tuple(sorted(quorum))
        # requester role
        self.my_request: Req | None = None
        self.grants: set[int] = set()  # members whose REPLY we hold for my_request
        self.failed: set[int] = set()  # members that sent FAILED and no REPLY since
        self.yielded: set[int] = set()  # members we yielded to and got no REPLY from since
        self.inquiries: set[int] = set()  # members whose INQUIRE waits for an answer
        # arbiter role
        self.lock: Req | None = None
        self.queue: list[Req] = []  # sorted
        self.inquired = False  # INQUIRE sent for the current lock
        self.told: set[Req] = set()  # queued requests that know they are not first (FAILED or yielded)

    # -- requester ---------------------------------------------------------------------
    def _request(self) -> list:
        ts = self.clock.tick()
        self.my_request = priority(ts, self.pid)
        self.grants, self.failed, self.yielded, self.inquiries = set(), set(), set(), set()
        self.state = WANTED
        msg = Request(sender=self.pid, ts=ts)
        return [Send(m, msg) for m in self.quorum]

    def _release(self) -> list:
        ts, _ = expect(self, self.my_request, "request")
        self.my_request = None
        self.grants = set()
        return [Send(m, Release(sender=self.pid, ts=ts)) for m in self.quorum]

    def _on_reply(self, m: int) -> list:
        if self.state is not WANTED:
            raise self.refuse(f"REPLY from {node_name(m)}")
        self.grants.add(m)
        self.failed.discard(m)
        self.yielded.discard(m)
        self.inquiries.discard(m)
        if self.grants.issuperset(self.quorum):
            self.failed, self.yielded, self.inquiries = set(), set(), set()
            return self._enter()
        return []

    def _on_failed(self, m: int) -> list:
        if self.state is not WANTED:
            return []  # overtaken by the REPLY that followed it: only when links reorder
        self.failed.add(m)
        return self._answer_inquiries()

    def _on_inquire(self, m: int) -> list:
        if self.state is not WANTED or m not in self.grants:
            return []  # HELD: our RELEASE answers it; not granting: stale
        self.inquiries.add(m)
        return self._answer_inquiries()

    def _answer_inquiries(self) -> list:
        """Rule 3: YIELD to pending inquirers once a FAILED arrived or we already yielded."""
        if not (self.failed or self.yielded) or not self.inquiries:
            return []
        effects = []
        for m in sorted(self.inquiries):
            self.grants.discard(m)
            self.yielded.add(m)
            effects.append(Send(m, Yield(sender=self.pid, ts=self.clock.tick())))
        self.inquiries = set()
        return effects

    # -- arbiter -----------------------------------------------------------------------
    def _on_request(self, r: Req) -> list:
        bisect.insort(self.queue, r)
        return self._settle()

    def _on_release(self, k: int) -> list:
        if self.lock is None or self.lock[1] != k:
            raise self.refuse(f"RELEASE from {node_name(k)}", f"the lock is {self._lock_text()}")
        self.lock = None
        return self._settle()

    def _on_yield(self, k: int) -> list:
        if self.lock is None or self.lock[1] != k:
            raise self.refuse(f"YIELD from {node_name(k)}", f"the lock is {self._lock_text()}")
        bisect.insort(self.queue, self.lock)
        self.told.add(self.lock)
        self.lock = None
        return self._settle()

    def _settle(self) -> list:
        effects = []
        if self.lock is None and self.queue:
            self.lock = self.queue.pop(0)
            self.told.discard(self.lock)
            self.inquired = False
            effects.append(Send(self.lock[1], Reply(sender=self.pid, ts=self.clock.tick())))
        if self.lock is None:
            return effects
        for r in self.queue:
            if r > self.lock and r not in self.told:
                self.told.add(r)
                effects.append(Send(r[1], Failed(sender=self.pid, ts=self.clock.tick())))
        if self.queue and self.queue[0] < self.lock and not self.inquired:
            effects += self._inquire()
        return effects

    def _inquire(self) -> list:
        self.inquired = True
        return [Send(expect(self, self.lock, "lock")[1], Inquire(sender=self.pid, ts=self.clock.tick()))]

    def _lock_text(self) -> str:
        return "free" if self.lock is None else f"held by {node_name(self.lock[1])}"

    # -- dispatch ----------------------------------------------------------------------
    def on_message(self, msg) -> list:
        self.clock.receive(msg.ts)
        match msg.type:  # by the type tag (protocol.py: dispatch)
            case "REQUEST":  # arbiter
                return self._on_request(priority(msg.ts, msg.sender))
            case "REPLY":  # requester
                return self._on_reply(msg.sender)
            case "RELEASE":  # arbiter
                return self._on_release(msg.sender)
            case "FAILED":  # requester
                return self._on_failed(msg.sender)
            case "INQUIRE":  # requester
                return self._on_inquire(msg.sender)
            case "YIELD":  # arbiter
                return self._on_yield(msg.sender)
            case _:
                raise self.refuse(msg)

    # -- observation -------------------------------------------------------------------
    @property
    def finished(self) -> bool:
        return super().finished and self.lock is None and not self.queue

    def waiting_for(self) -> dict[str, list[int]]:
        lacks = {}
        if self.state is WANTED:
            lacks["REPLY"] = [m for m in self.quorum if m not in self.grants]
        if self.state is RELEASED and self.lock is not None:
            lacks["RELEASE"] = [self.lock[1]]
        return lacks

    def card(self) -> list[tuple[str, str]]:
        names = "my_request grants failed yielded inquiries lock queue inquired told"
        labels = {"grants": "grants (REPLY)", "yielded": "yielded to", "inquiries": "INQUIRE from"}
        labels |= {"lock": "locked for", "inquired": "INQUIRE sent", "told": "told not first"}
        rows = attributes(self, names, counts=frozenset({"grants"}), **labels)
        return [("quorum", fmt(list(self.quorum)))] + rows + super().card()

    def snapshot(self):
        return (
            self.state,
            self.clock.time,
            self.requests_left,
            self.my_request,
            frozenset(self.grants),
            frozenset(self.failed),
            frozenset(self.yielded),
            frozenset(self.inquiries),
            self.lock,
            tuple(self.queue),
            self.inquired,
            frozenset(self.told),
        )


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    refuse_unknown(options, set(SPEC.options), "maekawa")
    requests, clocks = workload_options(processes, options)
    construction, sets = qs.from_option(options.get("quorums"), processes)
    return classic_setup(
        "maekawa",
        processes,
        requests,
        clocks,
        lambda pid, clock: MaekawaNode(pid, processes, sets[pid], requests, clock),
        CODEC,
        quorums=construction,
        quorum_sets={str(p): list(s) for p, s in sets.items()},
    )


SPEC = classic_spec(
    "maekawa",
    "Maekawa: permission from a quorum, with INQUIRE / FAILED / YIELD against deadlock",
    make_setup,
    CODEC,
    {
        "messages": Figure("3√N to 5√N", lambda n, p: (3 * math.sqrt(n), 5 * math.sqrt(n))),
        "sync": Figure("2T", lambda n, p: (2, 2)),
    },
    quorums="quorum construction (grid, ...) or explicit sets pid → [pids]",
)
