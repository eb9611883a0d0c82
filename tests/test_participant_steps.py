"""A participant publishes per step, without a broker: the inputs of one round of its loop go out
as one publish of their protocol messages — routed to the first addressee by its key and to the
others by the ``BCC`` header — then the acks of their deliveries in delivery order; their trace
events wait with the next steps' and go to the monitor as one batch (``audit.<name>``) when it is
due. The bus holds each ack back behind everything published before it, and an ack asked for
``later`` also behind the next publish the participant names (``made``: the batch holding the
delivery's events), so the order of these calls is the invariant "a delivery is acked only after
its effects — its sends and its trace — are on the broker".

The bus is a recorder of the calls the participant makes; everything else is the real
participant, driver and Ricart–Agrawala protocol.
"""

from __future__ import annotations

import io
import json
import re
import time

import pytest

from mutexlab.bus.inbox import Delivery
from mutexlab.bus.wire import envelope
from mutexlab.transport.participant import Participant
from mutexlab.transport.settings import ParticipantSettings
from mutexlab.transport.tracing import unpack_batch

RUN = "steps-test"


class RecordingBus:
    """What the participant asked the bus to do, in order: ("send", key, body, BCC keys) / ("ack",
    tag, later) / ("ack blocked", tag, later) / ("unblock", tag, later) / ("made",) / ("dead", tag)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.reconnects = self.redelivered = self.generation = self.forged = 0
        self.forgeries: list[str] = []
        self.blocked: list = []  # deliveries acked blocked, not yet unblocked
        self.prefetch = 100  # the broker's window of unacked deliveries (Bus.prefetch)
        self.channel = self

    def send(self, routing_key, body, message_id=None, headers=None, **_kw) -> None:
        assert "CC" not in (headers or {}), "addressees by BCC: no receiver decodes them"
        self.calls.append(("send", routing_key, body, (headers or {}).get("BCC", [])))

    def ack(self, delivery, later=False, blocked=False) -> None:
        self.calls.append(("ack blocked" if blocked else "ack", delivery.tag, later))
        if blocked:
            self.blocked.append(delivery)

    def unblock(self, done, later=False) -> None:
        for delivery in [d for d in self.blocked if done(d)]:
            self.blocked.remove(delivery)
            self.calls.append(("unblock", delivery.tag, later))

    def made(self) -> None:
        self.calls.append(("made",))

    def dead_letter(self, delivery, reason, ack=True) -> None:
        # As rabbit.Bus: the dead letter is a publish, then (unless asked already) the delivery's ack.
        self.calls.append(("dead" if ack else "dead, acked already", delivery.tag, reason))
        if ack:
            self.ack(delivery)

    def cancel(self, _queue) -> None:
        pass

    def call(self, action):
        return action(self.channel)

    def queue_declare(self, *_a, **_kw) -> None:
        pass

    def queue_bind(self, *_a, **_kw) -> None:
        pass

    def queue_delete(self, *_a, **_kw) -> None:
        pass


def admitted_node2(trace_flush: float = 60.0) -> Participant:
    """node-2 of a two-node Ricart–Agrawala run that requests nothing, admitted, with a recording bus
    (its trace batch due ``trace_flush`` seconds after its oldest event: by default never in a test)."""
    settings = ParticipantSettings(amqp_url="amqp://127.0.0.1:5672/%2F", run_id=RUN, trace_flush=trace_flush)
    participant = Participant("node", settings)
    participant.bus = RecordingBus()
    participant._welcome(
        {
            "name": "node-2",
            "pid": 2,
            "algorithm": "ricart-agrawala",
            "processes": 2,
            "options": {"requests": 0},
            "seed": 0,
            "start": 0.0,
            "dwell": 0,
        }
    )
    participant.bus.calls.clear()
    return participant


def trace_of(call: tuple) -> dict:
    """The trace batch of a recorded publish, its vector clocks rebuilt as the monitor does."""
    assert call[1].startswith("audit."), call[1]
    body = call[2]
    batch = body if isinstance(body, dict) else json.loads(body)
    assert unpack_batch(batch) is None
    return batch


def messages_of(call: tuple) -> list[dict]:
    """The protocol messages a recorded publish carries (an envelope, or a step frame's entries)."""
    if call[1].split(".")[0] in ("audit", "status"):
        return []
    assert b"\n" not in call[2], "a protocol publish carries no trace"
    data = json.loads(call[2])
    return data.get("msgs", [data])


def routes(calls: list[tuple]) -> list[str]:
    """Where the recorded publishes went: each one's routing key, then its BCC keys."""
    return [key for c in calls if c[0] == "send" for key in [c[1], *c[3]]]


def acks(calls: list[tuple]) -> list[int]:
    return [c[1] for c in calls if c[0] == "ack"]


@pytest.fixture
def node2():
    return admitted_node2()


def request(tag: int, seq: int, ts: int, body: dict | None = None) -> Delivery:
    msg = {"type": "REQUEST", "sender": 1, "ts": ts} if body is None else body
    env = envelope(RUN, f"node-1#{seq}", "node-1", "node-2", seq, {"node-1": seq}, msg)
    return Delivery("q", "REQUEST.node-2", json.dumps(env).encode(), tag, 0, False, {})


def test_the_deliveries_of_one_poll_are_one_publish_of_messages_then_acks_waiting_for_the_batch(node2):
    for tag, seq in ((11, 1), (12, 2), (13, 3)):
        node2._handle(request(tag, seq, ts=seq * 10))
    assert node2.bus.calls == [], "nothing leaves before the step ends"
    node2._publish_step()
    calls = node2.bus.calls
    assert [c[0] for c in calls] == ["send"] + ["ack"] * 3
    assert calls[0][1] == "REPLY.node-1" and calls[0][3] == [], "the replies, to node-1 only"
    sent = messages_of(calls[0])
    assert [(m["to"], m["seq"], m["id"]) for m in sent] == [
        ("node-1", 1, "node-2#1"),
        ("node-1", 2, "node-2#2"),
        ("node-1", 3, "node-2#3"),
    ], "the replies in effect order"
    assert calls[1:] == [("ack", 11, True), ("ack", 12, True), ("ack", 13, True)], (
        "acks in delivery order, each waiting for the batch that will hold its events"
    )
    node2._publish_step()
    assert len(node2.bus.calls) == 4, "an empty step publishes nothing, and the batch is not due yet"
    node2._publish_step(flush=True)
    batch, made = node2.bus.calls[4:]
    assert made == ("made",), "the acks held for it wait for this publish"
    events = trace_of(batch)["events"]
    assert [(e["event"], e.get("id")) for e in events if e["event"] in ("recv", "send")] == [
        ("recv", "node-1#1"),
        ("send", "node-2#1"),
        ("recv", "node-1#2"),
        ("send", "node-2#2"),
        ("recv", "node-1#3"),
        ("send", "node-2#3"),
    ], "every input's events, in the order they happened"
    node2._publish_step(flush=True)
    assert node2.bus.calls[6:] == [("made",)], "nothing waits: no batch"


def test_a_batch_is_due_after_its_bound_when_many_deliveries_wait_and_at_a_status(node2, monkeypatch):
    """The events wait for ``TRACE_FLUSH`` seconds after the oldest of them, or until
    ``MAX_DELIVERIES`` deliveries' acks wait for them, or a status (the heartbeat) goes: the batch
    goes first, and the step's acks then wait only for what was published (not ``later``)."""
    from mutexlab.transport import tracing

    node2._handle(request(21, 1, ts=5))
    node2._publish_step()
    assert routes(node2.bus.calls) == ["REPLY.node-1"]
    node2.trace.since -= node2.trace.bound  # the oldest event has waited the bound
    node2._handle(request(22, 2, ts=6))
    node2._publish_step()
    calls = node2.bus.calls[2:]
    assert [c[:2] for c in calls] == [
        ("send", "audit.node-2"),
        ("made",),
        ("send", "REPLY.node-1"),
        ("ack", 22),
    ]
    assert calls[3] == ("ack", 22, False), "its events are in the batch just sent"
    assert [e.get("id") for e in trace_of(calls[0])["events"] if e["event"] == "recv"] == [
        "node-1#1",
        "node-1#2",
    ]
    node2.bus.calls.clear()
    monkeypatch.setattr(tracing, "MAX_DELIVERIES", 2)
    node2._handle(request(23, 3, ts=7))
    node2._publish_step()
    assert acks(node2.bus.calls) == [23] and "audit.node-2" not in routes(node2.bus.calls)
    node2._handle(request(24, 4, ts=8))
    node2._publish_step()
    assert routes(node2.bus.calls)[1] == "audit.node-2", "two deliveries wait: the batch goes"
    node2.bus.calls.clear()
    node2._handle(request(25, 5, ts=9))
    node2._publish_step()
    node2._status()
    assert routes(node2.bus.calls) == ["REPLY.node-1", "audit.node-2"], "the status rides on the batch"
    assert trace_of(node2.bus.calls[-2])["status"]["kind"] == "status"


def test_with_a_bound_of_zero_every_step_sends_its_batch_first():
    node2 = admitted_node2(trace_flush=0.0)
    node2._handle(request(26, 1, ts=5))
    node2._publish_step()
    assert [c[:2] for c in node2.bus.calls] == [
        ("send", "audit.node-2"),
        ("made",),
        ("send", "REPLY.node-1"),
        ("ack", 26),
    ]


def test_a_duplicate_and_a_bad_message_keep_the_acks_in_delivery_order(node2):
    node2._handle(request(21, 1, ts=5))
    node2._handle(request(22, 1, ts=5))  # redelivered duplicate
    node2._handle(request(23, 2, ts=6, body={"type": "REQUEST", "sender": 1}))  # invalid: no ts
    node2._handle(request(24, 3, ts=7))
    node2._publish_step()
    kinds = [c[:2] for c in node2.bus.calls]
    # The bad message ends the step so far — its batch sent at once, then its publish and the two
    # acks before it — then is dead-lettered and acked behind the dead letter; its status follows.
    assert kinds[:5] == [
        ("send", "audit.node-2"),
        ("made",),
        ("send", "REPLY.node-1"),
        ("ack", 21),
        ("ack", 22),
    ]
    assert kinds[5:7] == [("dead", 23), ("ack", 23)]
    assert kinds[7:9] == [("made",), ("send", "status.node-2")], "the dead letter is counted in a status"
    assert kinds[9:] == [("send", "REPLY.node-1"), ("ack", 24)]
    settled = [c[1] for c in node2.bus.calls if c[0] in ("ack", "dead")]
    assert settled == sorted(settled), "every delivery is settled in delivery order"


def test_a_status_never_runs_ahead_of_the_trace(node2):
    node2._handle(request(31, 1, ts=5))
    node2._status()
    assert routes(node2.bus.calls) == ["audit.node-2", "REPLY.node-1"]
    batch = trace_of(node2.bus.calls[0])
    assert batch["status"]["name"] == "node-2" and batch["events"], "the status goes after its events"
    assert ("ack", 31, False) in node2.bus.calls, "its events went in the batch before it"
    node2._status()
    assert routes(node2.bus.calls)[-1] == "status.node-2", "nothing waits: the status goes alone"


def test_the_heartbeat_rides_on_the_batches_and_the_monitor_hears_it_as_a_status(node2):
    """While batches go, one near the heartbeat (here, with a long ``TRACE_FLUSH``: half a heartbeat
    after the last status) carries a status, so the loop's heartbeat (``HEARTBEAT`` after the last status) never needs a publish of its own; a
    batch sooner carries none. The monitor takes a batch's status as it takes a status message:
    the member's last status, and when it was last heard (a stall report's ``silent_for``)."""
    from mutexlab.trace import TraceWriter
    from mutexlab.transport.feed import AuditFeed
    from mutexlab.transport.view import LiveView

    heartbeat = node2.settings.heartbeat
    node2._status()  # nothing waits: on its own
    assert routes(node2.bus.calls) == ["status.node-2"]
    node2._handle(request(61, 1, ts=5))
    node2._publish_step(flush=True)
    batches = [c for c in node2.bus.calls if c[:2] == ("send", "audit.node-2")]
    assert len(batches) == 1 and "status" not in trace_of(batches[0]), "right after a status: none"
    node2._last_status -= heartbeat / 2  # half a heartbeat since the last status
    node2._handle(request(62, 2, ts=6))
    node2._publish_step(flush=True)
    carried = trace_of([c for c in node2.bus.calls if c[:2] == ("send", "audit.node-2")][-1]).get("status")
    assert carried is not None and carried["name"] == "node-2" and not carried["final"]
    assert time.monotonic() - node2._last_status < heartbeat / 2, "the loop's heartbeat is not due"
    assert routes(node2.bus.calls).count("status.node-2") == 1
    feed = AuditFeed(TraceWriter(None, keep=True), LiveView(io.StringIO()))
    feed.members = ("node-1", "node-2")
    for call in node2.bus.calls:
        if call[0] == "send" and call[1] == "audit.node-2":
            assert feed.batch("node-2", json.loads(call[2])) is None
    assert feed.status["node-2"] == carried
    assert time.monotonic() - feed.heard["node-2"] < 1.0 and not feed.silent_for(1.0)
    node2.trace.bound = 0.1  # a status rides in the last two bounds (0.2 s) of a heartbeat
    node2._handle(request(63, 3, ts=7))
    assert not node2.trace.carries_status(0.79, 1.0) and node2.trace.carries_status(0.8, 1.0)


def test_a_message_ahead_of_a_missing_one_waits_for_it_and_the_acks_stay_in_delivery_order(node2):
    """After a failover the queue can hand a delivery back behind a newer one: seq 2 comes after 3.
    3 waits (its delivery is acked in delivery order with the others) and is handled right after
    2: the replies go out in link order, and nothing is handled twice."""
    node2._handle(request(41, 1, ts=5))
    node2._handle(request(42, 3, ts=7))  # ahead of 2
    node2._handle(request(43, 2, ts=6))  # handed back late
    node2._handle(request(44, 3, ts=7))  # the re-sent copy of 3
    node2._publish_step(flush=True)
    calls = node2.bus.calls
    received = [e["id"] for e in trace_of(calls[0])["events"] if e["event"] == "recv"]
    assert received == ["node-1#1", "node-1#2", "node-1#3"], "handled once each, in link order"
    assert [m["seq"] for c in calls if c[0] == "send" for m in messages_of(c)] == [1, 2, 3]
    assert [c[1] for c in calls if c[0] == "ack"] == [41, 42, 43, 44], "acked in delivery order"
    assert node2.inbox.gaps == 1 and node2.inbox.duplicates == 1


def test_a_held_back_messages_delivery_is_acked_only_once_the_message_is_handled(node2):
    """A message ahead of a missing one lives only in memory: its delivery's ack is blocked (the
    old participant acked it with the others, and a kill then lost it), and unblocked behind the
    step that handled it — its reply sent, its events waiting for their batch (``later``)."""
    node2._handle(request(51, 2, ts=6))  # ahead of 1
    node2._publish_step()
    assert node2.bus.calls == [("ack blocked", 51, False)], "no effects yet; its ack waits"
    node2.bus.calls.clear()
    node2._handle(request(52, 1, ts=5))
    node2._publish_step()
    calls = node2.bus.calls
    assert [m["seq"] for c in calls if c[0] == "send" for m in messages_of(c)] == [1, 2]
    assert [c for c in calls if c[0] != "send"] == [("ack", 52, True), ("unblock", 51, True)]
    assert node2.bus.blocked == [] and node2.inbox.holding() == []


def test_held_back_messages_filling_the_prefetch_window_are_acked_not_blocked(node2):
    """With the broker's window full of blocked deliveries it delivers nothing more, and the
    missing message (queued behind them) would never come: the run stalled. Blocked until the
    window is full, then acked (kept in memory alone)."""
    node2.bus.prefetch = 2
    node2._handle(request(51, 2, ts=6))  # ahead of 1
    node2._publish_step()
    assert node2.bus.calls == [("ack blocked", 51, False)]
    node2._handle(request(52, 3, ts=7))  # the window is full
    node2._publish_step()
    assert node2.bus.calls[1:] == [("ack", 52, False), ("unblock", 51, False)]
    assert node2.bus.blocked == [] and len(node2.inbox.holding()) == 2, "still held, in memory"


def test_a_copy_of_a_held_back_message_blocks_its_own_ack_instead(node2):
    """A copy of a message held back (redelivered after a reconnect, whose old delivery's ack the bus
    skips) is the one the broker still holds: its ack is blocked in turn, the first one's goes."""
    node2._handle(request(51, 2, ts=6))  # ahead of 1
    node2._publish_step()
    node2._handle(request(52, 2, ts=6))  # its copy
    node2._publish_step()
    assert node2.bus.calls == [("ack blocked", 51, False), ("ack blocked", 52, False), ("unblock", 51, False)]
    node2.bus.calls.clear()
    node2._handle(request(53, 1, ts=5))
    node2._publish_step()
    assert [c for c in node2.bus.calls if c[0] != "send"] == [("ack", 53, True), ("unblock", 52, True)]


def step_delivery(tag: int, frame_: dict) -> Delivery:
    return Delivery("q", "REQUEST.node-3", json.dumps(frame_).encode(), tag, 0, False, {})


def test_a_step_frame_carries_a_broadcast_once_and_each_addressee_takes_its_own_messages(node2):
    """A broadcast in one step frame: the message stored once, the vector clock once with the
    sender's own tick per addressee; node-2 takes its two entries, in link order, with their own
    clocks (the recv events merge exactly the clock of each send), and acks the delivery once."""
    from mutexlab.bus.wire import frame

    req = {"type": "REQUEST", "sender": 1, "ts": 4}
    sends = [
        ("node-3", 1, "node-1#1", {"node-1": 1, "node-3": 2}, req),
        ("node-2", 1, "node-1#2", {"node-1": 2, "node-3": 2}, req),
        ("node-2", 2, "node-1#3", {"node-1": 3, "node-3": 2}, {"type": "REQUEST", "sender": 1, "ts": 5}),
    ]
    framed = frame(RUN, "node-1", sends)
    entries = framed["msgs"]
    assert "vc" in entries[0] and "msg" in entries[0]
    assert entries[1] == {"to": "node-2", "seq": 1, "id": "node-1#2", "tick": 2}, "only what differs"
    assert entries[2]["tick"] == 3 and entries[2]["msg"]["ts"] == 5
    node2.roster["node-3"] = 3  # a third member, for the broadcast
    node2._handle(step_delivery(51, framed))
    node2._publish_step(flush=True)
    events = trace_of(node2.bus.calls[0])["events"]
    recvs = [e for e in events if e["event"] == "recv"]
    assert [e["id"] for e in recvs] == ["node-1#2", "node-1#3"]
    assert [e["vc"]["node-1"] for e in recvs] == [2, 3] and all(e["vc"]["node-3"] == 2 for e in recvs)
    assert acks(node2.bus.calls) == [51]


def test_a_step_frame_with_nothing_for_its_queue_or_a_broken_entry_is_dead_lettered(node2):
    """A body routed (by a wrong BCC) to a queue whose process it names no message for, and frames
    whose entries cannot be read, are dead-lettered with the reason; the next message goes on."""
    req = {"type": "REQUEST", "sender": 1, "ts": 4}
    one = {"to": "node-3", "seq": 1, "id": "node-1#1", "vc": {"node-1": 1}, "msg": req}
    bad = {
        61: ({"run": RUN, "from": "node-1", "msgs": [one]}, "addressed to 'node-3', delivered to node-2"),
        62: ({"run": RUN, "from": "node-1", "msgs": []}, "non-empty list"),
        63: (
            {"run": RUN, "from": "node-1", "msgs": [dict(one, to="node-2", vc=None, tick=1)]},
            "vector clock",
        ),
        64: (
            {"run": RUN, "from": "node-1", "msgs": [{"to": "node-2", "seq": 1, "id": "x", "tick": 1}]},
            "none to go by",
        ),
        65: ({"run": RUN, "from": "node-1", "msgs": [dict(one, to="node-2", seq=0)]}, "sequence"),
        66: ({"run": "other", "from": "node-1", "msgs": [one]}, "run 'other'"),
    }
    for tag, (framed, _words) in bad.items():
        node2._handle(step_delivery(tag, framed))
    node2._handle(request(67, 1, ts=5))
    node2._publish_step()
    dead = {c[1]: c[2] for c in node2.bus.calls if c[0] == "dead"}
    assert sorted(dead) == sorted(bad)
    for tag, (_framed, words) in bad.items():
        assert words in dead[tag], dead[tag]
    assert 67 in acks(node2.bus.calls) and node2.dead_letters == len(bad)


def test_an_ack_held_for_a_later_publish_waits_for_it_and_keeps_the_delivery_order():
    """``Outbox``: an ack held ``later`` waits until ``made`` names a publish and that one is
    confirmed; an ack held plainly behind it waits too (one cumulative ack acks all before it).
    Transient delivery holds nothing (the link's acknowledgement waits instead: tracing.py)."""
    from mutexlab.bus.outbox import Outbox, Outgoing

    d1, d2, d = (Delivery("q", "REQUEST.node-2", b"", tag, 0, False, {}) for tag in (1, 2, 3))
    box = Outbox()
    box.add(Outgoing("x", "REPLY.node-1", b"1", None, True))  # tag 1: a step's messages
    box.hold(d1, later=True)
    box.hold(d2)  # a delivery with no events waiting (a duplicate): behind d1 all the same
    box.confirm(1, multiple=False, nack=False)
    assert box.release() == [], "d1's events are in no batch yet"
    box.add(Outgoing("x", "audit.node-2", b"2", None, True))  # tag 2: the batch
    box.made()
    assert box.release() == [], "the batch is not confirmed"
    box.confirm(2, multiple=False, nack=False)
    assert box.release() == [(d2, True)], "both go, as one cumulative ack"
    transient = Outbox()
    transient.hold(d, wait=False, later=True)
    assert transient.release() == [(d, True)]


def test_a_batch_sends_each_clock_after_the_first_as_what_changed_and_the_monitor_rebuilds_it():
    """A broadcast's sends differ only in the sender's own clock entry: sent as that one entry each,
    rebuilt to the very clocks (same entries, same order) by ``unpack_batch``. A batch whose clocks
    do not only grow is sent whole; one whose clocks cannot be rebuilt is refused."""
    from mutexlab.transport.tracing import pack_batch

    clock = {f"bee-{k}": k for k in range(1, 51)}
    events = [{"event": "recv", "pid": "bee-1", "vc": dict(clock)}]
    for k in range(2, 51):
        clock = {**clock, "bee-1": clock["bee-1"] + 1}
        events.append({"event": "send", "pid": "bee-1", "to": f"bee-{k}", "vc": dict(clock)})
    batch = {"events": events, "status": {"state": "HOLDING"}}
    packed = json.loads(json.dumps(pack_batch(batch)))
    assert packed["vc"] == "delta" and all(
        e["vc"] == {"bee-1": e["vc"]["bee-1"]} for e in packed["events"][1:]
    )
    assert len(json.dumps(packed)) * 5 < len(json.dumps(batch)), "a fifth of the bytes, or less"
    assert unpack_batch(packed) is None
    assert packed["events"] == events and [list(e["vc"]) for e in packed["events"]] == [list(clock)] * 50
    shrinking = {"events": [{"vc": {"a": 1, "b": 1}}, {"vc": {"a": 2}}]}
    assert pack_batch(shrinking) is shrinking, "a lost entry cannot be sent as a change"
    assert "vector clock" in unpack_batch({"vc": "delta", "events": [{"vc": {"a": 1}}, {"vc": 3}]})


def test_a_batch_of_narrow_clocks_goes_whole_and_one_of_wide_clocks_as_what_changed():
    """Packing a 5-entry clock (Ricart–Agrawala N = 5) cost the participant and the monitor more CPU
    than the bytes it saved: a batch whose clocks are narrower than ``PACK_FROM`` goes whole; a
    wider one as what changed. The monitor takes both to the very same events."""
    from mutexlab.transport.driving import AuditSink
    from mutexlab.transport.tracing import PACK_FROM, TraceBuffer

    for width, packed in ((5, False), (PACK_FROM - 1, False), (PACK_FROM, True), (50, True)):
        sink, clock = AuditSink(), {f"node-{k}": k for k in range(1, width + 1)}
        events = []
        for k in range(2, 6):
            clock = {**clock, "node-1": clock["node-1"] + 1}
            events.append({"event": "send", "pid": "node-1", "to": f"node-{k}", "vc": dict(clock)})
        for event in events:
            sink.write(event)
        body = TraceBuffer(sink, 0.1).take({"state": "WANTED"}, {})
        assert body is not None
        batch = json.loads(body)
        assert (batch.get("vc") == "delta") is packed, width
        assert all(len(e["vc"]) == (1 if packed and n else width) for n, e in enumerate(batch["events"]))
        assert unpack_batch(batch) is None
        assert batch["events"] == events and batch["status"] == {"state": "WANTED"}


def test_with_transient_delivery_a_message_is_acknowledged_to_its_sender_only_behind_its_batch():
    """Transient delivery acks to the broker at once; what stands for a handled message is then the
    link's acknowledgement to its sender (links.py), which drops its copy. That acknowledgement
    must not leave before the batch recording the receipt: neither in the step frame going back
    nor in a ``link`` message. Once the batch is sent, the next frame back carries it."""
    from mutexlab.bus.links import ACK_EVERY
    from mutexlab.bus.wire import parse_frame

    settings = ParticipantSettings(
        amqp_url="amqp://127.0.0.1:5672/%2F", run_id=RUN, delivery="transient", trace_flush=60.0
    )
    node2 = Participant("node", settings)
    node2.bus = RecordingBus()
    node2._welcome(
        {"name": "node-2", "pid": 2, "algorithm": "ricart-agrawala", "processes": 2}
        | {"options": {"requests": 0}, "seed": 0, "start": 0.0, "dwell": 0}
    )
    node2.bus.calls.clear()
    roster = {"node-1": 1, "node-2": 2}

    def carried(call: tuple) -> dict:
        got: dict = {}
        parse_frame(call[2], RUN, "node-1", roster, got)
        return got

    node2._handle(request(81, 1, ts=5))
    node2._publish_step()
    node2.links.tick(node2.bus, node2.trace.traced, now=ACK_EVERY * 10)
    assert routes(node2.bus.calls) == ["REPLY.node-1"], "no link message"
    assert carried(node2.bus.calls[0]) == {}, "the reply carries no acknowledgement yet"
    node2._handle(request(82, 2, ts=6))
    node2._publish_step(flush=True)
    sent = [c for c in node2.bus.calls if c[0] == "send"]
    assert [c[1] for c in sent] == ["REPLY.node-1", "audit.node-2", "REPLY.node-1"]
    assert carried(sent[2]) == {"node-2": 2}, "behind the batch holding both receipts"


def test_a_finished_process_sends_no_heartbeat_that_repeats_its_last_status(node2):
    """A finished process's heartbeat that would repeat its last status (but for ``t``) is not
    sent: the monitor judges a stall by the trace, and a finished member's 1-s statuses were a
    delivery each while the others worked. One whose status changed since (an input handled: its
    events count) still goes, and an unfinished process heartbeats as ever."""
    assert node2.setup.protocols[node2.pid].finished  # it requests nothing
    node2._status()  # the start's status, on its own
    node2._status(beat=True)
    node2._last_status -= 5.0
    node2._status(beat=True)
    assert routes(node2.bus.calls) == ["status.node-2"], "a repeat of the last status: not sent"
    assert time.monotonic() - node2._last_status < 1.0, "the next heartbeat is a heartbeat away"
    node2._handle(request(61, 1, ts=5))  # a late request: its reply and events, no state change
    node2._publish_step(flush=True)
    node2._status(beat=True)
    assert routes(node2.bus.calls).count("status.node-2") == 2, "its events changed the status"
    node2._status(beat=True)
    assert routes(node2.bus.calls).count("status.node-2") == 2
    told = node2.trace.told
    assert told is not None and told["events"] == node2.audit.recorded
    assert not node2.trace.quiet({**told, "finished": False}), "an unfinished process beats"
    assert not node2.trace.quiet({**told, "timers": 1}), "nor one with a timer pending"
    assert node2.trace.quiet({**told, "t": told["t"] + 9})


def test_a_batch_goes_at_once_when_its_process_finishes_and_so_does_every_one_after():
    """The monitor hears at once that a process finished, and what a finished process does after
    (a reply to a peer still working) goes at once too: a run's end is not held up by the bound."""
    from mutexlab.transport.driving import AuditSink
    from mutexlab.transport.tracing import TraceBuffer

    sink = AuditSink()
    buffer = TraceBuffer(sink, bound=60.0)
    sink.write({"event": "state"})
    assert not buffer.due(0.0, flush=False, changed=True)
    assert buffer.due(0.1, flush=False, changed=True, finished=True)
    buffer.take(None, {})
    sink.write({"event": "state"})
    assert buffer.due(0.2, flush=False, changed=True, finished=True), "finished: at once"
    buffer.take(None, {})
    assert not buffer.due(0.3, flush=False, changed=False, finished=True), "nothing waits"


def test_a_dead_lettered_delivery_is_acked_only_behind_the_batch_of_what_it_did(node2):
    """A frame whose first message is taken (a REQUEST: its recv, the REPLY's send) and whose second
    is refused (a REPLY node-2 never asked for) is dead-lettered whole; what the first did happened.
    Its ack — the bus's, after the dead letter — must come after the batch holding those events, or
    a process killed in between loses events of a delivery the broker has dropped."""
    msgs = [
        {
            "to": "node-2",
            "seq": 1,
            "id": "node-1#1",
            "vc": {"node-1": 1},
            "msg": {"type": "REQUEST", "sender": 1, "ts": 3},
        },
        {
            "to": "node-2",
            "seq": 2,
            "id": "node-1#2",
            "vc": {"node-1": 2},
            "msg": {"type": "REPLY", "sender": 1, "ts": 4},
        },
    ]
    body = json.dumps({"run": RUN, "from": "node-1", "msgs": msgs}).encode()
    node2._handle(Delivery("q", "REQUEST.node-2", body, 7, 0, False, {}))
    node2._publish_step()
    calls = node2.bus.calls
    assert any(c[0].startswith("dead") and c[1] == 7 for c in calls), calls
    batches = [i for i, c in enumerate(calls) if c[0] == "send" and c[1] == "audit.node-2"]
    assert batches, "the events of the taken REQUEST reach the monitor"
    for i, c in enumerate(calls):
        if c[0] == "ack" and c[1] == 7 and not c[2]:  # an ack that waits for nothing but confirms
            assert batches[0] < i, f"delivery 7 acked before the batch of its events: {calls}"


def test_a_step_takes_the_timers_its_timers_made_due_at_once():
    """With a zero dwell the token's holder requests, enters and leaves in one step (its exit, a
    timer the entry set, is due at once): the step takes the timers its own timers made due, one
    round further (``FOLD_ROUNDS``), so a REQUEST after a pass goes in the TOKEN's frame."""
    settings = ParticipantSettings(amqp_url="amqp://127.0.0.1:5672/%2F", run_id=RUN, trace_flush=60.0)
    node = Participant("node", settings)
    node.bus = RecordingBus()
    welcome = {"name": "node-1", "pid": 1, "algorithm": "raymond", "processes": 2, "seed": 0}
    node._welcome(welcome | {"options": {"requests": 2}, "start": 0.0, "dwell": 0})
    node._input(lambda p: p.start())  # its first request, due at once
    node._due_timers()
    proto = node.setup.protocols[1]
    assert (proto.state, proto.requests_left) == ("RELEASED", 1), "requested, entered and left"
    assert len(node.timers) == 1, "the next request waits for the next step"


def test_a_signed_copy_of_a_handled_message_is_dropped_unread_an_unsigned_one_is_read(node2, monkeypatch):
    """A copy of a message its link has handled (sent again by its sender with transient delivery,
    redelivered with persistent) is dropped by its ``seq``. Signed (``Delivery.signed``: its MAC
    is valid, a process of the run made it) it is dropped before its message is decoded, the
    costly part of a delivery that changes nothing; unsigned, what it carries is checked first, so
    a malformed message under a handled ``seq`` is still dead-lettered with its reason."""
    import dataclasses

    codec, decoded = node2.setup.codec, []
    real = codec.decode
    monkeypatch.setattr(codec, "decode", lambda data: decoded.append(data) or real(data))
    broken = {"type": "REQUEST", "sender": 1}  # no ts
    node2._handle(dataclasses.replace(request(71, 1, ts=5), signed=True))
    node2._handle(dataclasses.replace(request(72, 1, ts=5, body=broken), signed=True))  # a signed copy
    assert len(decoded) == 1 and node2.inbox.duplicates == 1, "the signed copy was not decoded"
    node2._handle(dataclasses.replace(request(73, 2, ts=6), signed=True))
    assert len(decoded) == 2, "a signed message not handled yet is decoded"
    node2._handle(request(74, 1, ts=5, body=broken))  # unsigned: read, refused, named
    node2._publish_step()
    dead = {c[1]: c[2] for c in node2.bus.calls if c[0] == "dead"}
    assert list(dead) == [74] and "ts" in dead[74], dead
    assert node2.inbox.duplicates == 1 and node2.dead_letters == 1
    assert [c[1] for c in node2.bus.calls if c[0] == "ack"] == [71, 72, 73, 74], "settled in order"


def test_a_steps_state_lines_are_logged_once_its_publish_is_written():
    """Every state change is logged on a line of its own, ``<name> state <S> lamport <L>``; a line
    takes about 20 µs of a busy host's CPU, three per zero-dwell critical section, so they wait
    for the end of the step: after its publish and a zero-wait turn of the I/O that writes it out
    (the publish that lets the next process enter goes first)."""
    import logging

    order: list[str] = []

    class Conn:  # the bus's connection: the I/O turn that writes the step's publish out
        def process_data_events(self, time_limit: float = 0.0) -> None:
            order.append(f"written within {time_limit}s")

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            order.append(record.getMessage())

    settings = ParticipantSettings(amqp_url="amqp://127.0.0.1:5672/%2F", run_id=RUN, trace_flush=60.0)
    node = Participant("node", settings)
    node.bus = RecordingBus()
    node.bus.send = lambda key, *_a, **_kw: order.append(f"published {key}")  # type: ignore[method-assign]
    node.bus.conn = Conn()
    welcome = {"name": "node-1", "pid": 1, "algorithm": "ricart-agrawala", "processes": 2, "seed": 0}
    node._welcome(welcome | {"options": {"requests": 1}, "start": 0.0, "dwell": 0})
    lines, logger = Lines(), logging.getLogger("mutexlab.participant")
    logger.addHandler(lines)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        node._input(lambda p: p.start())  # its request, due at once
        node._due_timers()
        assert "node-1 state WANTED lamport" not in " ".join(order), "not logged inside the step"
        node._publish_step()
        node.lines.log(node.bus)  # what the participant's loop does at the end of every step
    finally:
        logger.removeHandler(lines)
        logger.setLevel(level)
    assert order[:2] == ["published REQUEST.node-2", "written within 0s"], order
    assert [line.rsplit(" ", 1)[0] for line in order[2:]] == ["node-1 state WANTED lamport"], order


def test_a_steps_state_changes_share_one_line_and_none_is_kept_when_info_is_off():
    """A zero-dwell critical section changes the state three times in one step (``HELD``, then its
    exit and next request): the three are logged on one line, in order, each as ``state S lamport
    L`` (a log record costs a busy host about 20 µs: one instead of three). With the logger above
    INFO nothing is kept and the I/O is not turned for lines nobody would see."""
    import logging

    from mutexlab.transport.driving import StateLines

    turned: list[float] = []

    class Conn:
        def process_data_events(self, time_limit: float = 0.0) -> None:
            turned.append(time_limit)

    class Bus:
        conn = Conn()

    records: list[str] = []

    class Lines(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record.getMessage())

    handler, logger = Lines(), logging.getLogger("mutexlab.participant")
    logger.addHandler(handler)
    level = logger.level
    try:
        logger.setLevel(logging.INFO)
        lines = StateLines()
        for state, lamport in (("HELD", 7), ("RELEASED", 9), ("WANTED", 10)):
            lines.add("node-1", state, lamport)
        lines.log(Bus())
        assert records == ["node-1 state HELD lamport 7, state RELEASED lamport 9, state WANTED lamport 10"]
        assert turned == [0], "the step's publish is written out first"
        records.clear(), turned.clear()
        logger.setLevel(logging.WARNING)
        lines.add("node-1", "HELD", 11)
        assert lines.changes == [], "nothing kept for a line the logger drops"
        lines.log(Bus())
        assert records == [] and turned == [], "and no turn of the I/O for it"
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def test_a_services_log_records_are_spared_what_its_lines_never_show():
    """A service logs ``LOG_FORMAT`` (time, level, message): its records are spared the caller's
    frame, the thread and the process (``spare_log_records``, the logging HOWTO's flags), which
    its lines never show — the same lines, for less CPU (docs/benchmarks.md#state-lines)."""
    import logging
    import os

    from mutexlab.transport import service

    shown = {"asctime", "levelname", "message"}
    assert set(re.findall(r"%\((\w+)\)", service.LOG_FORMAT)) == shown
    lines: list[str] = []
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)
            lines.append(self.format(record))

    handler, logger = Keep(), logging.getLogger("mutexlab.spared")
    formatter = logging.Formatter(service.LOG_FORMAT)
    formatter.formatTime = lambda record, datefmt=None: "T"  # type: ignore[method-assign]
    handler.setFormatter(formatter)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    saved = (logging._srcfile, logging.logThreads, logging.logProcesses, logging.logMultiprocessing)
    # logging's own defaults first: a service run in this process earlier spared them already
    logging._srcfile = os.path.normcase(logging.addLevelName.__code__.co_filename)
    logging.logThreads = logging.logProcesses = logging.logMultiprocessing = True
    try:
        logger.info("%s state %s lamport %d", "node-1", "HELD", 7)
        service.spare_log_records()
        logger.info("%s state %s lamport %d", "node-1", "HELD", 7)
    finally:
        logger.removeHandler(handler)
        logging._srcfile, logging.logThreads, logging.logProcesses, logging.logMultiprocessing = saved
    assert lines == ["T INFO node-1 state HELD lamport 7"] * 2
    assert records[0].funcName != "(unknown function)" and records[0].threadName is not None
    assert records[1].funcName == "(unknown function)" and records[1].threadName is None  # spared
    assert records[1].process is None
