"""A run's topology on a real broker. Its declarations go out together with one wait
(``topology._together``): a declaration the broker refuses is still reported, and everything is in
place when the wait returns. At the end of ``mutexlab run`` the run's exchanges and queues are
deleted exactly once: by the monitor when it reached its stop (its summary says ``cleaned_up``),
else by the supervisor."""

from __future__ import annotations

import io
import json
import uuid

import pika
import pytest

from mutexlab.bus import topology as topology_module
from mutexlab.bus.amqp import TransportError
from mutexlab.bus.rabbit import Bus
from mutexlab.bus.topology import Topology
from mutexlab.transport.supervisor import Plan, execute

pytestmark = pytest.mark.broker


def _left_on_broker(url: str, run_id: str, names: list[str]) -> list[str]:
    """The run's queues and exchanges that still exist (each asked on a channel of its own: a
    missing one closes the channel it is asked on)."""
    topology = Topology(run_id)
    conn = pika.BlockingConnection(pika.URLParameters(url))
    left = []
    try:
        for kind, name in [("queue", topology.queue(n)) for n in names] + [
            ("queue", topology.monitor_queue),
            ("queue", topology.dead_queue),
            ("exchange", topology.exchange),
            ("exchange", topology.dlx),
            ("exchange", topology.unrouted),
        ]:
            channel = conn.channel()
            try:
                if kind == "queue":
                    channel.queue_declare(name, passive=True)
                else:
                    channel.exchange_declare(name, passive=True)
                left.append(name)
            except pika.exceptions.ChannelClosedByBroker as exc:
                assert exc.reply_code == 404, exc
    finally:
        conn.close()
    return left


def test_declarations_sent_together_are_all_in_place_after_the_one_wait(amqp_url):
    run_id = "t-" + uuid.uuid4().hex[:8]
    names = [f"node-{n}" for n in range(1, 4)]
    bus = Bus(amqp_url, Topology(run_id), connect_timeout=10)
    bus.connect()  # declares the base topology
    try:
        bus.call(lambda channel: bus.topology.declare_participants(channel, names, ["REQUEST", "REPLY"]))
        assert sorted(_left_on_broker(amqp_url, run_id, names)) == sorted(
            [bus.topology.queue(n) for n in names]
            + [bus.topology.monitor_queue, bus.topology.dead_queue]
            + [bus.topology.exchange, bus.topology.dlx, bus.topology.unrouted]
        )
        bus.publish("REPLY.node-3", {"bound": True})  # mandatory: refused if no binding took it
        bus.consume(bus.topology.queue("node-3"))
        got = bus.poll(5.0)
        assert [d.routing_key for d in got] == ["REPLY.node-3"]
        bus.ack(got[0])
        bus.topology.delete(bus.channel, names)
        assert _left_on_broker(amqp_url, run_id, names) == []
    finally:
        bus.close()


def test_a_refused_declaration_among_those_sent_together_is_reported(amqp_url):
    """The run's queues exist as classic queues; a process declaring quorum queues for the same run
    is refused (PRECONDITION_FAILED) by the broker, and says so, naming QUEUE_TYPE."""
    run_id = "t-" + uuid.uuid4().hex[:8]
    first = Bus(amqp_url, Topology(run_id, "classic"), connect_timeout=10)
    first.connect()
    try:
        other = Bus(amqp_url, Topology(run_id, "quorum"), connect_timeout=10)
        with pytest.raises(TransportError, match="refused a declaration.*QUEUE_TYPE"):
            other.connect()
    finally:
        first.topology.delete(first.channel, [])
        first.close()


def test_a_process_of_the_other_delivery_mode_is_refused_naming_delivery(amqp_url):
    """The run's queues are durable (persistent delivery); a process with transient delivery
    declares them not durable, and is refused (PRECONDITION_FAILED), naming DELIVERY."""
    run_id = "t-" + uuid.uuid4().hex[:8]
    first = Bus(amqp_url, Topology(run_id, "classic"), connect_timeout=10)
    first.connect()
    try:
        other = Bus(amqp_url, Topology(run_id, "classic", durable=False), connect_timeout=10)
        with pytest.raises(TransportError, match="refused a declaration.*not durable.*DELIVERY"):
            other.connect()
    finally:
        first.topology.delete(first.channel, [])
        first.close()


def _plan(url: str, tmp_path, **more) -> Plan:
    return Plan("ricart-agrawala", 3, {"requests": 2}, amqp_url=url, dwell=0.0, logs=str(tmp_path), **more)


def _deletes(monkeypatch) -> list[str]:
    """The run ids the supervisor deletes itself (``topology.delete_run``), recorded and done."""
    calls: list[str] = []
    real = topology_module.delete_run

    def recording(url, run_id, names):
        calls.append(run_id)
        real(url, run_id, names)

    monkeypatch.setattr(topology_module, "delete_run", recording)
    return calls


def test_a_run_that_reached_its_stop_is_cleaned_up_by_the_monitor_alone(amqp_url, tmp_path, monkeypatch):
    deletes = _deletes(monkeypatch)
    plan = _plan(amqp_url, tmp_path)
    out = io.StringIO()
    assert execute(plan, json_out=True, out=out) == 0
    assert json.loads(out.getvalue())["cleaned_up"] is True
    assert deletes == [], "the supervisor did not delete a second time"
    assert _left_on_broker(amqp_url, plan.run_id, plan.names()) == []


def test_a_run_that_never_started_is_cleaned_up_by_the_supervisor(amqp_url, tmp_path, monkeypatch):
    """One participant short: membership never completes, the monitor gives up before any stop
    and leaves what it declared; the supervisor deletes it."""
    deletes = _deletes(monkeypatch)
    plan = _plan(amqp_url, tmp_path, join_timeout=2.0)
    roles = plan.roles()
    monkeypatch.setattr(Plan, "roles", lambda self: roles[:-1])
    assert execute(plan, json_out=True, out=io.StringIO()) == 3
    assert deletes == [plan.run_id]
    assert _left_on_broker(amqp_url, plan.run_id, plan.names()) == []


def test_with_keep_nothing_is_deleted(amqp_url, tmp_path, monkeypatch):
    deletes = _deletes(monkeypatch)
    plan = _plan(amqp_url, tmp_path, keep=True)
    out = io.StringIO()
    try:
        assert execute(plan, json_out=True, out=out) == 0
        assert json.loads(out.getvalue())["cleaned_up"] is False and deletes == []
        assert len(_left_on_broker(amqp_url, plan.run_id, plan.names())) == 3 + 2 + 3
    finally:
        topology_module.delete_run(amqp_url, plan.run_id, plan.names())
