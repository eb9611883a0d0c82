"""Messages lost on purpose (issue 18): protocol messages and trace batches are transient and
retransmitted end to end (transport/links.py), so what the broker loses must not be lost for the run.

The test is a thief: mid-run it consumes from two participants' queues and from the
monitor's queue, beside their own consumers (the broker hands each consumer of a queue its share),
and throws what it gets away. Deterministic loss, unlike a purge (which finds the queues empty:
their consumers take everything at once). What must hold: protocol messages and trace batches
really were stolen, and yet the run completes, every message sent is received exactly once, the
trace is complete and the audit passes.
"""

from __future__ import annotations

import io
import json
import threading
import time
from collections import Counter
from pathlib import Path

import pika
import pytest
from conftest import RunTap

from mutexlab.cli import main as cli
from mutexlab.transport.rabbit import Topology
from mutexlab.transport.supervisor import Plan, execute

pytestmark = pytest.mark.broker


def _steal(url: str, queues: list[str], enough: int, timeout: float) -> Counter:
    """Consume from ``queues`` until at least ``enough`` protocol messages and ``enough`` trace
    batches were taken (acked: gone), or ``timeout``; what was taken, by kind. Everything else (a
    link repair, the monitor's stop, a status) is put back where it was (rejected with requeue):
    losing a stop would only leave the run hanging, which is not what this test is about."""
    stolen: Counter = Counter()
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        channel = conn.channel()

        def take(ch, method, _props, _body):
            head = method.routing_key.split(".", 1)[0]
            if head in ("control", "status", "join"):
                ch.basic_reject(method.delivery_tag, requeue=True)
                return
            ch.basic_ack(method.delivery_tag)
            stolen["trace batch" if head == "audit" else "protocol"] += 1

        channel.basic_qos(prefetch_count=1)
        for queue in queues:
            channel.basic_consume(queue, take)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (stolen["protocol"] < enough or stolen["trace batch"] < enough):
            conn.process_data_events(time_limit=0.05)
    finally:
        conn.close()
    return stolen


def test_protocol_messages_and_trace_batches_stolen_mid_run_are_sent_again(amqp_url, tmp_path):
    plan = Plan(
        "ricart-agrawala",
        4,
        {"requests": 8},
        seed=2,
        amqp_url=amqp_url,
        dwell=0.05,
        stall_timeout=30,
        join_timeout=120,
        trace=str(tmp_path / "stolen.jsonl"),
        logs=str(tmp_path / "logs"),
    )
    out = io.StringIO()
    result: dict = {}
    worker = threading.Thread(target=lambda: result.setdefault("code", execute(plan, True, out)), daemon=True)
    topology = Topology(plan.run_id)
    with RunTap(plan.amqp_url, plan.run_id) as tap:
        worker.start()
        tap.wait(
            lambda t: len(t.changes) == 4, "all 4 nodes changing state", stop=lambda: not worker.is_alive()
        )
    stolen = _steal(
        amqp_url,
        [topology.queue("node-1"), topology.queue("node-3"), topology.monitor_queue],
        enough=5,
        timeout=20,
    )
    worker.join(timeout=300)
    assert not worker.is_alive(), "the run did not end"
    summary = json.loads(out.getvalue())
    print(
        f"\nstolen mid-run: {dict(stolen)}; duplicates dropped {summary['duplicates']}, {summary['duration']}s"
    )
    assert stolen["protocol"] >= 5 and stolen["trace batch"] >= 5, f"too little was lost to test: {stolen}"
    assert result["code"] == 0 and summary["complete"] and summary["safe"], summary
    events = [json.loads(line) for line in Path(plan.trace).read_text().splitlines()[1:]]
    sends = Counter(e["id"] for e in events if e["event"] == "send")
    recvs = Counter(e["id"] for e in events if e["event"] == "recv")
    assert sends == recvs and set(recvs.values()) == {1}, "each message sent is received exactly once"
    assert summary["entries"] == {"cs": 32}
    for name in ("node-1", "node-2", "node-3", "node-4"):  # each node's events all there, in order
        own = [e["vc"][name] for e in events if e["pid"] == name]
        assert own == list(range(1, len(own) + 1)), name
    assert cli(["verify", plan.trace]) == 0
