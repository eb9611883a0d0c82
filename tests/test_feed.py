"""The monitor's audit feed decides "every sent message was received" whatever order the
participants' batches arrive in: after a broker failover a sender's re-published batch (its
``send``) can come after its addressee's batch (the ``recv``)."""

from __future__ import annotations

import io

from mutexlab.trace import TraceWriter
from mutexlab.transport.feed import AuditFeed
from mutexlab.transport.view import Progress


def event(kind: str, pid: str, own: int, **fields) -> dict:
    return {"event": kind, "pid": pid, "t": 0.0, "lamport": own, "vc": {pid: own}, **fields}


def feed_of(order: list[tuple[str, dict]]) -> AuditFeed:
    feed = AuditFeed(TraceWriter(None, keep=True), Progress(io.StringIO()))
    feed.members = ("node-1", "node-2")
    for name, e in order:
        feed.event(name, e)
    return feed


def test_a_receipt_heard_before_its_send_still_settles_the_message():
    send = ("node-1", event("send", "node-1", 1, id="node-1#1", to="node-2", type="REQUEST"))
    recv = ("node-2", event("recv", "node-2", 1, id="node-1#1", **{"from": "node-1"}, type="REQUEST"))
    for order in ([send, recv], [recv, send]):
        feed = feed_of(order)
        assert feed.sent == {} and not feed.received_early, order
        assert len(feed.trace.kept) == 2


def test_a_send_never_received_stays_outstanding():
    feed = feed_of([("node-1", event("send", "node-1", 1, id="node-1#1", to="node-2", type="REQUEST"))])
    assert feed.sent == {"node-1#1": "node-2"}
