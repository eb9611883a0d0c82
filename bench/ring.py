"""Raw pika token ring, the yardstick of the token algorithms: the broker's own limit for a handover.

N processes, one queue each, one token forwarded ``hops`` times around (``bench/clients.py``'s ring
on pika's ``BlockingConnection``), ``confirmed`` (durable queues, persistent messages, one confirm
awaited per hop, the delivery acked after its forward is confirmed: the transport's guarantee) or
``transient`` (none of it). Hops per second from the start barrier to the last member's end, and
the broker's CPU per hop over that span.
"""

from __future__ import annotations

from .clients import measure

RING_MODES = ("confirmed", "transient")


def ring(url: str, n: int, hops: int, mode: str) -> dict:
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
