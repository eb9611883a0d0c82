"""Forged messages on a live run change nothing (docs/rabbitmq.md#authenticated-runs).

Anyone with the broker's credentials can publish on a run's exchange. Each forgery below once
changed a run's outcome: three final statuses made the monitor declare a run complete after 3 of
its entries; a trace batch on ``audit.node-2`` made a correct run a violation; a REPLY with the next
link sequence number let node-1 enter early and the genuine REPLY was then dropped as a duplicate;
a ``stop`` on ``control.all`` stalled the run; ``{"kind": "status"}`` on a control key was taken as
a status. Every message of a run now carries a MAC under the run's secret (``bus/auth.py``):
each forgery is dead-lettered with its reason, counted in the summary, and the run ends complete
and SAFE with all its entries.
"""

from __future__ import annotations

import io
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pika
import pytest
from conftest import DELIVERIES, RunTap, signed

from mutexlab.bus.auth import MAC_HEADER, Signer
from mutexlab.bus.topology import Topology, delete_run
from mutexlab.bus.wire import split_step
from mutexlab.transport.supervisor import Plan, execute

N, REQUESTS = 3, 20


def _genuine_reply(channel, queue: str, timeout: float = 60.0) -> tuple[str, bytes, dict]:
    """A genuine REPLY to node-1 as it crossed the broker: routing key, body, headers."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        method, props, body = channel.basic_get(queue, auto_ack=True)
        if method is not None:
            return method.routing_key, body, dict(props.headers or {})
        time.sleep(0.02)
    pytest.fail("no REPLY to node-1 seen")


def _next_seq(body: bytes) -> bytes:
    """The protocol part of a genuine step with node-1's link sequence numbers one ahead."""
    data = json.loads(split_step(body)[0])
    for entry in data.get("msgs", [data]):
        if entry["to"] == "node-1":
            entry["seq"] += 1
    return json.dumps(data).encode()


@pytest.mark.broker
@pytest.mark.parametrize("delivery", DELIVERIES)
def test_forgeries_on_a_live_run_are_dead_lettered_counted_and_change_nothing(delivery, amqp_url, tmp_path):
    plan = Plan(
        "ricart-agrawala",
        N,
        {"requests": REQUESTS},
        seed=2,
        amqp_url=amqp_url,
        dwell=0.1,
        stall_timeout=20,
        join_timeout=120,
        trace=str(tmp_path / "trace.jsonl"),
        logs=str(tmp_path / "logs"),
        keep=True,  # the dead-letter queue is read below
        delivery=delivery,
    )
    topology = Topology(plan.run_id, durable=delivery == "persistent")
    out = io.StringIO()
    conn = pika.BlockingConnection(pika.URLParameters(amqp_url))  # guest: what any broker user may do
    forged: dict[str, int] = {}  # what was published -> how many deliveries of it the run gets
    try:
        channel = conn.channel()
        with ThreadPoolExecutor(max_workers=1) as pool:
            with RunTap(amqp_url, plan.run_id, durable=delivery == "persistent") as tap:
                spy = channel.queue_declare("", exclusive=True).method.queue
                channel.queue_bind(spy, topology.exchange, routing_key="REPLY.node-1")
                future = pool.submit(execute, plan, True, out)
                tap.wait(lambda t: len(t.os_pids) == N, "every node admitted", stop=future.done)
            key, body, headers = _genuine_reply(channel, spy)
            channel.confirm_delivery()

            def publish(what: str, key: str, body: bytes, headers: dict | None, copies: int) -> None:
                props = pika.BasicProperties(delivery_mode=2, headers=headers)
                channel.basic_publish(topology.exchange, key, body, properties=props, mandatory=True)
                forged[what] = copies

            for n in range(1, N + 1):  # final statuses: "finished", nothing more to wait for
                status = {"kind": "status", "name": f"node-{n}", "pid": n, "state": "RELEASED", "lamport": 99}
                status.update(finished=True, waiting={}, timers=0, final=True, events=1, t=1.0)
                publish(f"final status of node-{n}", f"status.node-{n}", json.dumps(status).encode(), None, 1)
            # A trace batch that would have node-2 enter beside everyone, signed with a secret of its own.
            batch = json.dumps(
                {"events": [{"event": "enter", "pid": "node-2", "t": 1.0, "vc": {"node-2": 9}}]}
            )
            publish("trace batch", "audit.node-2", batch.encode(), signed("audit.node-2", batch.encode()), 1)
            # The genuine REPLY's MAC on it with node-1's next link sequence number: mis-signed.
            publish("next REPLY", "REPLY.node-1", _next_seq(body), {MAC_HEADER: headers[MAC_HEADER]}, 1)
            publish("stop", "control.all", b'{"kind": "stop", "reason": "forged"}', None, N)
            status = json.dumps({"kind": "status", "name": "node-1", "state": "RELEASED", "final": True})
            publish("status on control", "control.all", status.encode(), None, N)
            code = future.result(timeout=300)
        summary = json.loads(out.getvalue())
        dead = []
        while True:
            method, props, _ = channel.basic_get(topology.dead_queue, auto_ack=True)
            if method is None:
                break
            dead.append(props.headers["x-mutexlab-reason"])
    finally:
        delete_run(amqp_url, plan.run_id, plan.names())
        conn.close()
    print(f"\nforged run: exit {code}, forged {summary['forged']}, dead-lettered {summary['dead_letters']}")
    print("\n".join(summary["forgeries"]))
    # a genuine step, seen as it went: to node-1 by its key, or by BCC behind another addressee's
    assert key.split(".")[0] in ("REPLY", "REQUEST") and key.split(".")[1] in plan.names(), key
    assert code == 0 and summary["complete"] and summary["safe"], summary
    assert summary["delivery"] == delivery
    assert summary["entries"] == {"cs": N * REQUESTS}, "the forged statuses did not end the run early"
    assert summary["forged"] == sum(forged.values()), (forged, summary["forgeries"])
    assert summary["dead_letters"] == sum(forged.values()), dead
    assert sum(r.startswith("unauthenticated: no MAC") for r in dead) == N + 2 * N
    assert sum(r.startswith("mis-signed") for r in dead) == 2
    assert any("(status.node-1)" in r for r in dead) and any("(control.all)" in r for r in dead)
    assert any("(audit.node-2)" in r for r in dead) and any("(REPLY.node-1)" in r for r in dead)


