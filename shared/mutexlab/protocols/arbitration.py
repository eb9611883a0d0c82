"""Arbitration by request sets with INQUIRE / FAILED / YIELD: what Maekawa and Sanders share.

Every node plays two roles. As a *requester* it asks every member of its request set ``asks``
(Maekawa's S_i, Sanders' R_i) for a grant and enters with all of them; on leaving it sends
RELEASE to its inform set ``informs`` (S_i, I_i). As an *arbiter* it keeps a (timestamp,
pid)-ordered ``queue`` of requests and ``lock``, the granted request whose RELEASE it waits for
(Sanders' CSSTAT). It locks only on a request of a process it ``tracks`` (the status set
ST_i = {p_j : p_i ∈ I_j}, the processes that tell it when they leave; in Maekawa everyone who
can ask it): a grant to any other process leaves the lock free, so it may grant again at once.

Arbiter, after every input (``_arbitrate``): while the lock is free, grant the queue's head
(locking when it tracks it); then every queued request later than the lock has been told
FAILED (once), or has yielded this arbiter — so its owner knows it is not first and will YIELD
when inquired; and when an earlier request is queued, one INQUIRE for the lock is on its way or
answered. YIELD gives the lock to an earlier request, so yields cannot go round. FAILED also
goes to a queued request overtaken by a later grant, without which Maekawa can deadlock
(Sanders 1987). A RELEASE or YIELD comes only from the lock's owner, once per grant: anything
else is refused (ProtocolError).

Requester: an INQUIRE of a member whose grant it holds waits until the request is known to
wait anyway (a FAILED came, or it already yielded somewhere), then is answered with YIELD, and
is forgotten on entry: a requester never yields once inside (its RELEASE answers). The grant
answers my current request, once per member, and I enter only with all of them, so none comes
outside WANTED, even when links reorder (each message is sent only after one that needs the
previous). Self-messages are handled locally by the driver.

Invariants: an arbiter is locked on at most one request; a requester holds a grant only for its
current request, and enters only with a grant from every member of ``asks``.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from typing import Any, ClassVar, Literal

from ..clock import priority
from ..machine import Table, ignore, never, on
from ..messages import Message
from ..protocol import Effect, ProtocolError, Send
from .classic import ClassicNode, State, classic_table, expect, node_name

Req = tuple[int, int]  # (timestamp, pid)


class Request(Message):
    type: Literal["REQUEST"] = "REQUEST"


class Release(Message):
    type: Literal["RELEASE"] = "RELEASE"


class Yield(Message):
    type: Literal["YIELD"] = "YIELD"


def arbitration_table(grant: str, asks: str, informs: str, failed: str, inquire: str, stale: str) -> Table:
    """A requester-and-arbiter's table: ``grant`` is the granting message's type; ``asks`` and
    ``informs`` name the sets; ``failed``, ``inquire`` say what WANTED does with a FAILED or an
    INQUIRE; ``stale`` why a FAILED can come outside WANTED."""
    arbiter = {
        "REQUEST": on("queue it; arbitrate (grant, FAILED, INQUIRE)", "_on_request"),
        "RELEASE": on("the lock's owner: free the lock; arbitrate; anyone else: (never)", "_on_release"),
        "YIELD": on(
            "the lock's owner: requeue its request, free the lock; arbitrate; anyone else: (never)",
            "_on_yield",
        ),
    }
    refused = never(f"a {grant} answers my current request, once per member, and I enter with all")
    return classic_table(
        request=f"REQUEST to {asks} → WANTED",
        exit=f"RELEASE to {informs} → RELEASED",
        entered=(State.WANTED,),
        legend="arbitrate = while the lock is free, grant the queue's head (locking on it when tracked); "
        "FAILED once to every queued request later than the lock; one INQUIRE to the lock's owner "
        "when an earlier request is queued",
        rows={
            State.RELEASED: {
                **arbiter,
                grant: refused,
                "FAILED": ignore(stale, "_receive"),
                "INQUIRE": ignore("stale", "_receive"),
            },
            State.WANTED: {
                **arbiter,
                grant: on(f"count; all of {asks} → HELD", "_on_grant", to=(State.HELD,)),
                "FAILED": on(failed, "_on_failed"),
                "INQUIRE": on(inquire, "_on_inquire"),
            },
            State.HELD: {
                **arbiter,
                grant: refused,
                "FAILED": ignore(stale, "_receive"),
                "INQUIRE": ignore("my RELEASE will answer it", "_receive"),
            },
        },
    )


class ArbitratedNode(ClassicNode):
    """A node of Maekawa or Sanders: each names its messages (``GRANT``, ``_failed``,
    ``_inquiry``) and what a FAILED or an INQUIRE of its requester means."""

    GRANT: ClassVar[type[Message]]  # the message of a grant: Maekawa's REPLY, Sanders' GRANT

    def __init__(
        self,
        pid: int,
        n: int,
        asks: Iterable[int],
        informs: Iterable[int],
        tracks: frozenset[int],
        requests: int = 0,
        clock: int = 0,
    ) -> None:
        super().__init__(pid, n, requests, clock)
        self.asks = tuple(sorted(asks))
        self.informs = tuple(sorted(informs))
        self.tracks = tracks
        # requester role
        self.my_request: Req | None = None
        self.grants: set[int] = set()  # members whose grant we hold for my_request
        self.failed: set[int] = set()  # members that sent FAILED and no grant since
        self.yielded: set[int] = set()  # members we yielded to and got no grant from since
        self.inquiries: set[int] = set()  # members whose INQUIRE waits for an answer
        # arbiter role
        self.lock: Req | None = None
        self.queue: list[Req] = []  # sorted: the head is the earliest
        self.inquired = False  # INQUIRE sent for the current lock
        self.told: set[Req] = set()  # queued requests that know they are not first (FAILED or yielded)

    # -- requester ---------------------------------------------------------------------------
    def _request(self) -> list[Effect]:
        ts = self.clock.tick()
        self.my_request = priority(ts, self.pid)
        self.grants, self.failed, self.yielded, self.inquiries = set(), set(), set(), set()
        self.state = State.WANTED
        msg = Request(sender=self.pid, ts=ts)
        return [Send(m, msg) for m in self.asks]

    def _on_grant(self, msg: Message) -> list[Effect]:
        self.clock.receive(msg.ts)
        m = msg.sender
        self.grants.add(m)
        self.failed.discard(m)
        self.yielded.discard(m)
        if self.grants.issuperset(self.asks):
            self.failed, self.yielded, self.inquiries = set(), set(), set()
            return self._enter()
        return []

    def _answer_inquiries(self) -> list[Effect]:
        """YIELD to every pending inquirer once a FAILED came or we already yielded."""
        if not (self.failed or self.yielded) or not self.inquiries:
            return []
        effects: list[Effect] = []
        for m in sorted(self.inquiries):
            self.grants.discard(m)
            self.yielded.add(m)
            effects.append(Send(m, Yield(sender=self.pid, ts=self.clock.tick())))
        self.inquiries = set()
        return effects

    # -- arbiter -----------------------------------------------------------------------------
    def _on_request(self, msg: Request) -> list[Effect]:
        self.clock.receive(msg.ts)
        bisect.insort(self.queue, priority(msg.ts, msg.sender))
        return self._arbitrate()

    def _on_release(self, msg: Release) -> list[Effect]:
        self.clock.receive(msg.ts)
        if self.lock is None or self.lock[1] != msg.sender:
            raise self._stray(msg)
        self.lock = None
        return self._arbitrate()

    def _on_yield(self, msg: Yield) -> list[Effect]:
        self.clock.receive(msg.ts)
        locked = self.lock
        if locked is None or locked[1] != msg.sender:
            raise self._stray(msg)
        self.lock = None
        bisect.insort(self.queue, locked)
        self.told.add(locked)  # the yielder knows it waits
        return self._arbitrate()

    def _stray(self, msg: Release | Yield) -> ProtocolError:
        """A RELEASE or YIELD not from the lock's owner: refused."""
        lock = "free" if self.lock is None else f"held by {node_name(self.lock[1])}"
        return self.refuse(f"{msg.type} from {node_name(msg.sender)}", f"the lock is {lock}")

    def _arbitrate(self) -> list[Effect]:
        effects: list[Effect] = []
        while self.lock is None and self.queue:
            head = self.queue.pop(0)
            self.told.discard(head)
            effects.append(Send(head[1], self.GRANT(sender=self.pid, ts=self.clock.tick())))
            if head[1] in self.tracks:
                self.lock, self.inquired = head, False
        if self.lock is None:
            return effects
        for r in self.queue:
            if r > self.lock and r not in self.told:
                self.told.add(r)
                effects.append(Send(r[1], self._failed(r)))
        if self.queue and self.queue[0] < self.lock and not self.inquired:
            effects += self._inquire()
        return effects

    def _inquire(self) -> list[Effect]:
        self.inquired = True
        lock = expect(self, self.lock, "lock")
        return [Send(lock[1], self._inquiry(lock))]

    def _failed(self, r: Req) -> Message:  # pragma: no cover - interface
        raise NotImplementedError

    def _inquiry(self, lock: Req) -> Message:  # pragma: no cover - interface
        raise NotImplementedError

    # -- observation -------------------------------------------------------------------------
    def waiting_for(self) -> dict[str, list[int]]:
        if self.state is not State.WANTED:
            return {}
        return {self.GRANT.model_fields["type"].default: [m for m in self.asks if m not in self.grants]}

    def snapshot(self) -> tuple[Any, ...]:
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
