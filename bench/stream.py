"""Part 3's transport stream: the project's own message path at saturation, beside raw pika doing the same work.

An algorithm run over RabbitMQ is bounded by its synchronization delay (who waits for whom),
not by how fast the transport moves messages. This measures the transport alone: one sender
process streams M protocol messages to one receiver through exactly the code a participant
uses, and a third process taps the run's monitor queue as the monitor does:

* the sender handles M ÷ k inputs; for each it builds k messages as ``Participant.send_protocol``
  does (the codec's JSON form of a Ricart–Agrawala ``REQUEST``, wrapped by ``wire.envelope``
  with a link sequence number and a vector clock) and sends them with ``Bus.send`` on the run's
  topology (persistent, ``mandatory``, confirms pipelined; the monitor queue's ``#`` binding
  routes every message twice), then polls (``Bus.poll(0)``, as a participant does between two
  inputs: the buffered messages are written, confirms taken in). ``k = 1`` is an input answered
  by one message (a REPLY), ``k = 4`` a broadcast of N = 5 (a REQUEST to every peer). At the end
  it waits for the last confirm (``Bus.flush``);
* the receiver takes each delivery as ``Participant._handle`` does: ``parse_envelope``, the
  codec's validating decode, the sender check, ``LinkInbox.accept``, and ``Bus.ack`` (held back
  until its own publishes are confirmed, cumulative);
* the tap consumes the monitor queue with the monitor's prefetch and acks (``Bus.ack``).

``untapped`` is the run's topology as it is since issue 18 (the monitor queue takes no protocol
messages): the transport's path alone. The other modes bind the monitor queue to ``#`` as the
topology did before, so the monitor gets a copy of every message (what that copy costs). ``traced`` adds what a run adds per message: the
sender's ``send`` event and the receiver's ``recv`` event, each published as a one-event audit
batch (``audit.<name>``) to the monitor, which then takes three deliveries per protocol message.

``raw=True`` is the **raw pika twin**: the same broker work done with pika alone and nothing of
mutexlab's — the same topology, the same envelope bytes (built once, before the clock starts),
persistent, ``mandatory``, publisher confirms taken in asynchronously, the same poll after every
k publishes, the receiver acking cumulatively every 25 deliveries with prefetch 100 (the Bus's
batch), the tap with the monitor's prefetch acking every 250. Transport ÷ twin is what
mutexlab's own code (building, checking, bookkeeping) costs on top of the guarantees.

Rate = messages received ÷ (last receipt − first publish).
"""

from __future__ import annotations

import json
import time
import uuid

from .baselines import _now, _run_workers, async_confirms, broker_us_per_msg, drain
from .common import broker_cpu_seconds, broker_pid


def _topology(run_id: str, mode: str = "messages"):
    """The run's topology (whose monitor queue takes no protocol messages since issue 18); for the
    tapped modes with the monitor queue also bound to ``#`` — the copy of every message the
    monitor took before —, also when a Bus declares it again as it connects."""
    from mutexlab.transport.topology import Topology

    class Tapped(Topology):
        def declare_base(self, channel) -> None:
            super().declare_base(channel)
            channel.queue_bind(self.monitor_queue, self.exchange, routing_key="#")

    return Topology(run_id) if mode == "untapped" else Tapped(run_id)


def _codec():
    from mutexlab.protocols.registry import make_setup

    return make_setup("ricart-agrawala", 2, {}, 0).codec


def _sender(barrier, url: str, run_id: str, count: int, mode: str, per_input: int) -> dict:
    from mutexlab.transport.rabbit import Bus
    from mutexlab.transport.wire import envelope

    codec = _codec()
    traced = mode == "traced"
    bus = Bus(url, _topology(run_id, mode), name="stream-sender")
    bus.connect()
    barrier.wait(timeout=120)
    start = _now()
    for seq in range(1, count + 1):
        msg = codec.decode({"type": "REQUEST", "sender": 1, "ts": seq})
        msg_id = f"node-1#{seq}"
        vc = {"node-1": seq}
        if traced:
            bus.send(
                "audit.node-1",
                {
                    "events": [
                        {
                            "event": "send",
                            "pid": "node-1",
                            "t": 0.0,
                            "lamport": seq,
                            "vc": vc,
                            "type": "REQUEST",
                            "to": "node-2",
                            "id": msg_id,
                        }
                    ]
                },
            )
        bus.send(
            "REQUEST.node-2",
            envelope(run_id, msg_id, "node-1", "node-2", seq, vc, codec.to_dict(msg)),
            message_id=msg_id,
        )
        if seq % per_input == 0:
            bus.poll(0)  # as a participant between two inputs: write out, take in confirms
    bus.flush()
    end = _now()
    bus.close()
    return {"role": "sender", "start": start, "end": end}


