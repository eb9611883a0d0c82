"""The RabbitMQ transport: confirms, persistence, duplicates, dead letters, isolation, reconnection.

A participant (node-2 of a 2-node Ricart–Agrawala run) runs in a thread of the test; the test
plays node-1 and the monitor by publishing envelopes and reading queues itself.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

import pika
import pytest
from conftest import signed

from mutexlab.bus.amqp import Connection, TransportError
from mutexlab.bus.inbox import LinkInbox
from mutexlab.bus.rabbit import Bus
from mutexlab.bus.topology import Topology, delete_run
from mutexlab.bus.wire import (
    MAX_BODY,
    EnvelopeError,
    envelope,
    parse_frame,
    split_step,
)
from mutexlab.protocols.registry import build_setup
from mutexlab.transport.monitor import Monitor
from mutexlab.transport.participant import Participant
from mutexlab.transport.settings import MonitorSettings, ParticipantSettings
from mutexlab.transport.tracing import unpack_batch

pytestmark = pytest.mark.broker
NAMES = ["node-1", "node-2"]


# -- pure parts ---------------------------------------------------------------------------
def test_link_inbox_drops_duplicates_and_counts_gaps():
    inbox = LinkInbox()
    assert inbox.accept("node-1", 1) and inbox.accept("node-1", 2)
    assert not inbox.accept("node-1", 2) and not inbox.accept("node-1", 1)
    assert inbox.accept("node-3", 1)  # links are independent
    assert inbox.duplicates == 2


def test_link_inbox_holds_a_message_that_comes_ahead_of_a_missing_one_until_it_comes():
    """After a failover a queue can hand a consumer's unacked deliveries back behind newer ones (seen:
    a new delivery, then a redelivered one), and a quorum queue can take a publish after refusing the
    one before it: 3 and 4 come before 2. They wait, and follow 2 when it comes; a copy of a held
    message is a duplicate, held in its place (its delivery is the one the broker still holds). (The old inbox handled 3 as "a gap" and then dropped 2 as a duplicate:
    a message lost.)"""
    inbox = LinkInbox()
    assert inbox.accept("node-1", 1, "m1") == ["m1"]
    assert inbox.accept("node-1", 3, "m3") == [] and inbox.waits("node-1", 3)
    assert inbox.accept("node-1", 4, "m4") == [] and inbox.gaps == 2
    assert inbox.accept("node-1", 3, "m3 again") == [] and inbox.duplicates == 1
    assert inbox.accept("node-2", 1, "n1") == ["n1"], "other links do not wait"
    assert inbox.accept("node-1", 2, "m2") == ["m2", "m3 again", "m4"]
    assert not inbox.waits("node-1", 3)
    assert inbox.accept("node-1", 4, "m4 again") == [] and inbox.accept("node-1", 5, "m5") == ["m5"]
    assert inbox.duplicates == 2


def test_link_inbox_skips_a_malformed_messages_place_only_when_a_later_message_needs_it():
    """A malformed message (dead-lettered) keeps its place open: a forged copy of seq 1 must not
    make the genuine 1 a duplicate. When a later message comes, the place is skipped, whether that
    message came before the malformed one (held back, released by ``refuse``) or after it."""
    inbox = LinkInbox()
    assert inbox.refuse("node-1", 1) == [] and inbox.accept("node-1", 1, "m1") == ["m1"]
    assert inbox.accept("node-1", 3, "m3") == [], "held back: 2 has not come"
    assert inbox.refuse("node-1", 2) == ["m3"], "2 was malformed: 3 goes on"
    assert inbox.refuse("node-1", 4) == [] and inbox.accept("node-1", 5, "m5") == ["m5"]
    assert inbox.gaps == 1 and inbox.duplicates == 0


def test_link_inbox_keeps_entries_only_for_links_that_hold_something_back():
    """``holding`` runs at every step of a participant: with 49 peers in order it must look at no
    link (an empty entry per link was 5 % of a bee's CPU at P = 50, docs/benchmarks.md#startup)."""
    inbox = LinkInbox()
    for n in range(1, 50):
        assert inbox.accept(f"bee-{n}", 1, n) == [n] and inbox.accept(f"bee-{n}", 1, n) == []
    assert inbox.held == {} and inbox.holding() == []
    assert inbox.accept("bee-1", 3, "m3") == [] and inbox.holding() == ["m3"]
    assert inbox.accept("bee-1", 2, "m2") == ["m2", "m3"] and inbox.held == {}
    assert inbox.refuse("bee-2", 3) == [] and inbox.accept("bee-2", 4, "m4") == []
    assert inbox.refuse("bee-2", 2) == ["m4"] and inbox.held == {} and not inbox.waits("bee-2", 4)


def test_parse_envelope_names_each_problem():
    roster = {"node-1": 1, "node-2": 2}
    good = envelope(
        "r1", "node-1#1", "node-1", "node-2", 1, {"node-1": 1}, {"type": "REQUEST", "sender": 1, "ts": 1}
    )
    assert parse_frame(json.dumps(good).encode(), "r1", "node-2", roster)[1][0]["seq"] == 1
    cases = [
        (b"{nope", "not JSON"),
        (b"[]", "JSON object"),
        (json.dumps({"run": "r1"}).encode(), "lacks"),
        (json.dumps(dict(good, run="r2")).encode(), "run 'r2'"),
        (json.dumps(dict(good, **{"from": "node-9"})).encode(), "not a member"),
        (json.dumps(dict(good, to="node-1")).encode(), "addressed to"),
        (json.dumps(dict(good, seq=0)).encode(), "sequence"),
        (json.dumps(dict(good, vc=[1])).encode(), "vector clock"),
        (b" " * (MAX_BODY + 1), "oversized"),
    ]
    for body, words in cases:
        with pytest.raises(EnvelopeError, match=words):
            parse_frame(body, "r1", "node-2", roster)


# -- against the broker -------------------------------------------------------------------
@pytest.fixture
def run_id(amqp_url):
    rid = "t-" + uuid.uuid4().hex[:8]
    yield rid
    delete_run(amqp_url, rid, NAMES)


class Harness:
    """Node-2 in a thread; the test holds its own connection to play node-1 and the monitor."""

    def __init__(self, url: str, run_id: str) -> None:
        self.url, self.run_id = url, run_id
        self.topology = Topology(run_id)
        self.conn = pika.BlockingConnection(pika.URLParameters(url))
        self.ch = self.conn.channel()
        self.ch.confirm_delivery()
        self.topology.declare_base(self.ch)
        self.setup = build_setup("ricart-agrawala", 2, {"requests": 0}, 0)
        for name in NAMES:
            self.topology.declare_participant(self.ch, name, self.setup.codec.types)
        settings = ParticipantSettings(amqp_url=url, run_id=run_id, heartbeat=5.0, dwell=0.0)
        self.node = Participant("node", settings, instance="test-instance")
        self.node.bus.connect()
        self.node._welcome(  # noqa: SLF001 - the welcome step, without a monitor
            {
                "name": "node-2",
                "pid": 2,
                "algorithm": "ricart-agrawala",
                "processes": 2,
                "options": {"requests": 0},
                "seed": 0,
                "start": time.time(),
            }
        )
        self.thread = threading.Thread(target=self.node._work, daemon=True)  # noqa: SLF001 - the participant's work loop on a thread
        self.seq = 0

    def start(self) -> Harness:
        self.thread.start()
        return self

    def request(self, seq: int, ts: int) -> bytes:
        body = envelope(
            self.run_id,
            f"node-1#{seq}",
            "node-1",
            "node-2",
            seq,
            {"node-1": seq},
            {"type": "REQUEST", "sender": 1, "ts": ts},
        )
        return json.dumps(body).encode()

    def publish(self, key: str, body: bytes) -> None:
        self.ch.basic_publish(
            self.topology.exchange,
            key,
            body,
            properties=pika.BasicProperties(delivery_mode=2, headers=signed(key, body)),
            mandatory=True,
        )

    def drain(self, queue: str, settle: float = 0.5, expect: int = 0) -> list[tuple]:
        """Everything in ``queue`` once it has been quiet for ``settle`` seconds — the quiet counted
        only from the ``expect``-th message on (or after 20 s without it), so that a loaded machine's
        slow delivery is not read as "nothing came"."""
        got, quiet_since = [], time.monotonic()
        give_up = quiet_since + 20
        while time.monotonic() - quiet_since < settle or (len(got) < expect and time.monotonic() < give_up):
            method, props, body = self.ch.basic_get(queue, auto_ack=True)
            if method is None:
                time.sleep(0.05)
                continue
            got.append((method.routing_key, props, body))
            quiet_since = time.monotonic()
        return got

    def stop(self) -> dict:
        self.publish("control.all", json.dumps({"kind": "stop"}).encode())
        self.thread.join(timeout=20)
        assert not self.thread.is_alive(), "the participant did not stop"
        statuses = [
            json.loads(b) for k, _, b in self.drain(self.topology.monitor_queue) if k == "status.node-2"
        ]
        self.close()
        return statuses[-1]

    def close(self) -> None:
        """Stop the participant thread (also when a test failed before ``stop``) and disconnect."""
        self.node.stopped = True
        if self.thread.is_alive():
            self.thread.join(timeout=20)
        self.node.bus.close()
        if self.conn.is_open:
            self.conn.close()


@pytest.fixture
def harness(amqp_url):
    """harness(run_id) -> a started Harness; all are stopped and their runs deleted afterwards."""
    made: list[Harness] = []

    def make(run_id: str) -> Harness:
        made.append(Harness(amqp_url, run_id).start())
        return made[-1]

    yield make
    for h in made:
        h.close()
        delete_run(amqp_url, h.run_id, NAMES)


def _monitor_view(harness: Harness) -> list[tuple]:
    return harness.drain(harness.topology.monitor_queue)


def _audit_events(seen: list[tuple], name: str) -> list[dict]:
    """The trace events ``name`` published, unpacked from its batches (one batch per input)."""
    batches = [json.loads(body) for key, _, body in seen if key == f"audit.{name}"]
    for batch in batches:
        assert unpack_batch(batch) is None
    return [event for batch in batches for event in batch["events"]]


def _get(url: str, queue: str, n: int = 1) -> list[tuple]:
    """The next ``n`` messages of ``queue`` (``basic_get``, on a connection of the test's own)."""
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        channel = conn.channel()
        return [channel.basic_get(queue, auto_ack=True) for _ in range(n)]
    finally:
        conn.close()


def test_publish_is_confirmed_persistent_and_unroutable_is_an_error(amqp_url, run_id):
    topology = Topology(run_id)
    bus = Bus(amqp_url, topology, connect_timeout=10)
    bus.connect()
    try:
        bus.publish("audit.node-1", {"event": "state"}, message_id="x#1")  # the monitor queue takes it
        [(method, props, body)] = _get(amqp_url, topology.monitor_queue)
        assert json.loads(body) == {"event": "state"}
        assert props.delivery_mode == 2 and props.message_id == "x#1"
    finally:
        bus.close()


def test_an_inputs_messages_leave_intact_and_in_order(amqp_url, run_id):
    # publishes buffered until the next poll (amqp.Channel.basic_publish) reach the queue whole, in order
    topology = Topology(run_id)
    bus = Bus(amqp_url, topology, connect_timeout=10)
    bus.connect()
    try:
        bodies = [{"event": "state", "n": n, "pad": "x" * (300 * n)} for n in range(4)]
        for n, body in enumerate(bodies):
            bus.send("audit.node-1", body, message_id=f"x#{n}")
        bus.poll(0)
        bus.flush()
        got = []
        for _method, props, body in _get(amqp_url, topology.monitor_queue, len(bodies)):
            got.append((props.message_id, json.loads(body)))
        assert got == [(f"x#{n}", body) for n, body in enumerate(bodies)]
    finally:
        bus.close()


def test_unroutable_message_raises(amqp_url, run_id):
    # No participant queue exists, and what no queue takes goes to the monitor queue through the
    # alternate exchange: unbind that, and a publish has nowhere to go.
    topology = Topology(run_id)
    bus = Bus(amqp_url, topology, connect_timeout=10)
    bus.connect()
    try:
        bus.channel.queue_unbind(topology.monitor_queue, topology.unrouted)
        with pytest.raises(TransportError, match="REQUEST.node-7"):
            bus.publish("REQUEST.node-7", b"{}")
    finally:
        bus.close()


def test_duplicates_are_dropped_and_the_link_stays_fifo(harness, run_id):
    h = harness(run_id)
    first = h.request(1, 5)
    h.publish("REQUEST.node-2", first)
    h.publish("REQUEST.node-2", first)  # a redelivered duplicate
    h.publish("REQUEST.node-2", h.request(2, 9))
    replies = [json.loads(split_step(b)[0]) for _, _, b in h.drain(h.topology.queue("node-1"))]
    assert [r["seq"] for r in replies] == [1, 2], "one REPLY per distinct request, in order"
    assert all(r["msg"]["type"] == "REPLY" and r["from"] == "node-2" for r in replies)
    seen = _monitor_view(h)
    recvs = [e for e in _audit_events(seen, "node-2") if e["event"] == "recv"]
    assert [e["id"] for e in recvs] == ["node-1#1", "node-1#2"]
    status = h.stop()
    assert status["duplicates"] == 1 and status["dead_letters"] == 0 and status["final"]


def test_an_inputs_messages_go_to_their_addressee_only_and_its_trace_to_the_monitor_in_a_batch(
    harness, run_id
):
    """A step's protocol messages go to their addressees only (the monitor gets no copy); its
    trace events go to the monitor in a batch of their own, holding the send of the reply."""
    h = harness(run_id)
    h.publish("REQUEST.node-2", h.request(1, 5))
    ((key, props, body),) = h.drain(h.topology.queue("node-1"))
    assert key == "REPLY.node-1" and not (props.headers or {}).get("CC")
    reply = json.loads(body)
    assert (reply["to"], reply["seq"], reply["msg"]["type"]) == ("node-1", 1, "REPLY")
    seen = _monitor_view(h)
    assert {k.split(".")[0] for k, _, _ in seen} <= {"audit", "status"}, "no protocol message"
    events = _audit_events(seen, "node-2")
    assert [e["event"] for e in events if e["event"] in ("recv", "send")] == ["recv", "send"]
    assert events[-1]["type"] == "REPLY" and events[-1]["to"] == "node-1" and events[-1]["id"] == reply["id"]
    h.stop()


def test_a_step_routed_beyond_its_sends_is_dead_lettered_and_one_short_of_them_is_named_undelivered(
    harness, run_id
):
    """The ``BCC`` header is the broker's: it routes and is removed before delivery. A step routed
    to a queue it names nothing for is dead-lettered by that queue's participant (node-2 here); a
    step that never reaches an addressee leaves its send, in the trace, without a receipt: the
    monitor names that addressee with a message ``sent to it never received`` (a stall, never SAFE)."""
    import io

    h = harness(run_id)
    to_node1 = envelope(
        run_id, "node-2#1", "node-2", "node-1", 1, {"node-2": 1}, {"type": "REPLY", "sender": 2}
    )
    body = json.dumps(to_node1).encode()
    headers = {"BCC": ["REQUEST.node-2"], **signed("REPLY.node-1", body)}
    props = pika.BasicProperties(delivery_mode=2, headers=headers)
    h.ch.basic_publish(h.topology.exchange, "REPLY.node-1", body, props, mandatory=True)
    ((key, got, _),) = h.drain(h.topology.queue("node-1"))
    assert key == "REPLY.node-1" and "BCC" not in (got.headers or {}), "the broker removed BCC"
    dead = h.drain(h.topology.dead_queue)
    assert (
        len(dead) == 1
        and "addressed to 'node-1', delivered to node-2" in dead[0][1].headers["x-mutexlab-reason"]
    )
    h.stop()

    settings = MonitorSettings(amqp_url=h.url, run_id=run_id, algorithm="ricart-agrawala", processes=2)
    monitor = Monitor(settings, out=io.StringIO())
    monitor.feed.members = NAMES
    send = {"event": "send", "pid": "node-1", "type": "REQUEST", "to": "node-2", "id": "node-1#1"}
    monitor.feed.batch("node-1", {"events": [dict(send, vc={"node-1": 1})]})  # its message never came
    assert not monitor.feed.complete(NAMES)
    assert monitor.feed.stalled(NAMES)["node-2"]["undelivered"] == 1


def test_garbage_is_dead_lettered_with_reasons_and_counted(harness, run_id):
    h = harness(run_id)
    queue = h.topology.queue("node-2")
    bad = {
        b"{not json": "not JSON",
        json.dumps(
            envelope(run_id, "node-1#1", "node-1", "node-2", 1, {}, {"type": "NOPE", "sender": 1, "ts": 1})
        ).encode(): "unknown message type",
        json.dumps(
            envelope(run_id, "node-1#1", "node-1", "node-2", 1, {}, {"type": "REQUEST", "sender": 1})
        ).encode(): "invalid REQUEST",
        json.dumps(
            envelope(run_id, "node-9#1", "node-9", "node-2", 1, {}, {"type": "REQUEST", "sender": 9, "ts": 1})
        ).encode(): "not a member",
        json.dumps(
            envelope(run_id, "node-1#1", "node-1", "node-2", 1, {}, {"type": "REQUEST", "sender": 2, "ts": 1})
        ).encode(): "claims sender",
        b"x" * (MAX_BODY + 10): "oversized",
    }
    for body in bad:
        # straight into the participant's queue, signed (the run's own garbage, not a forgery)
        h.ch.basic_publish("", queue, body, pika.BasicProperties(headers=signed(queue, body)))
    h.publish("REQUEST.node-2", h.request(1, 3))  # and the run goes on
    replies = h.drain(h.topology.queue("node-1"))
    assert len(replies) == 1
    dead = h.drain(h.topology.dead_queue)
    reasons = [props.headers["x-mutexlab-reason"] for _, props, _ in dead]
    assert len(reasons) == len(bad)
    for reason, words in zip(reasons, bad.values()):
        assert words in reason
    assert all(props.headers["x-mutexlab-queue"] == queue for _, props, _ in dead)
    assert h.stop()["dead_letters"] == len(bad)


def test_a_message_no_queue_takes_reaches_the_monitor_and_is_dead_lettered_with_its_reason(amqp_url, run_id):
    """The monitor's queue is not bound to protocol keys: a protocol message whose addressee has no
    queue, and a key no one uses, reach it only through the run exchange's alternate exchange, and
    it dead-letters both, each with its reason (nothing is dropped silently)."""
    import io

    settings = MonitorSettings(amqp_url=amqp_url, run_id=run_id, algorithm="ricart-agrawala", processes=2)
    monitor = Monitor(settings, out=io.StringIO())
    monitor.bus.connect()  # declares the exchanges, the monitor's and the dead-letter queue; no node queue
    monitor.bus.consume(monitor.topology.monitor_queue)
    monitor.members = dict.fromkeys(NAMES)  # type: ignore[arg-type] - only the names are read here
    sender = pika.BlockingConnection(pika.URLParameters(amqp_url))
    try:
        channel = sender.channel()
        channel.confirm_delivery()
        lost = {"REQUEST.node-2": "no queue of the addressee took", "GOSSIP.node-2": "unexpected routing key"}
        for key in lost:
            props = pika.BasicProperties(headers=signed(key, b"{}"))
            channel.basic_publish(Topology(run_id).exchange, key, b"{}", props, mandatory=True)
        seen = []
        deadline = time.monotonic() + 20
        while len(seen) < len(lost) and time.monotonic() < deadline:
            for delivery in monitor.bus.poll(0.2):
                seen.append(delivery.routing_key)
                monitor._dispatch(delivery)  # noqa: SLF001 - see above
        assert sorted(seen) == sorted(lost), f"the monitor's queue got {seen}"
        monitor.bus.flush()
        dead = {}
        for _ in lost:
            method, props, _body = channel.basic_get(monitor.topology.dead_queue, auto_ack=True)
            assert method is not None, f"dead letters so far: {dead}"
            dead[props.headers["x-mutexlab-routing-key"]] = props.headers["x-mutexlab-reason"]
        assert set(dead) == set(lost)
        for key, words in lost.items():
            assert words in dead[key], dead[key]
    finally:
        sender.close()
        monitor.bus.close()


def test_two_runs_do_not_see_each_others_messages(harness, run_id):
    other = "t-" + uuid.uuid4().hex[:8]
    h, g = harness(run_id), harness(other)
    h.publish("REQUEST.node-2", h.request(1, 1))
    assert len(h.drain(h.topology.queue("node-1"), expect=1)) == 1
    assert g.drain(g.topology.queue("node-1")) == []
    assert not [k for k, _, _ in _monitor_view(g) if k.startswith(("audit", "REQUEST", "REPLY"))]
    # An envelope of run A that reaches run B's queue is refused, not handled.
    key, body = g.topology.queue("node-2"), h.request(1, 1)
    g.ch.basic_publish("", key, body, pika.BasicProperties(headers=signed(key, body)))
    dead = g.drain(g.topology.dead_queue, expect=1)
    assert len(dead) == 1 and f"run {run_id!r}" in dead[0][1].headers["x-mutexlab-reason"]
    assert h.stop()["dead_letters"] == 0
    assert g.stop()["dead_letters"] == 1


def test_bus_reconnects_after_a_lost_connection_and_redelivers_unacked(amqp_url, run_id):
    topology = Topology(run_id)
    bus = Bus(amqp_url, topology, connect_timeout=10)
    bus.connect()
    try:
        bus.consume(topology.monitor_queue)
        bus.publish("status.x", {"n": 1})
        first = []
        while not first:
            first = bus.poll(1.0)
        assert json.loads(first[0].body) == {"n": 1}
        bus.conn.close()  # the connection is lost before the ack
        bus.ack(first[0])  # from a lost connection: skipped, not an error
        bus.publish("status.x", {"n": 2})  # reconnects, re-publishes
        assert bus.reconnects == 1
        got = []
        deadline = time.monotonic() + 10
        while len(got) < 2 and time.monotonic() < deadline:
            for d in bus.poll(0.5):
                got.append(d)
                bus.ack(d)
        bodies = [json.loads(d.body) for d in got]
        assert bodies == [{"n": 1}, {"n": 2}], "the unacked message comes back, before the new one"
        assert got[0].redelivered
    finally:
        bus.close()


def test_a_queue_consumed_without_acks_hands_nothing_back_after_a_lost_connection(amqp_url, run_id):
    """``consume(auto_ack=True)`` (transient protocol queues, whose senders keep custody: links.py):
    the broker counts a delivery acked as it sends it, so one taken before a lost connection is
    gone, unhandled, and ``ack`` sends nothing for it (an ack of it would close the channel)."""
    topology = Topology(run_id, durable=False)
    bus = Bus(amqp_url, topology, connect_timeout=10)
    bus.connect()
    try:
        bus.consume(topology.monitor_queue, auto_ack=True)
        bus.publish("status.x", {"n": 1})
        first = []
        while not first:
            first = bus.poll(1.0)
        assert first[0].tag == 0, "nothing to ack"
        bus.ack(first[0])  # a no-op
        bus.conn.close()  # the connection is lost: with acks the delivery would come back
        bus.publish("status.x", {"n": 2})  # reconnects
        got = []
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline and len(got) < 2:
            got += bus.poll(0.5)
        assert [json.loads(d.body) for d in got] == [{"n": 2}], "the first was taken for good"
    finally:
        bus.close()


def _exists(url: str, queue: str) -> bool:
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        conn.channel().queue_declare(queue, passive=True)
        return True
    except pika.exceptions.ChannelClosedByBroker as exc:
        assert exc.reply_code == 404, exc
        return False
    finally:
        conn.close()


def test_the_run_is_deleted_queue_by_queue_and_a_queue_the_broker_keeps_is_reported(amqp_url, run_id):
    """``Topology.delete`` deletes each queue on a channel of its own (a quorum queue's deletion
    can wait seconds for a node that is down: tests/test_cluster.py) and returns the queues still
    there. Here node-2's queue is exclusive to another connection: the broker refuses its deletion
    (RESOURCE_LOCKED), which is reported, not waited for; every other queue is gone."""
    topology = Topology(run_id)
    owner = pika.BlockingConnection(pika.URLParameters(amqp_url))
    try:
        channel = owner.channel()
        topology.declare_base(channel)
        topology.declare_participant(channel, "node-1", ["REQUEST"])
        channel.queue_declare(topology.queue("node-2"), exclusive=True)
        conn = Connection(pika.URLParameters(amqp_url))  # the transport's own (calls without waiting)
        try:
            started = time.monotonic()
            left = topology.delete(conn.channel(), NAMES)
            took = time.monotonic() - started
        finally:
            conn.close()
        assert left == [topology.queue("node-2")]
        assert took < 10, f"a refused deletion is not waited for ({took:.1f}s)"
        for queue in (topology.queue("node-1"), topology.monitor_queue, topology.dead_queue):
            assert not _exists(amqp_url, queue), queue
    finally:
        owner.close()
    assert not _exists(amqp_url, topology.queue("node-2")), "an exclusive queue goes with its connection"


def test_unreachable_broker_is_a_clear_error():
    bus = Bus("amqp://127.0.0.1:1/%2F", Topology("nowhere"), connect_timeout=0.5)
    with pytest.raises(TransportError, match="cannot reach RabbitMQ at amqp://127.0.0.1:1"):
        bus.connect()


def test_testcontainers_url_round_trips_through_pika():
    from conftest import container_url

    class FakeContainer:  # what RabbitMqContainer offers once started
        username, password, vhost = "mutexlab", "p@ss/word", "/"

        def get_connection_params(self):
            return pika.ConnectionParameters(host="10.0.0.2", port=32768)

    params = pika.URLParameters(container_url(FakeContainer()))
    assert (params.host, params.port, params.virtual_host) == ("10.0.0.2", 32768, "/")
    assert (params.credentials.username, params.credentials.password) == ("mutexlab", "p@ss/word")


def test_forced_container_broker_is_a_running_container_reachable_from_here(amqp_url):
    """With MUTEXLAB_TEST_BROKER=container the session's broker is a RabbitMqContainer that really
    runs: its mapped AMQP port is the URL's, and this (host) process talks AMQP to it."""
    import os
    import socket
    from urllib.parse import urlparse

    from conftest import BROKER, BROKER_IMAGE

    if os.environ.get("MUTEXLAB_TEST_BROKER") != "container":
        pytest.skip("only with MUTEXLAB_TEST_BROKER=container (.ci/run's testcontainers step)")
    assert BROKER["source"] == "testcontainers"
    container = BROKER["container"]
    wrapped = container.get_wrapped_container()
    wrapped.reload()
    assert wrapped.status == "running"
    assert BROKER_IMAGE in wrapped.image.tags
    where = urlparse(amqp_url)
    assert where.port == int(container.get_exposed_port(5672)) and where.port != 5672
    with socket.create_connection((where.hostname, where.port), timeout=5):
        pass
    conn = pika.BlockingConnection(pika.URLParameters(amqp_url))
    try:
        assert conn.is_open and conn.channel().is_open
    finally:
        conn.close()
