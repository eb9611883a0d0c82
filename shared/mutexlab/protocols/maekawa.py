"""Maekawa's quorum algorithm with INQUIRE / FAILED / YIELD (docs/architecture.md#maekawa).

Every node is *requester* (asks its quorum S_i, quorums.py) and *arbiter* (grants one requester
of whose quorum it is a member at a time, the *lock*, queueing the others by (timestamp, pid)):
the arbitration Sanders shares, arbitration.py, here with S_i as request and inform set and a
lock on every grant. The owner is in its own quorum: its messages to itself go through the same
handlers, delivered at once by the driver. REQUEST and RELEASE carry the request's timestamp.
The state table is ``MaekawaNode.TABLE`` (docs/protocols.md).

This is the notes' rule 2 (docs/architecture.md#maekawa) with one addition they leave open:
FAILED also goes to a queued request overtaken by a later grant (their rule only compares a
request with the lock when it arrives).

A FAILED is sent while the request is queued and may be followed by the REPLY for it: on FIFO
links it always arrives first, but with reordering (the simulator's ``--reorder``) it can arrive
once the request has entered or is over; it is ignored then. An arbiter inquires only its
current lock holder, after its REPLY (FIFO), so an INQUIRE that arrives when the sender is not
among the requester's current grants was sent before a RELEASE or YIELD of an earlier grant:
ignored. An INQUIRE that arrives before any FAILED is remembered and answered when a FAILED
arrives (rule 3).
"""

from __future__ import annotations

import math
from typing import Literal

from ..messages import Codec, Message
from ..protocol import Send
from ..setups import Setup
from ..show import attributes, fmt
from ..spec import Figure
from . import quorums as qs
from .arbitration import ArbitratedNode, Release, Req, Request, Yield, arbitration_table
from .classic import State, classic_setup, classic_spec, expect, refuse_unknown, workload_options


class Reply(Message):
    type: Literal["REPLY"] = "REPLY"


class Inquire(Message):
    type: Literal["INQUIRE"] = "INQUIRE"


class Failed(Message):
    type: Literal["FAILED"] = "FAILED"


CODEC = Codec(Request, Reply, Release, Inquire, Failed, Yield)


class MaekawaNode(ArbitratedNode):
    TABLE = arbitration_table(
        "REPLY",
        "S_i",
        "S_i",
        failed="failed += m; answer pending INQUIREs",
        inquire="m not granting: stale, ignore; failed or yielded: YIELD to m; else keep it pending",
        stale="overtaken by its REPLY: links reorder",
    )
    GRANT = Reply
    CONFIG_FIELDS = frozenset({"informs", "tracks"})  # S_i again, and everyone

    def __init__(
        self, pid: int, n: int, quorum: tuple[int, ...], requests: int = 0, clock: int = 0, everyone=None
    ) -> None:
        """``everyone``: the pids 1..n, one frozenset the nodes of a setup share."""
        everyone = frozenset(range(1, n + 1)) if everyone is None else everyone
        super().__init__(pid, n, quorum, quorum, everyone, requests, clock)

    def _release(self) -> list:
        ts, _ = expect(self, self.my_request, "request")
        self.my_request = None
        self.grants = set()
        return [Send(m, Release(sender=self.pid, ts=ts)) for m in self.informs]

    def _on_grant(self, msg: Message) -> list:
        self.inquiries.discard(msg.sender)  # (only a duplicated REPLY finds one)
        return super()._on_grant(msg)

    def _on_failed(self, msg: Failed) -> list:
        self.clock.receive(msg.ts)
        self.failed.add(msg.sender)
        return self._answer_inquiries()

    def _on_inquire(self, msg: Inquire) -> list:
        self.clock.receive(msg.ts)
        if msg.sender not in self.grants:
            return []  # stale
        self.inquiries.add(msg.sender)
        return self._answer_inquiries()

    def _failed(self, r: Req) -> Failed:
        return Failed(sender=self.pid, ts=self.clock.tick())

    def _inquiry(self, lock: Req) -> Inquire:
        return Inquire(sender=self.pid, ts=self.clock.tick())

    @property
    def finished(self) -> bool:
        return super().finished and self.lock is None and not self.queue

    def waiting_for(self) -> dict[str, list[int]]:
        lacks = super().waiting_for()
        if self.state is State.RELEASED and self.lock is not None:
            lacks["RELEASE"] = [self.lock[1]]
        return lacks

    def card(self) -> list[tuple[str, str]]:
        names = "my_request grants failed yielded inquiries lock queue inquired told"
        labels = {"grants": "grants (REPLY)", "yielded": "yielded to", "inquiries": "INQUIRE from"}
        labels |= {"lock": "locked for", "inquired": "INQUIRE sent", "told": "told not first"}
        rows = attributes(self, names, counts=frozenset({"grants"}), **labels)
        return [("quorum", fmt(list(self.asks)))] + rows + super().card()


def make_setup(processes: int, options: dict, seed: int = 0) -> Setup:
    refuse_unknown(options, set(SPEC.options), "maekawa")
    requests, clocks = workload_options(processes, options)
    construction, sets = qs.from_option(options.get("quorums"), processes)
    everyone = frozenset(range(1, processes + 1))
    return classic_setup(
        "maekawa",
        processes,
        requests,
        clocks,
        lambda pid, clock: MaekawaNode(pid, processes, sets[pid], requests, clock, everyone),
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
