"""A participant killed (SIGKILL) after handling deliveries and before its trace batch went to the
monitor loses nothing that was acknowledged (persistent delivery; docs/wire.md#acknowledging).

A participant's trace events wait for their batch (``TRACE_FLUSH``), and so does the ack of every
delivery whose events they are: the broker keeps each such delivery until the batch holding its
events is confirmed. node-2 of a two-node Ricart–Agrawala run runs in a forked process, with a
batch bound far longer than the test; it handles requests (its replies reach node-1's queue),
then is killed. Every request must then be either recorded at the monitor (a ``recv`` in a batch)
or back in node-2's queue, for the next consumer: none acked and unrecorded.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import time
import uuid

import pika
import pytest
from conftest import signed

from mutexlab.bus.topology import Topology, delete_run
from mutexlab.bus.wire import envelope, loads, unpack_batch
from mutexlab.protocols.registry import build_setup
from mutexlab.transport.participant import Participant
from mutexlab.transport.settings import ParticipantSettings

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


def test_a_participant_killed_before_its_batch_went_loses_no_acknowledged_delivery(amqp_url):
    run_id = "t-" + uuid.uuid4().hex[:8]
    topology = Topology(run_id)
    conn = pika.BlockingConnection(pika.URLParameters(amqp_url))
    child = None
    try:
        ch = conn.channel()
        ch.confirm_delivery()
        topology.declare_base(ch)
        for name in NAMES:
            topology.declare_participant(
                ch, name, build_setup("ricart-agrawala", 2, {"requests": 0}, 0).codec.types
            )
        child = multiprocessing.get_context("fork").Process(target=node2_works, args=(amqp_url, run_id))
        child.start()
        ids = [f"node-1#{seq}" for seq in range(1, REQUESTS + 1)]
        for seq, msg_id in enumerate(ids, 1):
            body = json.dumps(
                envelope(
                    run_id,
                    msg_id,
                    "node-1",
                    "node-2",
                    seq,
                    {"node-1": seq},
                    {"type": "REQUEST", "sender": 1, "ts": seq},
                )
            ).encode()
            props = pika.BasicProperties(delivery_mode=2, headers=signed("REQUEST.node-2", body))
            ch.basic_publish(topology.exchange, "REQUEST.node-2", body, props, mandatory=True)
        replies: list[dict] = []
        deadline = time.monotonic() + 30
        while len(replies) < REQUESTS and time.monotonic() < deadline:
            for _key, body in drain(ch, topology.queue("node-1"), settle=0.2):
                data = json.loads(body)
                replies += data.get("msgs", [data])
        assert len(replies) == REQUESTS, "node-2 handled every request"
        time.sleep(1.0)  # time enough for any ack it would send (ACK_LINGER) and its confirms
        os.kill(child.pid, signal.SIGKILL)  # the process this test started
        child.join(timeout=10)
        time.sleep(0.5)  # the broker sees the connection gone and requeues what it did not ack
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
    finally:
        if child is not None and child.is_alive():
            os.kill(child.pid, signal.SIGKILL)
            child.join(timeout=10)
        if conn.is_open:
            conn.close()
        delete_run(amqp_url, run_id, NAMES)
