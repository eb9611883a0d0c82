"""Raw pika token ring: the broker's own limit for a token handover, the yardstick of the token algorithms.

N processes, one queue each; process 0 publishes the token (hop 1) to process 1's queue, each
process forwards what it receives to the next one, until ``hops`` handovers were made. Two
settings, as the transport's choices:

* ``confirmed`` — durable queues, persistent messages, one publisher confirm awaited per hop
  (``BlockingChannel.confirm_delivery``), manual ack of the delivery after the forward is
  confirmed: the guarantee of the transport (a handover is on the broker's disk before the
  delivery that caused it leaves its queue);
* ``transient`` — non-durable queues, non-persistent messages, no confirms, auto-ack.

``hops_per_s`` = hops ÷ (last receipt − first publish). The broker's CPU over the whole
measurement (connections included) per hop is reported beside it.
"""

from __future__ import annotations

import uuid

from .baselines import _connect, _declare, _delete, _now, _props, _run_workers, broker_us_per_msg

RING_MODES = ("confirmed", "transient")


def _member(barrier, url: str, names: list[str], me: int, hops: int, mode: str) -> dict:
    confirmed = mode == "confirmed"
    n = len(names)
    conn, ch = _connect(url, confirmed, prefetch=1 if confirmed else None)
    props = _props(confirmed)
    mine = sum(1 for h in range(1, hops + 1) if h % n == me)  # the hops this process receives
    barrier.wait(timeout=120)
    start = end = None
    if me == 0:
        start = _now()
        ch.basic_publish("", names[1 % n], b"1", properties=props)
    got = 0
    if mine:
        for method, _props_in, body in ch.consume(names[me], auto_ack=not confirmed, inactivity_timeout=60):
            if method is None:
                raise RuntimeError(f"ring member {me}: no token for 60 s after {got} of {mine} hops")
            hop = int(body)
            got += 1
            if hop < hops:
                ch.basic_publish("", names[(me + 1) % n], str(hop + 1).encode(), properties=props)
            else:
                end = _now()
            if confirmed:
                ch.basic_ack(method.delivery_tag)
            if got >= mine:
                break
        ch.cancel()
    conn.close()
    return {"member": me, "received": got, "start": start, "end": end}


def ring(url: str, n: int, hops: int, mode: str) -> dict:
    """One token passed ``hops`` times around ``n`` processes; hops per second."""
    if mode not in RING_MODES:
        raise ValueError(f"ring mode must be one of {', '.join(RING_MODES)}, got {mode!r}")
    if n < 2 or hops < 1:
        raise ValueError(f"a ring needs n >= 2 and hops >= 1, got n={n}, hops={hops}")
    from .common import broker_cpu_seconds, broker_pid

    tag = uuid.uuid4().hex[:8]
    names = [f"mutexlab-bench.{tag}.ring-{i}" for i in range(n)]
    _declare(url, names, durable=mode == "confirmed")
    try:
        broker = broker_pid(url)
        cpu_before = broker_cpu_seconds(broker)
        out = _run_workers(_member, [(url, names, i, hops, mode) for i in range(n)])
        cpu_after = broker_cpu_seconds(broker)
    finally:
        _delete(url, names)
    received = sum(o["received"] for o in out)
    if received != hops:
        raise RuntimeError(f"ring of {n}: {received} receipts for {hops} hops")
    start = next(o["start"] for o in out if o["member"] == 0)
    end = next(o["end"] for o in out if o["end"] is not None)
    span = (end - start) / 1e9
    return {
        "mode": mode,
        "n": n,
        "hops": hops,
        "seconds": round(span, 3),
        "hops_per_s": round(hops / span) if span > 0 else None,
        "broker_cpu_us_per_hop": broker_us_per_msg(cpu_before, cpu_after, hops),
    }
