"""Raw pika token ring: the broker's own limit for a token handover, the yardstick of the token algorithms.

N processes, one queue each; process 0 publishes the token (hop 1) to process 1's queue, each
process forwards what it receives to the next one, until ``hops`` handovers were made: the ring
workload of ``bench/clients.py`` on pika's ``BlockingConnection``. Two settings, as the
transport's choices:

* ``confirmed`` — durable queues, persistent messages, one publisher confirm awaited per hop
  (``BlockingChannel.confirm_delivery``), manual ack of the delivery after the forward is
  confirmed: the guarantee of the transport (a handover is on the broker's disk before the
  delivery that caused it leaves its queue);
* ``transient`` — non-durable queues, non-persistent messages, no confirms, auto-ack.

``hops_per_s`` = hops ÷ (the first member's start to the last member's end, after the start
barrier). The broker's CPU over the same span per hop is reported beside it.
"""

from __future__ import annotations

from .clients import measure

RING_MODES = ("confirmed", "transient")


def ring(url: str, n: int, hops: int, mode: str) -> dict:
    """One token passed ``hops`` times around ``n`` processes; hops per second."""
    if mode not in RING_MODES:
        raise ValueError(f"ring mode must be one of {', '.join(RING_MODES)}, got {mode!r}")
    if n < 2 or hops < 1:
        raise ValueError(f"a ring needs n >= 2 and hops >= 1, got n={n}, hops={hops}")
    row = measure(url, "blocking" if mode == "confirmed" else "transient", "ring", n, hops)
    return {
        "mode": mode,
        "n": n,
        "hops": hops,
        "seconds": row["seconds"],
        "hops_per_s": row["msgs_per_s"],
        "broker_cpu_us_per_hop": row["broker_cpu_us_per_msg"],
    }