def test_a_mac_binds_the_body_the_routing_key_and_the_secret():
    """The check itself: a valid MAC passes; another body, another key, another secret, no MAC, or a
    MAC that is not text are each refused, with the reason."""
    run, other = Signer("s" * 32), Signer("t" * 32)
    mac = run.mac("REPLY.node-1", b"{}")
    assert run.forged("REPLY.node-1", b"{}", {MAC_HEADER: mac}) is None
    assert run.forged("REPLY.node-1", b"{}", {MAC_HEADER: mac.encode()}) is None  # as pika may hand it
    for key, body, headers in [
        ("REPLY.node-1", b"{ }", {MAC_HEADER: mac}),
        ("REPLY.node-2", b"{}", {MAC_HEADER: mac}),
        ("REPLY.node-1", b"{}", {MAC_HEADER: other.mac("REPLY.node-1", b"{}")}),
        ("REPLY.node-1", b"{}", {MAC_HEADER: 7}),
    ]:
        assert run.forged(key, body, headers) == "mis-signed: the MAC does not match the run's secret"
    assert run.forged("REPLY.node-1", b"{}", {}).startswith("unauthenticated: no MAC")
    assert run.forged("REPLY.node-1", b"{}", None).startswith("unauthenticated: no MAC")
    with pytest.raises(ValueError, match="at least 16"):
        Signer("short")


def test_the_mac_is_hmac_sha256_over_the_routing_key_a_nul_and_the_body():
    """The signer makes its key's padded hashes once (``Signer.__init__``); the MAC is still the
    standard library's HMAC-SHA256 of ``key NUL body``, for secrets shorter than SHA-256's block,
    filling it, and longer (hashed first), and bodies from empty to many blocks."""
    import hashlib
    import hmac

    for secret in ("s" * 16, "0123456789abcdef" * 4, "x" * 65, "long secret " * 20):
        signer = Signer(secret)
        for key, body in (("REPLY.node-1", b""), ("audit.bee-7", b"{}" * 3000), ("", bytes(range(256)))):
            expected = hmac.new(secret.encode(), key.encode() + b"\0" + body, hashlib.sha256).hexdigest()
            assert signer.mac(key, body) == expected, (len(secret), key, len(body))
            assert signer.mac(key, body) == expected, "the stored hashes are copied, never consumed"


def test_a_secret_file_is_read_never_created(tmp_path):
    """A swarm's or Kubernetes' mounted secret is read; a missing file is an error, never a fresh
    secret of the process's own (which no other process of the run would hold)."""
    from mutexlab.bus.auth import file_secret

    path = tmp_path / "secrets" / "run-secret"
    with pytest.raises(OSError):
        file_secret(str(path))
    assert not path.parent.exists(), "nothing created"
    path.parent.mkdir()
    path.write_text("0123456789abcdef" * 4 + "\n")
    assert file_secret(str(path)) == "0123456789abcdef" * 4
    path.write_text("short\n")
    with pytest.raises(ValueError, match="at least 16"):
        file_secret(str(path))
