"""A participant publishes per step, without a broker: the inputs of one round of its loop go out
as one trace batch, then their protocol messages, then the acks of their deliveries in delivery
order (the bus holds each ack back behind everything published before it, so the order of these
calls is the invariant "a delivery is acked only after its effects are on the broker").

The bus is a recorder of the calls the participant makes; everything else is the real
participant, driver and Ricart–Agrawala protocol.
"""

from __future__ import annotations

import json

import pytest

from mutexlab.transport.participant import Participant
from mutexlab.transport.rabbit import Delivery, envelope
from mutexlab.transport.settings import ParticipantSettings

RUN = "steps-test"


class RecordingBus:
    """What the participant asked the bus to do, in order: ("send", key, body) / ("ack", tag) / ("dead", tag)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.reconnects = self.redelivered = self.generation = 0
        self.channel = self

    def send(self, routing_key, body, message_id=None, **_kw) -> None:
        self.calls.append(("send", routing_key, body))

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


@pytest.fixture
def node2():
    return admitted_node2()


def request(tag: int, seq: int, ts: int, body: dict | None = None) -> Delivery:
    msg = {"type": "REQUEST", "sender": 1, "ts": ts} if body is None else body
    env = envelope(RUN, f"node-1#{seq}", "node-1", "node-2", seq, {"node-1": seq}, msg)
    return Delivery("q", "REQUEST.node-2", json.dumps(env).encode(), tag, 0, False, {})


def test_the_deliveries_of_one_poll_are_one_step_batch_then_messages_then_acks(node2):
    for tag, seq in ((11, 1), (12, 2), (13, 3)):
        node2._handle(request(tag, seq, ts=seq * 10))
    assert node2.bus.calls == [], "nothing leaves before the step ends"
    node2._publish_step()
    calls = node2.bus.calls
    assert [c[0] for c in calls] == ["send"] * 4 + ["ack"] * 3
    assert calls[0][1] == "audit.node-2", "one trace batch first"
    events = calls[0][2]["events"]
    assert [(e["event"], e.get("id")) for e in events if e["event"] in ("recv", "send")] == [
        ("recv", "node-1#1"),
        ("send", "node-2#1"),
        ("recv", "node-1#2"),
        ("send", "node-2#2"),
        ("recv", "node-1#3"),
        ("send", "node-2#3"),
    ], "every input's events, in the order they happened"
    assert [c[1] for c in calls[1:4]] == ["REPLY.node-1"] * 3
    assert [c[2]["seq"] for c in calls[1:4]] == [1, 2, 3], "the replies in effect order"
    assert [c[1] for c in calls[4:]] == [11, 12, 13], "acks last, in delivery order"
    node2._publish_step()
    assert len(node2.bus.calls) == 7, "an empty step publishes nothing"


def test_a_duplicate_and_a_bad_message_keep_the_acks_in_delivery_order(node2):
    node2._handle(request(21, 1, ts=5))
    node2._handle(request(22, 1, ts=5))  # redelivered duplicate
    node2._handle(request(23, 2, ts=6, body={"type": "REQUEST", "sender": 1}))  # invalid: no ts
    node2._handle(request(24, 3, ts=7))
    node2._publish_step()
    kinds = [(c[0], c[1]) for c in node2.bus.calls]
    # The bad message ends the step so far (its batch, reply and the two acks before it), then is dead-lettered.
    assert kinds[:4] == [("send", "audit.node-2"), ("send", "REPLY.node-1"), ("ack", 21), ("ack", 22)]
    assert kinds[4] == ("dead", 23)
    assert kinds[5] == ("send", "status.node-2"), "the dead letter is counted in a status"
    tail = kinds[6:]
    assert tail == [("send", "audit.node-2"), ("send", "REPLY.node-1"), ("ack", 24)]
    acked = [c[1] for c in node2.bus.calls if c[0] in ("ack", "dead")]
    assert acked == sorted(acked), "every delivery is settled in delivery order"


def test_a_status_never_runs_ahead_of_the_trace(node2):
    node2._handle(request(31, 1, ts=5))
    node2._status()
    keys = [c[1] for c in node2.bus.calls if c[0] == "send"]
    assert keys == ["audit.node-2", "REPLY.node-1", "status.node-2"]


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
    received = [e["id"] for e in calls[0][2]["events"] if e["event"] == "recv"]
    assert received == ["node-1#1", "node-1#2", "node-1#3"], "handled once each, in link order"
    assert [c[2]["seq"] for c in calls if c[0] == "send" and c[1] == "REPLY.node-1"] == [1, 2, 3]
    assert [c[1] for c in calls if c[0] == "ack"] == [41, 42, 43, 44], "acked in delivery order"
    assert node2.inbox.gaps == 1 and node2.inbox.duplicates == 1
