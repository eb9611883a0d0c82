"""A participant publishes per step, without a broker: the inputs of one round of its loop go out
as one publish — their protocol messages and their trace batch in one body, routed to the monitor
by its key and to each addressee by its ``CC`` header — then the acks of their deliveries in
delivery order (the bus holds each ack back behind everything published before it, so the order
of these calls is the invariant "a delivery is acked only after its effects are on the broker").

The bus is a recorder of the calls the participant makes; everything else is the real
participant, driver and Ricart–Agrawala protocol.
"""

from __future__ import annotations

import json

import pytest

from mutexlab.bus.inbox import Delivery
from mutexlab.bus.wire import envelope, split_step, unpack_batch
from mutexlab.transport.participant import Participant
from mutexlab.transport.settings import ParticipantSettings

RUN = "steps-test"


class RecordingBus:
    """What the participant asked the bus to do, in order: ("send", key, body) / ("ack", tag) / ("dead", tag)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.reconnects = self.redelivered = self.generation = self.forged = 0
        self.forgeries: list[str] = []
        self.channel = self

    def send(self, routing_key, body, message_id=None, headers=None, **_kw) -> None:
        self.calls.append(("send", routing_key, body, (headers or {}).get("CC", [])))

    def ack(self, delivery) -> None:
        self.calls.append(("ack", delivery.tag))

    def dead_letter(self, delivery, reason, ack=True) -> None:
        self.calls.append(("dead" if ack else "dead, acked already", delivery.tag, reason))

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


def admitted_node2() -> Participant:
    """node-2 of a two-node Ricart–Agrawala run that requests nothing, admitted, with a recording bus."""
    participant = Participant("node", ParticipantSettings(amqp_url="amqp://127.0.0.1:5672/%2F", run_id=RUN))
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
    body = call[2]
    batch = body if isinstance(body, dict) else json.loads(split_step(body)[1])
    assert unpack_batch(batch) is None
    return batch


def messages_of(call: tuple) -> list[dict]:
    """The protocol messages a recorded publish carries (an envelope, or a step frame's entries)."""
    body = call[2]
    if isinstance(body, dict) or b"\n" not in body:
        return []
    data = json.loads(split_step(body)[0])
    return data.get("msgs", [data])


def routes(calls: list[tuple]) -> list[str]:
    """Where the recorded publishes went: each one's routing key, then its CC keys."""
    return [key for c in calls if c[0] == "send" for key in [c[1], *c[3]]]


@pytest.fixture
def node2():
    return admitted_node2()


def request(tag: int, seq: int, ts: int, body: dict | None = None) -> Delivery:
    msg = {"type": "REQUEST", "sender": 1, "ts": ts} if body is None else body
    env = envelope(RUN, f"node-1#{seq}", "node-1", "node-2", seq, {"node-1": seq}, msg)
    return Delivery("q", "REQUEST.node-2", json.dumps(env).encode(), tag, 0, False, {})


def test_the_deliveries_of_one_poll_are_one_publish_of_batch_and_messages_then_acks(node2):
    for tag, seq in ((11, 1), (12, 2), (13, 3)):
        node2._handle(request(tag, seq, ts=seq * 10))
    assert node2.bus.calls == [], "nothing leaves before the step ends"
    node2._publish_step()
    calls = node2.bus.calls
    assert [c[0] for c in calls] == ["send"] + ["ack"] * 3
    assert calls[0][1] == "audit.node-2" and calls[0][3] == ["REPLY.node-1"], (
        "one publish, to the monitor and node-1"
    )
    events = trace_of(calls[0])["events"]
    assert [(e["event"], e.get("id")) for e in events if e["event"] in ("recv", "send")] == [
        ("recv", "node-1#1"),
        ("send", "node-2#1"),
        ("recv", "node-1#2"),
        ("send", "node-2#2"),
        ("recv", "node-1#3"),
        ("send", "node-2#3"),
    ], "every input's events, in the order they happened"
    sent = messages_of(calls[0])
    assert [(m["to"], m["seq"], m["id"]) for m in sent] == [
        ("node-1", 1, "node-2#1"),
        ("node-1", 2, "node-2#2"),
        ("node-1", 3, "node-2#3"),
    ], "the replies in effect order"
    assert [c[1] for c in calls[1:]] == [11, 12, 13], "acks last, in delivery order"
    node2._publish_step()
    assert len(node2.bus.calls) == 4, "an empty step publishes nothing"


def test_a_duplicate_and_a_bad_message_keep_the_acks_in_delivery_order(node2):
    node2._handle(request(21, 1, ts=5))
    node2._handle(request(22, 1, ts=5))  # redelivered duplicate
    node2._handle(request(23, 2, ts=6, body={"type": "REQUEST", "sender": 1}))  # invalid: no ts
    node2._handle(request(24, 3, ts=7))
    node2._publish_step()
    kinds = [(c[0], c[1]) for c in node2.bus.calls]
    # The bad message ends the step so far (its publish and the two acks before it), then is dead-lettered.
    assert kinds[:3] == [("send", "audit.node-2"), ("ack", 21), ("ack", 22)]
    assert node2.bus.calls[0][3] == ["REPLY.node-1"]
    assert kinds[3] == ("dead", 23)
    assert kinds[4] == ("send", "status.node-2"), "the dead letter is counted in a status"
    tail = kinds[5:]
    assert tail == [("send", "audit.node-2"), ("ack", 24)]
    assert node2.bus.calls[5][3] == ["REPLY.node-1"]
    acked = [c[1] for c in node2.bus.calls if c[0] in ("ack", "dead")]
    assert acked == sorted(acked), "every delivery is settled in delivery order"


def test_a_status_never_runs_ahead_of_the_trace(node2):
    node2._handle(request(31, 1, ts=5))
    node2._status()
    assert routes(node2.bus.calls) == ["audit.node-2", "REPLY.node-1", "status.node-2"]


def test_a_message_ahead_of_a_missing_one_waits_for_it_and_the_acks_stay_in_delivery_order(node2):
    """After a failover the queue can hand a delivery back behind a newer one: seq 2 comes after 3.
    3 waits (its delivery is acked in delivery order with the others) and is handled right after
    2: the replies go out in link order, and nothing is handled twice."""
    node2._handle(request(41, 1, ts=5))
    node2._handle(request(42, 3, ts=7))  # ahead of 2
    node2._handle(request(43, 2, ts=6))  # handed back late
    node2._handle(request(44, 3, ts=7))  # the re-sent copy of 3
    node2._publish_step()
    calls = node2.bus.calls
    received = [e["id"] for e in trace_of(calls[0])["events"] if e["event"] == "recv"]
    assert received == ["node-1#1", "node-1#2", "node-1#3"], "handled once each, in link order"
    assert [m["seq"] for c in calls if c[0] == "send" for m in messages_of(c)] == [1, 2, 3]
    assert [c[1] for c in calls if c[0] == "ack"] == [41, 42, 43, 44], "acked in delivery order"
    assert node2.inbox.gaps == 1 and node2.inbox.duplicates == 1


def step_delivery(tag: int, frame_: dict) -> Delivery:
    return Delivery("q", "audit.node-1", json.dumps(frame_).encode() + b"\n{}", tag, 0, False, {})


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
    node2._publish_step()
    events = trace_of(node2.bus.calls[0])["events"]
    recvs = [e for e in events if e["event"] == "recv"]
    assert [e["id"] for e in recvs] == ["node-1#2", "node-1#3"]
    assert [e["vc"]["node-1"] for e in recvs] == [2, 3] and all(e["vc"]["node-3"] == 2 for e in recvs)
    assert [c for c in node2.bus.calls if c[0] == "ack"] == [("ack", 51)]


def test_a_step_frame_with_nothing_for_its_queue_or_a_broken_entry_is_dead_lettered(node2):
    """A body routed (by a wrong CC) to a queue whose process it names no message for, and frames
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
    assert ("ack", 67) in node2.bus.calls and node2.dead_letters == len(bad)


def test_a_batch_too_heavy_to_copy_to_every_addressee_goes_alone_to_the_monitor_first(node2, monkeypatch):
    """When the trace batch, copied to each addressee, would weigh more than ``INLINE_TRACE``, the
    step is two publishes: the batch to the monitor, then the messages, routed by their first key
    and the CC header (the monitor still hears of each send before anyone can receive it)."""
    from mutexlab.transport import participant as module

    monkeypatch.setattr(module, "INLINE_TRACE", 0)
    node2._handle(request(71, 1, ts=5))
    node2._publish_step()
    calls = node2.bus.calls
    assert [(c[0], c[1]) for c in calls] == [("send", "audit.node-2"), ("send", "REPLY.node-1"), ("ack", 71)]
    assert [e["event"] for e in trace_of(calls[0])["events"]][:2] == ["recv", "send"]
    assert b"\n" not in calls[0][2] and b"\n" not in calls[1][2], "each part alone"
    assert json.loads(calls[1][2])["seq"] == 1 and calls[1][3] == []


def test_a_batch_sends_each_clock_after_the_first_as_what_changed_and_the_monitor_rebuilds_it():
    """A broadcast's sends differ only in the sender's own clock entry: sent as that one entry each,
    rebuilt to the very clocks (same entries, same order) by ``unpack_batch``. A batch whose clocks
    do not only grow is sent whole; one whose clocks cannot be rebuilt is refused."""
    from mutexlab.bus.wire import pack_batch

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
