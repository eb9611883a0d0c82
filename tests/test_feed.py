"""The monitor's audit feed decides "every sent message was received" whatever order the
participants' batches arrive in: after a broker failover a sender's re-published batch (its
``send``) can come after its addressee's batch (the ``recv``)."""

from __future__ import annotations

import io

from mutexlab.trace import TraceWriter
from mutexlab.transport.feed import AuditFeed
from mutexlab.transport.view import LiveView


def event(kind: str, pid: str, own: int, **fields) -> dict:
    return {"event": kind, "pid": pid, "t": 0.0, "lamport": own, "vc": {pid: own}, **fields}


def feed_of(order: list[tuple[str, dict]]) -> AuditFeed:
    feed = AuditFeed(TraceWriter(None, keep=True), LiveView(io.StringIO()))
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


def test_a_batch_ahead_of_an_earlier_batch_of_its_process_waits_for_it():
    """A process's batches can reach the monitor out of order after a failover (a publish refused
    by a quorum queue without a leader and re-sent after the next one was taken; a consumer's
    unacked deliveries handed back behind newer ones). Each of its events ticks its own vector
    entry once, from 1: a batch that starts beyond the next entry waits until the missing events
    come, then follows them. Nothing is dropped but true copies (the old filter, "not above the
    last entry seen", wrote 2-3 and dropped 1 as a copy)."""
    first = {"events": [event("send", "node-1", 1, id="node-1#1", to="node-2", type="REQUEST")]}
    second = {
        "events": [event("state", "node-1", 2, state="WAIT"), event("enter", "node-1", 3, resource="cs")],
        "status": {"finished": True, "timers": 0},
    }
    feed = feed_of([])
    feed.report("node-2", {"finished": True, "timers": 0})
    feed.batch("node-1", second)
    assert feed.trace.kept == [] and feed.duplicates == 0
    assert not feed.complete(["node-1", "node-2"]), "events of node-1 are missing"
    assert feed.stalled(["node-1", "node-2"])["node-1"]["missing_events"] == 1
    feed.batch("node-1", first)
    assert [e["vc"]["node-1"] for e in feed.trace.kept] == [1, 2, 3]
    feed.batch("node-1", second)  # a true copy (the sender re-sends from the refused batch on)
    assert feed.duplicates == 2 and len(feed.trace.kept) == 3
    feed.report("node-1", {"finished": True, "timers": 0})
    feed.event("node-2", event("recv", "node-2", 1, id="node-1#1", **{"from": "node-1"}, type="REQUEST"))
    assert feed.complete(["node-1", "node-2"])


def test_a_finished_status_that_overtook_the_last_batch_does_not_complete_the_run():
    """A status says how many trace events its process had recorded; after a failover it can
    arrive before the batch that holds the last of them (a publish refused and re-sent, a
    delivery handed back behind newer ones). The process is done only once they are all heard."""
    feed = feed_of([])
    feed.report("node-2", {"finished": True, "timers": 0, "events": 0})
    feed.batch("node-1", {"events": [event("state", "node-1", 1, state="WANT")]})
    feed.report("node-1", {"finished": True, "timers": 0, "events": 2})
    assert not feed.complete(["node-1", "node-2"]), "node-1's second event is not in the trace yet"
    feed.batch("node-1", {"events": [event("state", "node-1", 2, state="DONE")]})
    assert feed.complete(["node-1", "node-2"])
