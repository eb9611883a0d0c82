"""The services' passive declares (``transport/probes.py``). A lease-renewal round is one round
trip for all of the run's queues, not one a queue (issue 42: 16–57 s a round at P = 50 on a loaded
host), still renews every lease (a passive declare sent with nowait renewed none), and still names
every queue that is gone."""

from __future__ import annotations

import time
import uuid
from types import SimpleNamespace

import pytest

from mutexlab.bus.amqp import connect_any
from mutexlab.bus.topology import Topology, delete_run
from mutexlab.transport.probes import LANES, queue_exists, renew


class _PikaChannel:
    """pika's channel as ``renew`` uses it: each passive declare recorded with its callback."""

    def __init__(self, conn: _Connection) -> None:
        self.conn, self.is_open, self.on_close = conn, True, []

    def add_on_close_callback(self, callback) -> None:
        self.on_close.append(callback)

    def queue_declare(self, queue: str, passive: bool, callback) -> None:
        assert passive and callback is not None  # a reply asked for: nowait renews nothing
        self.conn.calls.append(("declare", queue, id(self)))
        self.conn.pending.append((callback, "Queue.DeclareOk"))

    def close(self) -> None:
        self.is_open = False
        for callback in self.on_close:
            callback(self, "closed")


class _Connection:
    """Records each passive declare and each wait: the replies come only when waited for."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []
        self.pending: list = []
        self.pika = SimpleNamespace(channel=self._open)

    def _open(self, on_open_callback) -> None:
        self.pending.append((on_open_callback, _PikaChannel(self)))

    def waking(self, callback):
        return lambda *args: callback(*args)

    def wake(self) -> None:
        pass

    def until(self, ready, timeout=None) -> bool:
        self.calls.append(("wait",))
        while self.pending:
            callback, reply = self.pending.pop(0)
            callback(reply)
        return ready()


def test_a_renewal_round_asks_every_reply_on_a_few_channels_at_once():
    conn = _Connection()
    queues = [f"mutexlab.r.node-{n}" for n in range(1, 51)]
    assert renew(conn, queues) == []
    waits = [k for k, call in enumerate(conn.calls) if call == ("wait",)]
    declares = [call for call in conn.calls if call[0] == "declare"]
    assert [call[1] for call in declares] == queues
    assert len({call[2] for call in declares}) == LANES  # spread over the lanes
    assert len(waits) == 3 and waits[1] == waits[0] + 1 + len(queues)  # open, declare all, close
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
        # a queue gone is named, and the round asked again one queue at a time
        assert renew(conn, [queues[0], missing, *queues[1:]]) == [missing]
        # then 4 s of rounds in one wait each, a round every 0.5 s: a queue whose lease those
        # rounds did not renew (only the last is waited for) would be gone after 2 s
        for _ in range(8):
            time.sleep(0.5)
            assert renew(conn, queues) == []
        assert [queue_exists(conn, queue) for queue in queues] == [True] * len(queues)
        assert not queue_exists(conn, missing)
    finally:
        conn.close()
        delete_run(amqp_url, run_id, names)
