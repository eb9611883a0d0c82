"""The wire's step, alone: the broker's CPU per handover for each way of publishing a step.

Two processes' buses (``transport.rabbit.Bus``: persistent, confirmed, acks held back until the
confirms) pass a counter back and forth ``hops`` times; every handover is a step that also reports
a small trace batch to a third bus playing the monitor, as a participant's step does. Two ways of
publishing the step, on classic queues of version 1 and 2:

* ``two`` — the batch to ``audit.<name>``, then the message to ``MSG.<peer>`` (two publishes);
* ``cc`` — one publish of both to ``audit.<name>``, sent on to the peer by the ``CC`` header.

Reported per handover: the local broker's (beam.smp's) CPU µs, the Python CPU µs of the three
buses (this process), handovers per second. Rounds alternate the four settings, so each is
measured beside the others under the same load::

    python -m bench.steps --hops 2000 --rounds 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import threading
import time
import uuid

from .common import DEFAULT_AMQP_URL, broker_cpu_seconds, broker_pid, say, table

MODES = ("two", "cc")
VERSIONS = (1, 2)
TRACE = json.dumps({"events": [{"event": "recv", "pid": "a", "t": 0.1, "vc": {"a": 1, "b": 2}}] * 3}).encode()


def _handover(url: str, mode: str, version: int, hops: int, broker: int | None) -> dict:
    from mutexlab.transport.rabbit import Bus
    from mutexlab.transport.topology import Topology, delete_run

    topology = Topology(f"steps-{mode}-{version}-{uuid.uuid4().hex[:6]}")

    def declare(channel) -> None:
        for name in ("a", "b"):
            channel.queue_declare(topology.queue(name), durable=True, arguments={"x-queue-version": version})
            channel.queue_bind(topology.queue(name), topology.exchange, routing_key=f"MSG.{name}")

    done = threading.Event()

    def step(bus, me: str, peer: str, n: int) -> None:
        msg = json.dumps({"n": n, "pad": "x" * 100}).encode()
        if mode == "two":
            bus.send(f"audit.{me}", TRACE)
            bus.send(f"MSG.{peer}", msg)
        else:
            bus.send(f"audit.{me}", msg + b"\n" + TRACE, headers={"CC": [f"MSG.{peer}"]})

    def player(me: str, peer: str, first: bool) -> None:
        bus = Bus(url, topology, connect_timeout=10, on_connect=declare, name=me)
        bus.connect()
        bus.consume(topology.queue(me))
        if first:
            step(bus, me, peer, 1)
        while not done.is_set():
            for delivery in bus.poll(0.2):
                n = json.loads(delivery.body.split(b"\n", 1)[0])["n"]
                if n >= hops:
                    done.set()
                    break
                step(bus, me, peer, n + 1)
                bus.ack(delivery)
        bus.close()

    def monitor() -> None:
        bus = Bus(url, topology, connect_timeout=10, name="monitor", prefetch=1000)
        bus.connect()
        bus.consume(topology.monitor_queue)
        while not done.is_set():
            for delivery in bus.poll(0.2):
                bus.ack(delivery)
        bus.close()

    setup = Bus(url, topology, connect_timeout=10, on_connect=declare)
    setup.connect()
    setup.close()
    threads = [
        threading.Thread(target=monitor),
        threading.Thread(target=player, args=("b", "a", False)),
        threading.Thread(target=player, args=("a", "b", True)),
    ]
    cpu0, t0, own0 = broker_cpu_seconds(broker), time.perf_counter(), os.times()
    for thread in threads:
        thread.start()
        time.sleep(0.05)  # the consumers are there before the first handover
    for thread in threads:
        thread.join()
    cpu1, t1, own1 = broker_cpu_seconds(broker), time.perf_counter(), os.times()
    delete_run(url, topology.run_id, ["a", "b"])
    python = (own1.user + own1.system) - (own0.user + own0.system)
    return {
        "broker_us": None if cpu0 is None or cpu1 is None else round((cpu1 - cpu0) / hops * 1e6),
        "python_us": round(python / hops * 1e6),
        "hops_per_s": round(hops / (t1 - t0)),
    }


def measure(url: str, hops: int, rounds: int) -> dict:
    broker = broker_pid(url)
    samples: dict[str, list[dict]] = {}
    for r in range(rounds):
        for version in VERSIONS:
            for mode in MODES:
                key = f"{mode} v{version}"
                row = _handover(url, mode, version, hops, broker)
                say(f"  round {r + 1}: {key}: {row} (load {os.getloadavg()[0]:.1f})")
                samples.setdefault(key, []).append(row)
    return samples


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--amqp-url", default=DEFAULT_AMQP_URL)
    parser.add_argument("--hops", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", help="write the samples here too")
    args = parser.parse_args(argv)
    samples = measure(args.amqp_url, args.hops, args.rounds)
    base = statistics.median(s["broker_us"] or 0 for s in samples["two v1"]) or None
    rows = []
    for key, rows_ in samples.items():
        broker = [s["broker_us"] for s in rows_]
        median = statistics.median(b or 0 for b in broker)
        rows.append(
            [
                key,
                "/".join(str(b) for b in broker),
                round(median / base, 2) if base else "–",
                "/".join(str(s["python_us"]) for s in rows_),
                "/".join(str(s["hops_per_s"]) for s in rows_),
            ]
        )
    say(table(["step", "broker µs/handover", "÷ two v1", "python µs/handover", "handovers/s"], rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(samples, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
