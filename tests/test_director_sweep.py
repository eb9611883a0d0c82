"""``replay --over-rabbitmq`` leaves nothing on the broker even when the director's last word comes
after the monitor's clean-up: the director's bus, finding the run's exchange gone, reconnects and
declares the run's base again (exchanges, the monitor's and the dead letters' queues); ``direct``
sweeps the run once the director has ended (a CI run found the base left so, once)."""

from __future__ import annotations

import time
import uuid

import pika
import pytest

from mutexlab.bus.topology import Topology, delete_run
from mutexlab.transport import directed
from mutexlab.transport.directed import Directed, Director, direct
from mutexlab.transport.script import Script
from mutexlab.transport.supervisor import make_plan


def _left(url: str, topology: Topology) -> list[str]:
    """The run's base names still on the broker (passive declares)."""
    conn = pika.BlockingConnection(pika.URLParameters(url))
    left = []
    try:
        for kind, name in [("queue", topology.monitor_queue), ("queue", topology.dead_queue)] + [
            ("exchange", x) for x in (topology.exchange, topology.dlx, topology.unrouted)
        ]:
            channel = conn.channel()
            try:
                if kind == "queue":
                    channel.queue_declare(name, passive=True)
                else:
                    channel.exchange_declare(name, passive=True)
                left.append(name)
                channel.close()
            except pika.exceptions.ChannelClosedByBroker:
                pass
    finally:
        conn.close()
    return left


def _late_director(self: Director) -> Directed:
    """The race, made certain: the director connects only once the monitor's clean-up is done."""
    deadline = time.monotonic() + 30
    while _left(self.plan.amqp_url, self.topology) and time.monotonic() < deadline:
        time.sleep(0.05)
    self.bus.connect()  # declares the run's base again
    self.bus.close()
    return Directed(diverged="diverged: late (test)")


def _monitor_that_cleans_up(plan, summary=None) -> int:
    """A run whose monitor declared the base and deleted it at the end, as ``execute``'s does."""
    conn = pika.BlockingConnection(pika.URLParameters(plan.amqp_url))
    try:
        topology = Topology(plan.run_id)
        topology.declare_base(conn.channel())
        time.sleep(0.2)
    finally:
        conn.close()
    assert delete_run(plan.amqp_url, plan.run_id, []) == []
    return 3


@pytest.mark.broker
@pytest.mark.parametrize("keep", [False, True])
def test_nothing_is_left_when_the_director_speaks_after_the_cleanup(amqp_url, monkeypatch, keep):
    run_id = "sweep-" + uuid.uuid4().hex[:8]
    plan = make_plan("ricart-agrawala", 2, {}, amqp_url=amqp_url, run_id=run_id, keep=keep, join_timeout=10)
    monkeypatch.setattr(Director, "run", _late_director)
    monkeypatch.setattr(directed, "execute", _monitor_that_cleans_up)
    code, seen = direct(
        plan,
        {1: "node-1", 2: "node-2"},
        ["REQUEST", "REPLY"],
        Script(actions=[], expected={}, steps={}, played=0),
        5.0,
        {},
    )
    assert code == 3 and seen.diverged == "diverged: late (test)"
    topology = Topology(run_id)
    left = _left(amqp_url, topology)
    try:
        if keep:  # --keep: what the director declared is the user's to look at
            assert sorted(left) == sorted(
                [
                    topology.monitor_queue,
                    topology.dead_queue,
                    topology.exchange,
                    topology.dlx,
                    topology.unrouted,
                ]
            )
        else:
            assert left == []
    finally:
        delete_run(amqp_url, run_id, [])
