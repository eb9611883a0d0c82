"""The bus's bookkeeping of pipelined confirms and held-back acks, without a broker.

A fake channel records what the bus sends; confirms are fed in by hand, in the shapes pika
delivers them (``Basic.Ack``/``Basic.Nack`` with ``delivery_tag`` and ``multiple``). The bus's
clock is a fake one that moves only while the fake connection waits, so what depends on time
(the ack linger, poll and flush deadlines) does not depend on how loaded the machine is."""

from __future__ import annotations

import logging
import socket
from types import SimpleNamespace

import pika
import pytest

from mutexlab.bus import amqp, rabbit
from mutexlab.bus.amqp import TransportError
from mutexlab.bus.inbox import Delivery
from mutexlab.bus.rabbit import ACK_LINGER, Bus
from mutexlab.bus.topology import Topology


class FakeClock:
    """``time`` as the bus sees it: it passes only when the fake connection waits."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


CLOCK = FakeClock()


@pytest.fixture(autouse=True)
def fake_clock(monkeypatch):
    CLOCK.now = 1000.0
    monkeypatch.setattr(rabbit, "time", SimpleNamespace(monotonic=CLOCK.monotonic, sleep=CLOCK.sleep))
    return CLOCK


class FakeChannel:
    def __init__(self) -> None:
        self.published: list[str] = []
        self.acked: list[tuple[int, bool]] = []
        self.acked_at: list[float] = []  # the fake clock at each ack
        self.nowait = self  # pika's channel: what the bus calls without waiting (basic_ack)

    def basic_publish(self, exchange, routing_key, body, properties=None, mandatory=False):
        self.published.append(routing_key)

    def basic_ack(self, tag, multiple=False):
        self.acked.append((tag, multiple))
        self.acked_at.append(CLOCK.now)

    def check(self):
        pass  # open


class FakeConnection:
    is_open = True

    woken = 0  # requests to end a wait early (amqp.Connection.wake)

    def process_data_events(self, time_limit=0):
        CLOCK.sleep(time_limit)  # nothing arrives: the I/O waits the whole time

    def wake(self):
        self.woken += 1

    def close(self):
        pass


def make_bus() -> tuple[Bus, FakeChannel]:
    bus = Bus("amqp://127.0.0.1:5672/%2F", Topology("t-fake"))
    bus.conn, bus.channel, bus.generation = FakeConnection(), FakeChannel(), 1
    return bus, bus.channel


def delivery(tag: int, generation: int = 1) -> Delivery:
    return Delivery("q", "REQUEST.node-2", b"{}", tag, generation, False, {})


def confirm(bus: Bus, tag: int, multiple: bool = False, nack: bool = False) -> None:
    method = (pika.spec.Basic.Nack if nack else pika.spec.Basic.Ack)(delivery_tag=tag, multiple=multiple)
    bus._on_confirm(SimpleNamespace(method=method))


def test_send_does_not_wait_and_an_ack_waits_for_every_earlier_publish():
    bus, channel = make_bus()
    for n in range(3):
        bus.send(f"REPLY.node-{n}", {"n": n})
    assert channel.published == ["REPLY.node-0", "REPLY.node-1", "REPLY.node-2"]
    bus.ack(delivery(7))
    bus.send("status.node-2", {"later": True})  # published after the ack was asked for
    assert bus.poll(0.1) == [] and channel.acked == []
    confirm(bus, 1)
    confirm(bus, 3)  # out of order: 2 is still outstanding
    assert bus.poll(0.1) == [] and channel.acked == []
    confirm(bus, 2)
    bus.poll(0.1)
    assert channel.acked == [(7, True)], "released once 1–3 are confirmed; 4 came after the ack"


def test_acks_released_together_go_out_as_one_cumulative_ack(fake_clock):
    bus, channel = make_bus()
    bus.send("REPLY.node-1", {})
    bus.ack(delivery(1))
    bus.send("REPLY.node-1", {})
    bus.ack(delivery(2))
    bus.send("REPLY.node-1", {})
    bus.ack(delivery(3))
    confirm(bus, 2, multiple=True)
    polled = fake_clock.now
    bus.poll(0.1)
    assert channel.acked == [(2, True)], "deliveries 1 and 2 in one ack; 3 still waits for publish 3"
    assert polled + ACK_LINGER <= channel.acked_at[0] < polled + 0.1, "after lingering idle, within the poll"
    confirm(bus, 3)
    bus.poll(0.1)
    assert channel.acked == [(2, True), (3, True)]


def test_while_busy_acks_wait_for_a_batch_and_go_out_at_once_when_idle():
    bus, channel = make_bus()
    assert bus.ack_batch == 25  # a quarter of the prefetch window of 100
    for tag in range(1, 4):
        bus.ack(delivery(tag))
    bus._settle(force=False)  # deliveries still waiting: 3 < 25, hold them
    assert channel.acked == []
    for tag in range(4, 26):
        bus.ack(delivery(tag))
    bus._settle(force=False)
    assert channel.acked == [(25, True)], "25 releasable: one cumulative ack"
    bus.ack(delivery(26))
    bus.poll(0)  # no time to linger: held for a batch
    assert channel.acked == [(25, True)]
    bus.poll(0.2)  # idle for ACK_LINGER: everything allowed goes
    assert channel.acked == [(25, True), (26, True)]


def test_a_blocked_ack_waits_for_unblock_and_the_acks_behind_it_go_one_by_one():
    """Delivery 2 carries a message held back in memory: a cumulative ack behind it would ack it
    too, so 3 goes alone; once 2 is unblocked, one cumulative ack covers it and 4."""
    bus, channel = make_bus()
    bus.ack(delivery(1))
    bus.ack(delivery(2), blocked=True)
    bus.ack(delivery(3))
    bus.poll(0.1)
    assert channel.acked == [(1, True), (3, False)]
    bus.send("REPLY.node-1", {})  # the held-back message's effects
    bus.unblock(lambda d: d.tag == 2)
    bus.ack(delivery(4))
    bus.poll(0.1)
    assert channel.acked == [(1, True), (3, False)], "2 waits for the confirm of its effects"
    confirm(bus, 1)
    bus.poll(0.1)
    assert channel.acked == [(1, True), (3, False), (4, True)]


def test_an_ack_from_an_old_connection_is_skipped():
    bus, channel = make_bus()
    bus.ack(delivery(5, generation=0))
    bus.poll(0.1)
    assert channel.acked == []


def test_a_nack_is_an_error_naming_the_message():
    bus, _ = make_bus()
    bus.send("REQUEST.node-3", {})
    confirm(bus, 1, nack=True)
    with pytest.raises(TransportError, match="nack.*REQUEST.node-3"):
        bus.poll(0.1)


def test_a_returned_message_is_an_error_naming_its_routing_key():
    bus, _ = make_bus()
    bus.send("REQUEST.node-7", {})
    bus._on_return(
        None, SimpleNamespace(routing_key="REQUEST.node-7", exchange="mutexlab.t-fake"), None, b"{}"
    )
    confirm(bus, 1)
    with pytest.raises(TransportError, match="no queue takes routing key 'REQUEST.node-7'"):
        bus.flush()


def test_after_a_reconnect_the_unconfirmed_are_published_again_in_order():
    bus, old = make_bus()
    for key in ("A.x", "B.x", "C.x"):
        bus.send(key, {})
    confirm(bus, 1)
    new = FakeChannel()
    bus.channel = new  # what connect() does before re-publishing
    bus._republish()
    assert new.published == ["B.x", "C.x"]
    assert list(bus.outbox.unconfirmed) == [1, 2], "new tags on the new channel"
    confirm(bus, 2, multiple=True)
    bus.flush()
    assert not bus.outbox.unconfirmed


def test_flush_gives_up_after_its_timeout():
    bus, _ = make_bus()
    bus.send("A.x", {})
    with pytest.raises(TransportError, match="1 messages not confirmed within 0.05s"):
        bus.flush(timeout=0.05)


def test_send_waits_when_too_many_publishes_are_unconfirmed():
    """Back-pressure: at most ``max_unconfirmed`` messages in flight; beyond that ``send`` takes in
    confirms (here one per I/O round, as a slow broker would give them) down to half."""
    bus, channel = make_bus()
    rounds = []

    def slow_broker(time_limit=0):
        rounds.append(len(bus.outbox.unconfirmed))
        confirm(bus, next(iter(bus.outbox.unconfirmed)))

    bus.conn.process_data_events = slow_broker
    bus.max_unconfirmed = 4
    peak = 0
    for n in range(10):
        bus.send(f"REPLY.node-{n}", {})
        peak = max(peak, len(bus.outbox.unconfirmed))
    assert peak == 4 and len(channel.published) == 10
    assert rounds and max(rounds) == 4 and min(rounds) == 3, "waited from 4 down to 2 each time"
    bus.flush()
    assert not bus.outbox.unconfirmed


def test_acks_already_allowed_go_out_before_the_poll_waits():
    """A consumer whose prefetch window is full gets nothing more until it acks: the acks released
    by earlier confirms must leave before the poll blocks, not after its wait."""
    bus, channel = make_bus()
    waits: list[tuple[float, list]] = []
    bus.conn.process_data_events = lambda time_limit=0: waits.append((time_limit, list(channel.acked)))
    for tag in range(1, bus.ack_batch + 1):  # a full batch, nothing published: releasable at once
        bus.ack(delivery(tag))
    bus.poll(0.3)
    assert waits, "the poll waited"
    assert waits[0][1] == [(bus.ack_batch, True)], "the batch was acked before the first wait"


def test_deliveries_taken_in_while_flush_waited_are_handed_out_without_waiting(fake_clock):
    """A flush takes in deliveries while it waits for confirms (the monitor's stop, answered by the
    final statuses before its own confirm): the next poll returns them at once, not after its
    timeout (pika's wait ends early only for deliveries that are new to it)."""
    bus, _ = make_bus()
    arrived = Delivery("q", "status.node-1", b"{}", 1, 1, False, {})

    def broker(time_limit=0):
        if bus.outbox.unconfirmed and not bus._inbox:  # the answer comes before the confirm
            bus._inbox.append(arrived)
        confirm(bus, next(iter(bus.outbox.unconfirmed)))

    bus.conn.process_data_events = broker
    bus.publish("control.all", {"kind": "stop"})
    assert list(bus._inbox) == [arrived]
    before = fake_clock.now
    bus.conn.process_data_events = lambda time_limit=0: fake_clock.sleep(time_limit)
    assert bus.poll(0.2) == [arrived]
    assert fake_clock.now == before, "returned without waiting"


def test_a_quorum_nack_keeps_its_message_even_when_a_later_multiple_ack_covers_its_tag():
    """The broker answers each tag once: after a nack of tag 2, an ack of "everything up to 3"
    settles 1 only (and confirms 3, which stays behind 2: see the go-back-N test below). Tag 2
    stays unconfirmed, to be re-published in order (a SIGKILLed cluster node lost messages this
    way: the multiple ack emptied the list before the re-publish)."""
    bus = Bus("amqp://127.0.0.1:5672/%2F", Topology("t-fake", "quorum"))
    bus.conn, bus.channel, bus.generation = FakeConnection(), FakeChannel(), 1
    for n in range(1, 4):
        bus.send(f"REQUEST.node-{n}", {"n": n})
    confirm(bus, 2, nack=True)
    confirm(bus, 3, multiple=True)
    assert [m.routing_key for m in bus.outbox.unconfirmed.values()] == ["REQUEST.node-2", "REQUEST.node-3"]
    assert len(bus.outbox.nacked) == 1
    bus._republish()  # what a reconnect does: the refused message goes out again, with what came after it
    assert (
        bus.channel.published[-2:] == ["REQUEST.node-2", "REQUEST.node-3"]
        and len(bus.outbox.unconfirmed) == 2
    )
    confirm(bus, 2, multiple=True)  # the new channel's tags 1-2 are the re-published messages: settled
    assert not bus.outbox.unconfirmed


@pytest.mark.parametrize("later_ack_first", [False, True])
def test_after_a_quorum_nack_the_refused_message_and_everything_after_it_go_out_again(later_ack_first):
    """A quorum queue refuses a channel's first publish to it while it has no leader (nack), and may
    take the next one to it once a leader is elected (ack), before the bus hears of the nack. The
    broker then holds 3 without 2: re-publishing 2 alone would put it behind 3 (its receiver drops
    it as a copy: lost). So a message stays with the bus until every one before it is confirmed, and
    after a nack the refused message and everything after it go out again, in order (go-back-N; the
    receivers drop the copies). The confirms may come in either order."""
    bus = Bus("amqp://127.0.0.1:5672/%2F", Topology("t-fake", "quorum"))
    bus.conn, bus.channel, bus.generation = FakeConnection(), FakeChannel(), 1
    for key in ("A.node-2", "B.node-2", "C.node-2", "D.node-2"):
        bus.send(key, {})
    confirm(bus, 1)
    if later_ack_first:
        confirm(bus, 3)
        confirm(bus, 2, nack=True)
    else:
        confirm(bus, 2, nack=True)
        confirm(bus, 3)
    assert [m.routing_key for m in bus.outbox.unconfirmed.values()] == ["B.node-2", "C.node-2", "D.node-2"]
    new = FakeChannel()
    bus.channel = new  # what connect() does before re-publishing
    bus._republish()
    assert new.published == ["B.node-2", "C.node-2", "D.node-2"]
    confirm(bus, 3, multiple=True)
    assert not bus.outbox.unconfirmed


def test_a_failover_logs_one_line_per_node_that_does_not_answer_and_no_pika_tracebacks(caplog):
    """pika logs each failed connection attempt as seven ERRORs with a traceback (and a lost
    connection as three). With the services' logging (``quiet_pika``) the bus says it once per
    node that did not answer, with the cause, before it takes the next one."""
    closed = []
    for _ in range(2):  # two ports nothing listens on
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            closed.append(s.getsockname()[1])
    url = ",".join(f"amqp://127.0.0.1:{port}/%2F" for port in closed)
    pika_level = logging.getLogger("pika").level
    try:
        caplog.set_level(logging.DEBUG)
        amqp.quiet_pika()  # what the services do
        bus = Bus(url, Topology("t-fake"), connect_timeout=0, name="bee-1", first_node=0)
        with pytest.raises(TransportError, match="cannot reach RabbitMQ"):
            bus.connect()
    finally:
        logging.getLogger("pika").setLevel(pika_level)
    assert not [r for r in caplog.records if r.name.startswith("pika")], "pika's own errors are quiet"
    lines = [r.getMessage() for r in caplog.records if "cannot connect" in r.getMessage()]
    assert lines == [
        f"bee-1: cannot connect to 127.0.0.1:{port}: ConnectionRefusedError(111, 'Connection refused')"
        for port in closed
    ]


def test_a_confirm_ends_the_wait_of_a_poll_that_holds_an_ack_back():
    """While an ack waits for a confirm, the poll does not wake in short slices to look for it:
    it waits for the linger's end, then for the confirm, which ends the I/O's wait (``wake``), and the
    ack goes out at once; the poll then waits for deliveries undisturbed. Three waits in all,
    however long the poll. (Without the wake the ack would wait for the end of the poll, and with
    it the prefetch window.)"""
    bus, channel = make_bus()
    bus.send("REPLY.node-1", {"n": 1})
    bus.ack(delivery(5))
    waits: list[float] = []
    started = CLOCK.now
    confirm_at = started + ACK_LINGER + 0.03  # the broker is slow: after the linger

    def broker(time_limit=0):
        waits.append(time_limit)
        if CLOCK.now < confirm_at <= CLOCK.now + time_limit:
            end = CLOCK.now + time_limit
            CLOCK.now = confirm_at
            before = bus.conn.woken
            confirm(bus, 1)
            if bus.conn.woken > before:
                return  # the loop ends the turn after the callback
            CLOCK.now = end
            return
        CLOCK.sleep(time_limit)

    bus.conn.process_data_events = broker
    assert bus.poll(5.0) == []
    assert channel.acked == [(5, True)] and channel.acked_at == [confirm_at], "acked as the confirm came"
    assert len(waits) == 3, f"the poll woke {len(waits)} times: {waits}"
    assert CLOCK.now == pytest.approx(started + 5.0), "then waited out its time"


def test_a_confirm_ends_the_wait_of_a_flush():
    """A flush waits for confirms in one long wait (``CONFIRM_WAIT``) that the confirm ends
    (``_on_confirm`` wakes the I/O), not in short slices."""
    bus, _ = make_bus()
    bus.send("REPLY.node-1", {"n": 1})
    waits: list[float] = []

    def broker(time_limit=0):
        waits.append(time_limit)
        CLOCK.sleep(0.004)  # the broker's answer comes 4 ms into the wait ...
        before = bus.conn.woken
        confirm(bus, 1)
        assert bus.conn.woken == before + 1, "... and ends it"

    bus.conn.process_data_events = broker
    bus.flush()
    assert waits == [rabbit.CONFIRM_WAIT] and not bus.outbox


def test_a_delivery_is_signed_only_when_its_mac_was_checked_and_is_valid():
    """``Delivery.signed`` lets a participant drop a copy of a message it handled without reading
    it: set only when the run has a secret and the delivery's MAC under it is valid. A forged
    delivery is not signed (and is dead-lettered by ``poll`` with its reason); without a secret
    nothing is."""
    from mutexlab.bus.auth import MAC_HEADER, Signer

    secret, body, key = "k" * 32, b'{"run": "r"}', "REQUEST.node-2"
    good = {MAC_HEADER: Signer(secret).mac(key, body)}
    bad = {MAC_HEADER: Signer("x" * 32).mac(key, body)}
    got = []
    for run_secret, headers in ((secret, good), (secret, bad), (secret, {}), (None, good)):
        bus, channel = make_bus()
        bus.signer = None if run_secret is None else Signer(run_secret)
        channel.basic_consume = lambda _queue, callback, auto_ack=False: got.append(callback) or "ctag"
        bus._consume("q")
        method = SimpleNamespace(redelivered=False, routing_key=key, delivery_tag=1)
        got[-1](channel, method, SimpleNamespace(headers=headers), body)
        taken = bus._inbox[0]
        got[-1] = (run_secret is not None, taken.signed, taken.forged is None)
    assert got == [(True, True, True), (True, False, False), (True, False, False), (False, False, True)]
