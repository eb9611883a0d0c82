"""One round of the monitor's lease renewals (``transport/probes.py``) at P participants: a passive
declare of each of the run's P + 2 queues (the participants', the monitor's, the dead letters'),
one queue at a time and waiting for each answer (``_renew_each``) beside asked on ``LANES``
channels at once (``renew``), on one connection to the same broker. Prints the median
seconds of ``--rounds`` rounds each.

    python -m bench.renewal -P 50 --rounds 20
"""

from __future__ import annotations

import argparse
import statistics
import time
import uuid

from mutexlab.bus.amqp import connect_any
from mutexlab.bus.topology import Topology, delete_run
from mutexlab.transport.probes import LANES, _renew_each, renew

from . import common
from .common import say


def measure(url: str, parts: int, rounds: int) -> dict[str, float]:
    """``{"serial": s, "lanes": s}``: the median seconds of one renewal round each way."""
    run_id = "renewal-" + uuid.uuid4().hex[:8]
    topology = Topology(run_id)
    names = [f"node-{n}" for n in range(1, parts + 1)]
    conn, _ = connect_any(url)
    try:
        channel = conn.channel()
        topology.declare_base(channel)
        queues = [topology.monitor_queue, topology.dead_queue]
        queues += topology.declare_participants(channel, names, ["REQUEST", "REPLY"])
        channel.close()
        medians = {}
        for label, round_ in (("serial", _renew_each), ("lanes", renew)):
            took = []
            for _ in range(rounds):
                started = time.perf_counter()
                gone = round_(conn, queues)
                took.append(time.perf_counter() - started)
                assert not gone, gone
            medians[label] = statistics.median(took)
        return medians
    finally:
        conn.close()
        delete_run(url, run_id, names)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--amqp-url", default=common.DEFAULT_AMQP_URL)
    parser.add_argument("-P", type=int, default=50, help="participants (default 50)")
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    medians = measure(args.amqp_url, args.P, args.rounds)
    say(
        f"P={args.P} ({args.P + 2} queues): one renewal round {medians['serial'] * 1000:.1f} ms serial, "
        f"{medians['lanes'] * 1000:.1f} ms on {LANES} channels at once (median of {args.rounds})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
