"""The cost of authenticating a message (``transport/auth.py``): CPU µs to sign and to check one.

    python -m bench.mac [--number 100000] [--repeat 5]

Times ``Signer.mac`` (the sender's side) and ``Signer.forged`` (the receiver's) on the wire's own
bodies: one envelope (a REQUEST with a 3-process vector clock) and a step (that envelope, a newline
and a trace batch of four events), by CPU time (``time.process_time``), so that other jobs on the
machine lengthen it less. Prints the best of ``--repeat`` per operation, beside the size.
"""

from __future__ import annotations

import argparse
import functools
import time
import timeit

from mutexlab.transport.auth import MAC_HEADER, Signer
from mutexlab.transport.wire import compact, envelope

from .common import table

EVENT = (
    b'{"event":"send","pid":"node-1","t":0.1234,"vc":{"node-1":17,"node-2":9},"to":"node-2","id":"node-1#17"}'
)


def bodies() -> dict[str, bytes]:
    vc = {"node-1": 17, "node-2": 9, "node-3": 4}
    env = compact(
        envelope("run-abcdef1234", "node-1#17", "node-1", "node-2", 17, vc, {"type": "REQUEST", "ts": 17})
    )
    return {"envelope": env, "step": env + b"\n" + b'{"events":[' + b",".join([EVENT] * 4) + b"]}"}


def measure(number: int, repeat: int) -> list[dict]:
    signer = Signer(Signer.__name__ * 8)
    rows = []
    for name, body in bodies().items():
        headers = {MAC_HEADER: signer.mac("audit.node-1", body)}
        row: dict = {"body": name, "bytes": len(body)}
        for op, call in (
            ("sign_us", functools.partial(signer.mac, "audit.node-1", body)),
            ("check_us", functools.partial(signer.forged, "audit.node-1", body, headers)),
        ):
            best = min(timeit.Timer(call, timer=time.process_time).repeat(repeat, number))
            row[op] = round(best / number * 1e6, 2)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.mac", description=__doc__.split("\n")[0])
    parser.add_argument("--number", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    rows = measure(args.number, args.repeat)
    print(table(["body", "bytes", "sign µs", "check µs"], [list(row.values()) for row in rows]))


if __name__ == "__main__":
    main()
