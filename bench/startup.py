"""Where a ``mutexlab run`` command's time goes: before the protocol phase, in it, after it.

    python -m bench.startup --tree /path/to/base --tree . --repeat 3 -- mutex -N 5 --requests 20 --dwell 0

Runs ``mutexlab run ARGS --json`` of each tree (its ``shared`` and root first on PYTHONPATH),
interleaved, and splits the command's wall time with its summary (``started``: the welcome that
starts the protocol phase, ``duration``: that phase); ``cpu_s`` is the CPU time of the command and
all its processes, ``python_us_per_msg`` that over the run's protocol messages. One JSON line per
run.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .common import ROOT, mutexlab_run_json


def timeline(tree: Path, args: list[str]) -> dict:
    summary, _exit, t0, t1, cpu = mutexlab_run_json(args, tree, timeout=900)
    started, duration = summary["started"], summary["duration"]
    return {
        "tree": str(tree),
        "total_s": round(t1 - t0, 2),
        "started_s": round(started - t0, 2),
        "protocol_s": round(duration, 2),
        "after_s": round(t1 - started - duration, 2),
        "outside_s": round(t1 - t0 - duration, 2),
        "cpu_s": round(cpu, 2),
        "messages": summary.get("tapped"),
        "python_us_per_msg": round(cpu / summary["tapped"] * 1e6) if summary.get("tapped") else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tree", type=Path, action="append", help="a mutexlab source tree (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("args", nargs="+", help="the arguments of mutexlab run (after --)")
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    for _ in range(args.repeat):
        for tree in trees:
            print(json.dumps(timeline(tree, args.args)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
