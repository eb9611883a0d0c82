"""A participant killed (SIGKILL) after handling deliveries and before its trace batch went to the
monitor loses nothing that was acknowledged (persistent delivery; docs/wire.md#acknowledging);
one whose connection is cut then goes on with the batch it kept, and the run completes SAFE.

A participant's trace events wait for their batch (``TRACE_FLUSH``), and so does the ack of every
delivery whose events they are: the broker keeps each such delivery until the batch holding its
events is confirmed. node-2 of a two-node Ricart–Agrawala run runs in a forked process, with a
batch bound far longer than the test; it handles requests (its replies reach node-1's queue),
then is killed. Every request must then be either recorded at the monitor (a ``recv`` in a batch)
or back in node-2's queue, for the next consumer: none acked and unrecorded. Requests that came
ahead of a missing one of their link (held back in node-2's memory, unhandled) must all be back.
"""

from __future__ import annotations

import io
import json
import multiprocessing
import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pika
import pytest
from conftest import RunTap, signed
from test_rabbit_runs import _close_connections, needs_rabbitmqctl

from mutexlab.bus.topology import Topology, delete_run
from mutexlab.bus.wire import envelope, loads
from mutexlab.cli import main as cli
from mutexlab.protocols.registry import build_setup
from mutexlab.transport.participant import Participant
from mutexlab.transport.settings import ParticipantSettings
from mutexlab.transport.supervisor import Plan, execute
from mutexlab.transport.tracing import unpack_batch

pytestmark = pytest.mark.broker
NAMES = ["node-1", "node-2"]
REQUESTS = 5


def node2_works(url: str, run_id: str) -> None:
    """The forked node-2: admitted without a monitor, at work until killed."""
    settings = ParticipantSettings(
        amqp_url=url, run_id=run_id, heartbeat=300.0, monitor_timeout=3000.0, trace_flush=300.0, dwell=0.0
    )
    node = Participant("node", settings, instance="killed-instance")
    node.bus.connect()
    node._welcome(  # noqa: SLF001 - the welcome step, without a monitor
        {"name": "node-2", "pid": 2, "algorithm": "ricart-agrawala", "processes": 2}
        | {"options": {"requests": 0}, "seed": 0, "start": time.time()}
    )
    node._work()  # noqa: SLF001 - the participant's work loop


def drain(channel, queue: str, settle: float = 1.0) -> list[tuple[str, bytes]]:
    got, quiet_since = [], time.monotonic()
    while time.monotonic() - quiet_since < settle:
        method, _props, body = channel.basic_get(queue, auto_ack=True)
        if method is None:
            time.sleep(0.05)
            continue
        got.append((method.routing_key, body))
        quiet_since = time.monotonic()
    return got


def request_body(run_id: str, seq: int) -> bytes:
    msg = {"type": "REQUEST", "sender": 1, "ts": seq}
    return json.dumps(
        envelope(run_id, f"node-1#{seq}", "node-1", "node-2", seq, {"node-1": seq}, msg)
    ).encode()


@contextmanager
def two_node_run(amqp_url: str) -> Iterator[tuple[Any, Topology, Callable[[], Any], Callable[[int], None]]]:
    """A two-node run's queues declared: (channel, topology, ``start`` forking node-2 at work,
    ``publish`` of node-1's request ``seq`` to it). On the way out node-2 is killed, the run deleted."""
    run_id = "t-" + uuid.uuid4().hex[:8]
    topology = Topology(run_id)
    conn = pika.BlockingConnection(pika.URLParameters(amqp_url))
    children: list[Any] = []

    def start() -> Any:
        child = multiprocessing.get_context("fork").Process(target=node2_works, args=(amqp_url, run_id))
        child.start()
        children.append(child)
        return child

    def publish(seq: int) -> None:
        body = request_body(run_id, seq)
        props = pika.BasicProperties(delivery_mode=2, headers=signed("REQUEST.node-2", body))
        ch.basic_publish(topology.exchange, "REQUEST.node-2", body, props, mandatory=True)

    try:
        ch = conn.channel()
        ch.confirm_delivery()
        topology.declare_base(ch)
        for name in NAMES:
            topology.declare_participant(
                ch, name, build_setup("ricart-agrawala", 2, {"requests": 0}, 0).codec.types
            )
        yield ch, topology, start, publish
    finally:
        for child in children:
            if child.is_alive():
                os.kill(child.pid, signal.SIGKILL)
                child.join(timeout=10)
        if conn.is_open:
            conn.close()
        delete_run(amqp_url, run_id, NAMES)


def replies_to_node1(ch, topology: Topology, total: int, timeout: float) -> list[dict]:
    """node-2's replies in node-1's queue, until ``total`` came or ``timeout`` passed."""
    replies: list[dict] = []
    deadline = time.monotonic() + timeout
    while len(replies) < total and time.monotonic() < deadline:
        for _key, body in drain(ch, topology.queue("node-1"), settle=0.2):
            data = json.loads(body)
            replies += data.get("msgs", [data])
    return replies


