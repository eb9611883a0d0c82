"""The services' passive declares (``transport/probes.py``). A lease-renewal round is one round
trip for all of the run's queues, not one a queue (issue 42: 16–57 s a round at P = 50 on a loaded
host), still renews every lease, and still names every queue that is gone."""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace

import pytest

from mutexlab.bus.amqp import connect_any
from mutexlab.bus.topology import Topology, delete_run
from mutexlab.transport.probes import queue_exists, renew


class _Channel:
    """Records each passive declare: ``nowait`` (no reply awaited) or ``wait``."""

    def __init__(self, calls: list[tuple[str, str]]) -> None:
        self.calls = calls
        self.is_open = True
        self.nowait = SimpleNamespace(queue_declare=lambda queue, passive: calls.append(("nowait", queue)))

    def queue_declare(self, queue: str, passive: bool) -> None:
        assert passive
        self.calls.append(("wait", queue))

    def close(self) -> None:
        self.is_open = False


def test_a_renewal_round_waits_once_for_all_the_queues():
    calls: list[tuple[str, str]] = []
    channels: list[_Channel] = []
    conn = SimpleNamespace(channel=lambda: channels.append(_Channel(calls)) or channels[-1])
    queues = [f"mutexlab.r.node-{n}" for n in range(1, 51)]
    assert renew(conn, queues) == []
    assert calls == [("nowait", q) for q in queues[:-1]] + [("wait", queues[-1])]
    assert len(channels) == 1 and not channels[0].is_open
    assert renew(conn, []) == []


@pytest.mark.broker
def test_renewed_in_one_wait_the_leases_last_and_the_gone_queues_are_named(amqp_url):
    run_id = "t-" + uuid.uuid4().hex[:8]
    topology = Topology(run_id, expires=2.0)
    names = ["node-1", "node-2", "node-3"]
    missing = topology.queue("node-9")  # never declared
    conn, _ = connect_any(amqp_url)
    try:
        channel = conn.channel()
        topology.declare_base(channel)
        queues = topology.declare_participants(channel, names, ["REQUEST"])
        channel.close()
        # 4 s of rounds, a round every 0.5 s: a queue whose lease a round did not renew would be
        # gone after 2 s, and named with the missing one
        for _ in range(8):
            time.sleep(0.5)
            assert renew(conn, [queues[0], missing, *queues[1:]]) == [missing]
            assert renew(conn, queues) == []
        assert queue_exists(conn, queues[-1]) and not queue_exists(conn, missing)
    finally:
        conn.close()
        delete_run(amqp_url, run_id, names)