def _receiver(barrier, url: str, run_id: str, count: int, mode: str, _per_input: int) -> dict:
    from mutexlab.transport.inbox import LinkInbox
    from mutexlab.transport.rabbit import Bus
    from mutexlab.transport.wire import parse_envelope

    codec = _codec()
    traced = mode == "traced"
    topology = _topology(run_id, mode)
    bus = Bus(url, topology, name="stream-receiver")
    bus.connect()
    bus.consume(topology.queue("node-2"))
    inbox = LinkInbox()
    roster = {"node-1": 1, "node-2": 2}
    barrier.wait(timeout=120)
    got, deadline = 0, time.monotonic() + 300
    while got < count and time.monotonic() < deadline:
        for delivery in bus.poll(0.5):
            env = parse_envelope(delivery.body, run_id, "node-2", roster)
            msg = codec.decode(env["msg"])
            if msg.sender != roster[env["from"]] or not inbox.accept(env["from"], env["seq"]):
                raise RuntimeError(f"stream receiver: unexpected {env['id']}")
            got += 1
            if traced:
                bus.send(
                    "audit.node-2",
                    {
                        "events": [
                            {
                                "event": "recv",
                                "pid": "node-2",
                                "t": 0.0,
                                "lamport": got,
                                "vc": {"node-1": got, "node-2": got},
                                "type": msg.type,
                                "from": "node-1",
                                "id": env["id"],
                            }
                        ]
                    },
                )
            bus.ack(delivery)
    end = _now()
    bus.close()
    return {
        "role": "receiver",
        "received": got,
        "end": end,
        "gaps": inbox.gaps,
        "duplicates": inbox.duplicates,
    }


def _tap(barrier, url: str, run_id: str, count: int, mode: str, _per_input: int) -> dict:
    from mutexlab.transport.monitor import MONITOR_PREFETCH
    from mutexlab.transport.rabbit import Bus

    topology = _topology(run_id)
    bus = Bus(url, topology, name="stream-tap", prefetch=MONITOR_PREFETCH)
    bus.connect()
    bus.consume(topology.monitor_queue)
    expected = count * (3 if mode == "traced" else 1)
    barrier.wait(timeout=120)
    got, audit, deadline = 0, 0, time.monotonic() + 300
    while got < expected and time.monotonic() < deadline:
        for delivery in bus.poll(0.5):
            if delivery.routing_key.startswith("audit."):
                audit += len(json.loads(delivery.body)["events"])
            got += 1
            bus.ack(delivery)
    end = _now()
    bus.close()
    return {"role": "tap", "tapped": got, "audit_events": audit, "end": end}


# -- the raw pika twin: the same broker work, none of mutexlab's code --------------------------------
RAW_ACK_EVERY = 25  # the receiving Bus's ack batch (prefetch 100 // 4)
RAW_TAP_ACK_EVERY = 250  # the monitor's (prefetch 1000 // 4)


def _raw_sender(barrier, url: str, run_id: str, count: int, _mode: str, per_input: int) -> dict:
    import pika

    from mutexlab.transport.wire import envelope

    topology = _topology(run_id)
    body = json.dumps(
        envelope(
            run_id,
            "node-1#1",
            "node-1",
            "node-2",
            1,
            {"node-1": 1},
            {"type": "REQUEST", "sender": 1, "ts": 1},
        ),
        separators=(",", ":"),
    ).encode()
    conn, channel, confirmed = async_confirms(url)
    props = pika.BasicProperties(delivery_mode=2, content_type="application/json", message_id="node-1#1")
    barrier.wait(timeout=120)
    start = _now()
    for seq in range(1, count + 1):
        channel.basic_publish(topology.exchange, "REQUEST.node-2", body, properties=props, mandatory=True)
        if seq % per_input == 0:
            conn.process_data_events(time_limit=0)
    while confirmed[0] < count:
        conn.process_data_events(time_limit=0.002)
    end = _now()
    conn.close()
    return {"role": "sender", "start": start, "end": end}


