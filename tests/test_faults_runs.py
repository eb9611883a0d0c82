"""Garbage in and isolation, in full runs over RabbitMQ.

Two runs start at once on the same broker, with the same participant names (node-1 …) and the
same seed, different run ids: run A (Ricart–Agrawala) gets garbage published straight into
node-2's queue while it works; run B (Lamport) is left alone.

* Garbage: invalid JSON, a wrong schema, an unknown type, a sender outside the roster, a
  message claiming another sender, an oversized body, an envelope of the other run. Each is
  dead-lettered with its reason in ``x-mutexlab-reason`` (asserted on the dead-letter queue),
  logged by the participant, counted by the monitor; run A still completes safely.
* Isolation: each trace holds its own run only — every message received was sent in the same
  run, the monitor tapped exactly its own run's messages, and B saw none of A's garbage.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pika
import pytest
from conftest import DELIVERIES, RUN_SECRET, RunTap, signed

from mutexlab.bus.topology import Topology, delete_run
from mutexlab.bus.wire import MAX_BODY, envelope
from mutexlab.cli import main as cli
from mutexlab.transport.supervisor import Plan, execute

pytestmark = pytest.mark.broker


def _garbage(run_id: str, other_run: str) -> dict[bytes, str]:
    """body -> words the dead-letter reason must contain."""

    def env(sender="node-1", msg=None, run=run_id, seq=10_000):
        return json.dumps(
            envelope(
                run,
                f"{sender}#x",
                sender,
                "node-2",
                seq,
                {},
                msg or {"type": "REQUEST", "sender": 1, "ts": 1},
            )
        ).encode()

    return {
        b"{this is not json": "not JSON",
        env(msg={"type": "REQUEST", "sender": 1}): "invalid REQUEST",  # wrong schema: no ts
        env(msg={"type": "GIMME", "sender": 1, "ts": 1}): "unknown message type",
        env(sender="node-9", msg={"type": "REQUEST", "sender": 9, "ts": 1}): "not a member",
        env(msg={"type": "REQUEST", "sender": 3, "ts": 1}): "claims sender",
        b"{" + b" " * (MAX_BODY + 1) + b"}": "oversized",
        env(run=other_run): f"run {other_run!r}",
    }


@pytest.fixture(scope="module", params=DELIVERIES)
def two_runs(request, amqp_url, tmp_path_factory):
    delivery = request.param
    base = tmp_path_factory.mktemp("faults-runs")
    plans = {
        "A": Plan(
            "ricart-agrawala",
            4,
            {"requests": 5},
            seed=3,
            amqp_url=amqp_url,
            dwell=0.1,
            stall_timeout=20,
            join_timeout=120,
            trace=str(base / "a.jsonl"),
            logs=str(base / "a"),
            keep=True,
            secret=RUN_SECRET,
            delivery=delivery,
        ),
        "B": Plan(
            "lamport",
            4,
            {"requests": 4},
            seed=3,
            amqp_url=amqp_url,
            dwell=0.1,
            stall_timeout=20,
            join_timeout=120,
            trace=str(base / "b.jsonl"),
            logs=str(base / "b"),
            keep=True,
            delivery=delivery,
        ),
    }
    garbage = _garbage(plans["A"].run_id, plans["B"].run_id)

    def one(name):
        out = io.StringIO()
        return execute(plans[name], True, out), json.loads(out.getvalue())

    conn = pika.BlockingConnection(pika.URLParameters(amqp_url))
    try:
        with ThreadPoolExecutor(max_workers=2) as pool:
            with RunTap(amqp_url, plans["A"].run_id, durable=delivery == "persistent") as tap:
                futures = {name: pool.submit(one, name) for name in plans}
                # Once node-2 of run A works (its queue exists and it is consuming), inject the garbage.
                tap.wait(lambda t: t.changes["node-2"], "node-2 of run A at work", stop=futures["A"].done)
            channel = conn.channel()
            channel.confirm_delivery()
            queue_a = Topology(plans["A"].run_id).queue("node-2")
            for body in garbage:  # signed as run A's own processes sign (its garbage, not a forgery)
                channel.basic_publish(
                    "",
                    Topology(plans["A"].run_id).queue("node-2"),
                    body,
                    properties=pika.BasicProperties(delivery_mode=2, headers=signed(queue_a, body)),
                    mandatory=True,
                )
            results = {name: future.result(timeout=300) for name, future in futures.items()}
        dead = {}
        for name, plan in plans.items():
            got = []
            while True:
                method, props, body = channel.basic_get(Topology(plan.run_id).dead_queue, auto_ack=True)
                if method is None:
                    break
                got.append((props.headers or {}, body))
            dead[name] = got
    finally:
        for plan in plans.values():
            delete_run(amqp_url, plan.run_id, plan.names())
        conn.close()
    return plans, results, dead, garbage


def test_garbage_is_dead_lettered_with_reasons_counted_and_the_run_completes(two_runs):
    plans, results, dead, garbage = two_runs
    code, summary = results["A"]
    print(
        f"\nrun A with garbage: exit {code}, dead-lettered {summary['dead_letters']}, "
        f"entries {summary['entries']}"
    )
    assert code == 0 and summary["complete"] and summary["safe"], summary
    assert summary["entries"] == {"cs": 20}
    assert summary["dead_letters"] == len(garbage), "the monitor reports every dead letter"
    # The dead-letter queue holds each body once, with its reason and where it was found.
    by_body = {body: headers for headers, body in dead["A"]}
    assert set(by_body) == set(garbage)
    queue = Topology(plans["A"].run_id).queue("node-2")
    for body, words in garbage.items():
        headers = by_body[body]
        assert words in headers["x-mutexlab-reason"], (words, headers)
        assert headers["x-mutexlab-queue"] == queue
    # Logged with the reason by the participant that refused it.
    logs = "".join(p.read_text() for p in Path(plans["A"].logs).glob("node-*.log"))
    assert logs.count("node-2: dead-lettered a message") == len(garbage)
    for words in garbage.values():
        assert words in logs
    assert cli(["verify", plans["A"].trace]) == 0


def test_two_runs_at_once_do_not_see_each_others_messages(two_runs):
    plans, results, dead, _ = two_runs
    headers = {}
    for name, plan in plans.items():
        code, summary = results[name]
        assert code == 0 and summary["complete"] and summary["safe"], (name, summary)
        lines = Path(plan.trace).read_text().splitlines()
        headers[name] = json.loads(lines[0])
        events = [json.loads(line) for line in lines[1:]]
        sends = Counter(e["id"] for e in events if e["event"] == "send")
        recvs = Counter(e["id"] for e in events if e["event"] == "recv")
        assert sends == recvs and set(recvs.values()) == {1}, (
            f"{name}: a message received that this run never sent"
        )
        assert summary["tapped"] == sum(sends.values()), f"{name}: the monitor tapped another run's messages"
        types = {e["type"] for e in events if e["event"] == "send"}
        # Lamport's (B) suppresses a REPLY to a node whose request came after its own: when every
        # node asks at once, a run can send none, so B's REPLY is allowed, not required.
        if name == "A":
            assert types == {"REQUEST", "REPLY"}, types
        else:
            assert {"REQUEST", "RELEASE"} <= types <= {"REQUEST", "REPLY", "RELEASE"}, types
        assert cli(["verify", plan.trace]) == 0
    assert headers["A"]["run_id"] == plans["A"].run_id and headers["B"]["run_id"] == plans["B"].run_id
    assert headers["A"]["algorithm"] == "ricart-agrawala" and headers["B"]["algorithm"] == "lamport"
    assert results["B"][1]["entries"] == {"cs": 16}
    assert dead["B"] == [] and results["B"][1]["dead_letters"] == 0, "run A's garbage reached run B"


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_garbage_in_the_monitors_own_queue_is_dead_lettered_not_counted(delivery, amqp_url, tmp_path):
    """The monitor's queue takes everything of the run (``#``). What is none of a join, a trace
    batch, a status, a control signal or a protocol message of this run (``<TYPE>.<member>``) is
    dead-lettered with the routing key in the reason — not counted as a tapped protocol message."""
    plan = Plan(
        "ricart-agrawala",
        2,
        {"requests": 3},
        seed=1,
        amqp_url=amqp_url,
        dwell=0.2,
        stall_timeout=20,
        join_timeout=120,
        logs=str(tmp_path / "logs"),
        keep=True,
        secret=RUN_SECRET,
        delivery=delivery,
    )
    topology = Topology(plan.run_id)
    out = io.StringIO()
    conn = pika.BlockingConnection(pika.URLParameters(amqp_url))
    try:
        with ThreadPoolExecutor(max_workers=1) as pool:
            with RunTap(amqp_url, plan.run_id, durable=delivery == "persistent") as tap:
                future = pool.submit(execute, plan, True, out)
                tap.wait(lambda t: t.changes["node-1"], "node-1 at work", stop=future.done)
            channel = conn.channel()
            channel.confirm_delivery()
            for exchange, key, body in [  # signed as the run's processes sign: garbage, not forgeries
                ("", topology.monitor_queue, b"{not json"),
                ("", topology.monitor_queue, b'{"kind": "status"}'),
                (topology.exchange, "GIMME.node-1", b"{}"),
                (topology.exchange, "REQUEST.node-7", b"{}"),
            ]:
                props = pika.BasicProperties(delivery_mode=2, headers=signed(key, body))
                channel.basic_publish(exchange, key, body, properties=props, mandatory=True)
            code = future.result(timeout=300)
        summary = json.loads(out.getvalue())
        dead = []
        while True:
            method, props, body = channel.basic_get(topology.dead_queue, auto_ack=True)
            if method is None:
                break
            dead.append((props.headers or {}, body))
    finally:
        delete_run(amqp_url, plan.run_id, plan.names())
        conn.close()
    assert code == 0 and summary["complete"] and summary["safe"], summary
    assert summary["delivery"] == delivery
    assert summary["tapped"] == sum(summary["messages"].values()), "garbage is not counted as tapped"
    assert summary["dead_letters"] == 4
    reasons = sorted(h["x-mutexlab-reason"] for h, _ in dead)
    assert all(r.startswith("monitor: unexpected routing key") for r in reasons), reasons
    assert sum(topology.monitor_queue in r for r in reasons) == 2
    assert any("'GIMME.node-1'" in r for r in reasons) and any("'REQUEST.node-7'" in r for r in reasons)
    assert all(h["x-mutexlab-queue"] == topology.monitor_queue for h, _ in dead)
