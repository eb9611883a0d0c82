"""End-to-end retransmission's bookkeeping (transport/links.py), without a broker: what a sender
keeps and sends again, what a receiver refuses after a gap, and when the monitor's feed is behind."""

from __future__ import annotations

import io

import pytest

from mutexlab.trace import TraceWriter
from mutexlab.transport.feed import AuditFeed
from mutexlab.transport.links import LINK_RETRY, LinkOutbox, TraceKept, link_message, parse_link
from mutexlab.transport.rabbit import LinkInbox
from mutexlab.transport.view import Progress


def test_the_outbox_keeps_each_message_until_acknowledged_and_sends_the_rest_again_in_order():
    out = LinkOutbox()
    for seq in (1, 2, 3):
        out.keep("node-2", seq, "REQUEST.node-2", {"seq": seq}, f"node-1#{seq}", now=0.0)
    out.ack("node-2", 1, now=0.5)
    assert [m[0] for m in out.kept["node-2"]] == [2, 3]
    assert [m[0] for m in out.above("node-2", 2, now=0.6)] == [3], "what the addressee lacks, nothing else"
    assert out.retransmitted == 1
    out.ack("node-2", 0, now=0.7)  # an old acknowledgement takes nothing back
    assert [m[0] for m in out.kept["node-2"]] == [3]


def test_a_link_without_acknowledgement_is_overdue_once_per_retry_and_less_often_while_nothing_is_lost():
    out = LinkOutbox()
    out.keep("node-2", 1, "TOKEN.node-2", {}, "node-1#1", now=0.0)
    assert out.overdue(now=1.0) == []
    assert out.overdue(now=LINK_RETRY) == ["node-2"]
    assert out.overdue(now=LINK_RETRY + 1) == [], "asked: not again before another LINK_RETRY"
    out.keep("node-2", 2, "TOKEN.node-2", {}, "node-1#2", now=LINK_RETRY + 1)  # sent after the question
    assert out.answered("node-2", 1, 1, now=LINK_RETRY + 2) == [], "2 may be on its way: not sent again"
    assert out.retry["node-2"] == 2 * LINK_RETRY, "nothing was lost: wait twice as long"
    assert out.overdue(now=LINK_RETRY + 3 + LINK_RETRY) == []
    assert out.overdue(now=LINK_RETRY + 2 + 2 * LINK_RETRY) == ["node-2"]
    assert [m[0] for m in out.answered("node-2", 1, 2, now=20.0)] == [2], (
        "sent before the question, not received"
    )
    assert out.retry["node-2"] == LINK_RETRY
    out.ack("node-2", 2, now=21.0)
    assert out.overdue(now=99.0) == [], "nothing kept, nothing to ask"


def test_with_refused_gaps_a_message_after_a_gap_waits_for_the_missing_one():
    inbox = LinkInbox(refuse_gaps=True)
    assert inbox.accept("node-1", 1)
    assert not inbox.accept("node-1", 3) and inbox.gaps == 1, "2 is missing: 3 is refused"
    assert inbox.accept("node-1", 2) and inbox.accept("node-1", 3), "sent again, in order"
    assert not inbox.accept("node-1", 3) and inbox.duplicates == 1


def test_a_gap_made_of_dead_lettered_messages_is_not_waited_for():
    inbox = LinkInbox(refuse_gaps=True)
    assert inbox.accept("node-1", 1)
    inbox.dead_lettered("node-1", 2)  # a bad message: it would be bad again if sent again
    assert inbox.accept("node-1", 3) and inbox.gaps == 0
    assert not inbox.accept("node-1", 5), "4 was not dead-lettered: waited for"


def test_link_messages_are_checked():
    roster = {"node-1": 1, "node-2": 2}
    assert parse_link(link_message("r", "node-1", 4, 2, True), "r", roster) == ("node-1", 4, 2, True, False)
    assert parse_link(link_message("r", "node-1", 4, 2, True, resend=True), "r", roster)[4]
    for bad, words in (
        (link_message("other", "node-1", 4, 0, True), "run"),
        (link_message("r", "node-9", 4, 0, True), "not a member"),
        (link_message("r", "node-1", -1, 0, True), "received"),
        ({**link_message("r", "node-1", 1, 0, True), "ask": "yes"}, "ask"),
        ({**link_message("r", "node-1", 1, 0, True), "sent": None}, "sent"),
    ):
        with pytest.raises(ValueError, match=words):
            parse_link(bad, "r", roster)


def test_kept_trace_events_are_dropped_once_the_monitor_has_them():
    kept = TraceKept()
    kept.published([{"event": "state", "pid": "node-1", "vc": {"node-1": n}} for n in (1, 2, 3)])
    assert [TraceKept.own(e) for e in kept.above(1)] == [2, 3]
    kept.acked(3)
    assert kept.above(3) == []


def _event(pid: str, own: int) -> dict:
    return {"event": "state", "pid": pid, "t": 0.0, "lamport": own, "vc": {pid: own}, "state": "X"}


def test_the_feed_is_behind_after_a_lost_batch_until_the_events_come_again():
    feed = AuditFeed(TraceWriter(None, keep=True), Progress(io.StringIO()))
    feed.members = ("node-1",)
    feed.report("node-1", {"state": "X", "finished": True, "timers": 0, "recorded": 0})
    feed.event("node-1", _event("node-1", 1))
    feed.event("node-1", _event("node-1", 3))  # 2 was lost: 3 is not written
    assert feed.behind() == ["node-1"] and not feed.complete(["node-1"])
    assert [e["vc"]["node-1"] for e in feed.trace.kept] == [1]
    for own in (2, 3):  # sent again
        feed.event("node-1", _event("node-1", own))
    assert feed.behind() == [] and feed.complete(["node-1"])
    feed.report("node-1", {"state": "X", "finished": True, "timers": 0, "recorded": 4})
    assert feed.behind() == ["node-1"], "its status says it recorded an event the feed never got"