def kill_once_acks_went(child) -> None:
    time.sleep(1.0)  # time enough for any ack it would send (ACK_LINGER) and its confirms
    os.kill(child.pid, signal.SIGKILL)  # the process this test started
    child.join(timeout=10)
    time.sleep(0.5)  # the broker sees the connection gone and requeues what it did not ack


def test_a_participant_killed_before_its_batch_went_loses_no_acknowledged_delivery(amqp_url):
    with two_node_run(amqp_url) as (ch, topology, start, publish):
        child = start()
        ids = [f"node-1#{seq}" for seq in range(1, REQUESTS + 1)]
        for seq in range(1, REQUESTS + 1):
            publish(seq)
        replies = replies_to_node1(ch, topology, REQUESTS, timeout=30)
        assert len(replies) == REQUESTS, "node-2 handled every request"
        kill_once_acks_went(child)
        recorded = set()
        for key, body in drain(ch, topology.monitor_queue):
            if key == "audit.node-2":
                batch = loads(body)
                assert unpack_batch(batch) is None
                recorded |= {e["id"] for e in batch["events"] if e["event"] == "recv"}
        back = set()
        for _key, body in drain(ch, topology.queue("node-2")):
            back.add(json.loads(body)["id"])
        lost = [i for i in ids if i not in recorded and i not in back]
        print(f"\nrecorded at the monitor {sorted(recorded)}, back in node-2's queue {sorted(back)}")
        assert not lost, f"acknowledged to the broker, never recorded: {lost}"


def test_a_participant_killed_while_messages_wait_for_a_missing_one_loses_none_of_them(amqp_url):
    """Requests 2 and 3 of node-1's link come, 1 never does: node-2 holds them back in memory,
    unhandled. Killed then, it must not have acked them (the old bus acked them with the deliveries
    around them): both come back to node-2's queue, for the next consumer to handle after 1."""
    with two_node_run(amqp_url) as (ch, topology, start, publish):
        child = start()
        for seq in (2, 3):
            publish(seq)
        queue, deadline = topology.queue("node-2"), time.monotonic() + 30
        while ch.queue_declare(queue, passive=True).method.message_count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not ch.queue_declare(queue, passive=True).method.message_count, "node-2 took both"
        kill_once_acks_went(child)
        back = sorted(json.loads(body)["id"] for _key, body in drain(ch, queue))
        assert back == ["node-1#2", "node-1#3"], f"held back in memory, acked and lost: back only {back}"


def test_more_messages_held_back_than_the_prefetch_window_still_let_the_missing_one_in(amqp_url):
    """A gap of a link with more messages behind it than the bus's prefetch (100): each held-back
    delivery's ack is blocked until handled, so the broker stops delivering once 100 wait, and the
    missing message, queued behind them (a failover's requeue, a quorum queue's nack and go-back-N),
    never comes: node-2 must still get it and answer every request."""
    total = 101 + 5  # more than the prefetch window (100) ahead of seq 1
    with two_node_run(amqp_url) as (ch, topology, start, publish):
        for seq in [*range(2, total + 1), 1]:  # 1 comes last, behind the others
            publish(seq)
        start()
        replies = replies_to_node1(ch, topology, total, timeout=20)
        assert len(replies) == total, f"node-2 answered {len(replies)} of {total}: the missing one never came"


@needs_rabbitmqctl
def test_a_persistent_run_cut_off_while_its_trace_waits_for_batches_completes_safe(
    amqp_url, tmp_path, monkeypatch
):
    """Every connection of a persistent run is closed while the participants' events wait for
    their batches (``TRACE_FLUSH`` 1 s): each reconnects, the deliveries whose acks waited come
    back and are dropped as duplicates, the batches go when due, and the monitor hears every
    event: the run completes SAFE, each message received once."""
    monkeypatch.setenv("TRACE_FLUSH", "1.0")  # the services are forked from here, or take os.environ
    plan = Plan(
        "ricart-agrawala",
        4,
        {"requests": 20},
        amqp_url=amqp_url,
        dwell=0.1,
        stall_timeout=30,
        join_timeout=120,
        trace=str(tmp_path / "trace.jsonl"),
        logs=str(tmp_path / "logs"),
    )
    out = io.StringIO()
    with ThreadPoolExecutor(max_workers=1) as pool:
        with RunTap(amqp_url, plan.run_id) as tap:
            future = pool.submit(execute, plan, True, out)
            tap.wait(  # mid-run: every node has reported a state change (its batches carry the latest)
                lambda t: sum(len(states) >= 2 for states in t.states.values()) == 4,
                "every node past its first state",
                stop=future.done,
            )
        _close_connections(plan.run_id, 5)
        code = future.result(timeout=300)
    summary = json.loads(out.getvalue())
    assert code == 0 and summary["complete"] and summary["safe"], summary
    assert summary["reconnects"] >= 1 and summary["entries"] == {"cs": 80}
    events = [json.loads(line) for line in Path(plan.trace).read_text().splitlines()[1:]]
    sends = Counter(e["id"] for e in events if e["event"] == "send")
    recvs = Counter(e["id"] for e in events if e["event"] == "recv")
    assert sends == recvs and set(recvs.values()) == {1}, "each message received exactly once"
    assert cli(["verify", plan.trace]) == 0
