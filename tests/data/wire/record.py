"""Record what a run puts on the wire: every message on the run's exchange, in arrival order.

    PYTHONPATH=TREE/shared python tests/data/wire/record.py OUT.jsonl -- mutex -a ricart-agrawala -N 3 -r 2

runs ``python -m mutexlab run ARGS --run-id R --dwell 0`` with the tree's mutexlab while a queue
of its own, bound to ``#`` on the run's exchange, takes a copy of every message; each line of
OUT is ``{"routing_key", "headers", "body", "decoded"}``: the body in latin-1, byte for byte, and
what the tree's own code reads in it — for a step, the envelopes each addressee takes from its
protocol part (``parse_frame``) and its trace batch with the clocks rebuilt (``unpack_batch``).
tests/data/wire/bus-3a6c154.jsonl.gz was recorded this way from the one-module transport before the split (commit 3a6c154):
``mutex -a ricart-agrawala -N 3 -r 2`` then ``bees -P 3 -T 1 --seed 0``, the two files joined and gzipped.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid

import pika

try:  # the tree's own code
    from mutexlab.bus.topology import Topology
    from mutexlab.bus.wire import parse_frame, split_step

    try:
        from mutexlab.transport.tracing import unpack_batch
    except ImportError:  # before the trace batches' clocks moved out of the bus
        from mutexlab.bus.wire import unpack_batch  # type: ignore
except ImportError:  # the transport before the split, in one module
    from mutexlab.bus.rabbit import Topology, parse_frame, split_step, unpack_batch  # type: ignore

URL = "amqp://127.0.0.1:5672/%2F"


def decode(line: dict, run_id: str, roster: dict) -> dict | None:
    """What the tree reads in a step (or a step's protocol messages sent alone); None for the rest."""
    head, _, _ = line["routing_key"].partition(".")
    if head in ("join", "control", "status"):
        return None
    body = line["body"].encode("latin-1")
    protocol, trace = split_step(body)
    keys = [line["routing_key"]] if head != "audit" else []
    dests = [key.split(".", 1)[1] for key in keys + list(line["headers"].get("CC", []))]
    frames = {dest: parse_frame(body, run_id, dest, roster)[1] for dest in dests}
    batch = None
    if head == "audit":
        batch = json.loads(trace)
        unpack_batch(batch)
    return {"run_id": run_id, "frames": frames, "batch": batch, "protocol_is_trace": protocol == trace}


def main() -> int:
    out, args = sys.argv[1], sys.argv[sys.argv.index("--") + 1 :]
    run_id = "rec-" + uuid.uuid4().hex[:8]
    conn = pika.BlockingConnection(pika.URLParameters(URL))
    channel = conn.channel()
    topology = Topology(run_id)
    topology.declare_base(channel)
    queue = channel.queue_declare("", exclusive=True).method.queue
    channel.queue_bind(queue, topology.exchange, routing_key="#")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "mutexlab",
            "run",
            *args,
            "--run-id",
            run_id,
            "--dwell",
            "0",
            "--amqp-url",
            URL,
        ],
        capture_output=True,
        text=True,
    )
    lines: list[dict] = []
    while True:
        method, props, body = channel.basic_get(queue, auto_ack=True)
        if method is None:
            break
        headers = {k: v for k, v in (props.headers or {}).items() if k == "CC"}
        lines.append({"routing_key": method.routing_key, "headers": headers, "body": body.decode("latin-1")})
    conn.close()
    roster = {
        name: 1
        for line in lines
        if '"welcome"' in line["body"]
        for name in json.loads(line["body"])["roster"]
    }
    for line in lines:
        line["decoded"] = decode(line, run_id, roster)
    with open(out, "w") as f:
        for line in lines:
            f.write(json.dumps(line) + "\n")
    print(f"{len(lines)} messages; run exit {proc.returncode}", file=sys.stderr)
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