def _raw_receiver(barrier, url: str, run_id: str, count: int, _mode: str, _per_input: int) -> dict:
    got = drain(barrier, url, _topology(run_id).queue("node-2"), count, prefetch=100, ack_every=RAW_ACK_EVERY)
    return {"role": "receiver", "received": got["received"], "end": got["end"], "gaps": 0, "duplicates": 0}


def _raw_tap(barrier, url: str, run_id: str, count: int, _mode: str, _per_input: int) -> dict:
    from mutexlab.transport.monitor import MONITOR_PREFETCH

    got = drain(
        barrier,
        url,
        _topology(run_id).monitor_queue,
        count,
        prefetch=MONITOR_PREFETCH,
        ack_every=RAW_TAP_ACK_EVERY,
    )
    return {"role": "tap", "tapped": got["received"], "audit_events": 0, "end": got["end"]}


ROLES = {
    False: {"sender": _sender, "receiver": _receiver, "tap": _tap},
    True: {"sender": _raw_sender, "receiver": _raw_receiver, "tap": _raw_tap},
}


def _dispatch(barrier, raw: bool, role: str, *args) -> dict:
    return ROLES[raw][role](barrier, *args)


def stream(
    url: str, count: int, traced: bool = False, tapped: bool = True, per_input: int = 1, raw: bool = False
) -> dict:
    """Stream ``count`` messages, ``per_input`` per poll; the receiver's rate and what the tap saw.

    ``tapped=False`` unbinds the monitor queue: the transport's path alone, without the copy of
    every message the monitor takes (what the tap costs). ``raw=True`` does the same broker work
    with pika alone (the twin)."""
    if traced and not tapped:
        raise ValueError("a traced stream needs the monitor's tap (the trace goes to the monitor)")
    if traced and raw:
        raise ValueError("the raw pika twin has no trace (it does the untraced stream's broker work)")
    if per_input < 1 or count % per_input:
        raise ValueError(
            f"messages per input must be at least 1 and divide the count {count}, got {per_input}"
        )
    import pika

    from mutexlab.transport.topology import delete_run

    mode = "traced" if traced else "messages" if tapped else "untapped"
    run_id = f"bench-stream-{uuid.uuid4().hex[:8]}"
    topology = _topology(run_id, mode)
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        ch = conn.channel()
        topology.declare_base(ch)
        topology.declare_participant(ch, "node-2", ["REQUEST", "REPLY"])
    finally:
        conn.close()
    roles = ("sender", "receiver", "tap") if tapped else ("sender", "receiver")
    try:
        broker = broker_pid(url)
        cpu_before = broker_cpu_seconds(broker)
        out = _run_workers(_dispatch, [(raw, role, url, run_id, count, mode, per_input) for role in roles])
        cpu_after = broker_cpu_seconds(broker)
        left_in_monitor_queue = _queue_depth(url, topology.monitor_queue)
    finally:
        delete_run(url, run_id, ["node-1", "node-2"])
    if not tapped and left_in_monitor_queue:
        raise RuntimeError(
            f"the untapped stream routed {left_in_monitor_queue} messages to the monitor queue"
        )
    sender = next(o for o in out if o["role"] == "sender")
    receiver = next(o for o in out if o["role"] == "receiver")
    tap = next((o for o in out if o["role"] == "tap"), {"tapped": 0, "audit_events": 0})
    span = (receiver["end"] - sender["start"]) / 1e9
    return {
        "mode": mode,
        "code": "raw pika" if raw else "transport",
        "per_input": per_input,
        "messages": count,
        "received": receiver["received"],
        "tapped": tap["tapped"],
        "audit_events": tap["audit_events"],
        "left_in_monitor_queue": left_in_monitor_queue,
        "gaps": receiver["gaps"],
        "duplicates": receiver["duplicates"],
        "seconds": round(span, 3),
        "msgs_per_s": round(receiver["received"] / span) if span > 0 else None,
        "amqp_deliveries_per_s": round((receiver["received"] + tap["tapped"]) / span) if span > 0 else None,
        "broker_cpu_us_per_msg": broker_us_per_msg(cpu_before, cpu_after, count),
    }


def _queue_depth(url: str, queue: str) -> int:
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        return conn.channel().queue_declare(queue, passive=True).method.message_count
    finally:
        conn.close()
