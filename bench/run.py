"""Run the benchmarks and write a JSON file of results.

    python -m bench.run --quick                  # a few minutes: every part, small sizes
    python -m bench.run --full --out docs/benchmarks-full.json
    python -m bench.run --quick --parts 1,2      # only the simulator parts (no broker needed)

Parts: 1 message complexity (simulator), 2 simulator speed and scaling, 3 classic algorithms
over RabbitMQ against a queue semaphore and a Redis lock, 4 the bees end to end over RabbitMQ
against the simulator's message count. Parts 3 and 4 need a RabbitMQ broker
(``--amqp-url``, else ``$AMQP_URL``, else guest on 127.0.0.1:5672) and part 3 a Redis
(``--redis-url``, else ``$REDIS_URL``, else 127.0.0.1:6379). Tables go to stdout (Markdown);
the JSON holds every figure, the machine and the command. Exit 0 when every run completed
safely, 1 when one did not (the figures are still written), 2 on bad arguments.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from . import complexity, overrabbit, simspeed
from .common import DEFAULT_AMQP_URL, machine, say

PARTS = {
    1: "message complexity",
    2: "simulator speed",
    3: "classic algorithms over RabbitMQ",
    4: "bees over RabbitMQ",
}


def parse_sizes(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(f"whole numbers separated by commas, got {text!r}") from None
    if any(s < 1 for s in sizes):
        raise argparse.ArgumentTypeError(f"numbers must be at least 1, got {text!r}")
    return sizes


def parse_parts(text: str) -> list[int]:
    parts = sorted(set(parse_sizes(text)))
    if not set(parts) <= set(PARTS):
        raise argparse.ArgumentTypeError(f"parts are numbers 1–4, got {text!r}")
    return parts


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m bench.run",
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1],
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="small sizes, a few minutes (the default)")
    mode.add_argument("--full", action="store_true", help="the sizes BENCHMARKS.md shows (8-20 minutes)")
    p.add_argument("--parts", type=parse_parts, default=[1, 2, 3, 4], help="e.g. 1,2 (default all)")
    p.add_argument("--out", default="bench/results.json", help="JSON results (default bench/results.json)")
    p.add_argument("--amqp-url", help="RabbitMQ URL (default $AMQP_URL or guest@127.0.0.1:5672)")
    p.add_argument("--redis-url", help="Redis URL (default $REDIS_URL or redis://127.0.0.1:6379/0)")
    p.add_argument("--algorithms", help="restrict parts 1 and 3 to these classic algorithms (a,b,...)")
    p.add_argument("--sizes", type=parse_sizes, help="override N for part 1 (e.g. 3,5)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    full = bool(args.full)
    from mutexlab.protocols.registry import CLASSIC

    algorithms, error = None, None
    if args.algorithms:
        algorithms = [a.strip() for a in args.algorithms.split(",") if a.strip()]
        unknown = [a for a in algorithms if a not in CLASSIC]
        if unknown:
            error = f"unknown classic algorithm(s) {', '.join(unknown)}; choose from {', '.join(CLASSIC)}"
    out = Path(args.out)
    if not out.resolve().parent.is_dir():
        error = f"cannot write {args.out}: directory {out.resolve().parent} does not exist"
    if error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    amqp = args.amqp_url or os.environ.get("AMQP_URL") or DEFAULT_AMQP_URL
    redis_url = args.redis_url or os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0"
    results: dict = {
        "mode": "full" if full else "quick",
        "command": "python -m bench.run " + " ".join(argv if argv is not None else sys.argv[1:]),
        "machine": machine(),
        "parts": {},
    }
    started = time.perf_counter()
    ok = True
    for part in args.parts:
        say(f"\n## Part {part}: {PARTS[part]}")
        t0 = time.perf_counter()
        if part == 1:
            data = complexity.run(full, algorithms, args.sizes or complexity.SIZES)
            text, runs = complexity.render(data), data["runs"]
        elif part == 2:
            data = simspeed.run(full)
            text, runs = simspeed.render(data), [{"safe": r["ok"], "complete": True} for r in data["cases"]]
        elif part == 3:
            data = overrabbit.part3(full, amqp, redis_url, algorithms)
            text, runs = overrabbit.render3(data), data["runs"]
            ok &= all(c["mutual_exclusion_violations"] == 0 for c in data["contention"])
        else:
            data = overrabbit.part4(full, amqp)
            text, runs = overrabbit.render4(data), data["runs"]
        ok &= all(r["safe"] and r["complete"] for r in runs)
        data["seconds"] = round(time.perf_counter() - t0, 1)
        results["parts"][str(part)] = data
        say(text)
        out.write_text(json.dumps(results, indent=1))  # after every part: a crash keeps what was measured
    results["seconds"] = round(time.perf_counter() - started, 1)
    results["machine_after"] = {"load_average": [round(x, 2) for x in os.getloadavg()]}
    out.write_text(json.dumps(results, indent=1))
    say(f"\nresults written to {out} ({results['seconds']} s)" + ("" if ok else " — SOME RUNS FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
