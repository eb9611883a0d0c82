"""Where a ``mutexlab run`` command's time goes: before the protocol phase, in it, after it.

    python -m bench.startup --tree /path/to/base --tree . --repeat 3 -- mutex -N 5 --requests 20 --dwell 0

Runs ``mutexlab run ARGS --json`` of each tree (its ``shared`` and root first on PYTHONPATH),
interleaved, and splits the command's wall time with its summary (``started``: the welcome that
starts the protocol phase, ``duration``: that phase); ``cpu_s`` is the CPU time of the command and
all its processes, ``python_us_per_msg`` that over the run's protocol messages. One JSON line per
run. ``--split`` samples the CPU of each process and of the broker: ``cpu_split`` gives the
CPU seconds of each phase (``start``, ``protocol``, ``after``) for the command itself, the monitor,
the participants and the broker (``bench/phases.py``).

    python -m bench.startup --targets --tree /path/to/base --tree . --repeat 3

``--targets`` runs the two commands with a wall-time target instead of ARGS — ``mutex -N 5
--requests 20 --dwell 0`` (1.5 s) and ``bees -P 50 -T 17 --dwell 0 --seed 0`` (6 s) — each tree
in turn, and ends with a table: per command and tree the median wall time, its phases and CPU,
the ratio to the first tree's, and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path

from .common import ROOT, mutexlab_run_json, ratio, say, table
from .phases import split_run

# The commands with a wall-time target (BENCHMARKS.md): (name, arguments, target seconds).
TARGETS = (
    ("mutex N=5 x 20", ["mutex", "-N", "5", "--requests", "20", "--dwell", "0"], 1.5),
    ("bees P=50", ["bees", "-P", "50", "-T", "17", "--dwell", "0", "--seed", "0"], 6.0),
)


def timeline(tree: Path, args: list[str], split: bool = False) -> dict:
    if split:
        summary, _exit, t0, t1, phases = split_run(args, tree, timeout=900)
        cpu = sum(p["all"] for p in phases.values() if isinstance(p, dict))
    else:
        summary, _exit, t0, t1, cpu = mutexlab_run_json(args, tree, timeout=900)
    started, duration = summary["started"], summary["duration"]
    row = {
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
    if split:
        row["cpu_split"] = phases
    return row


def targets(trees: list[Path], repeat: int) -> None:
    """Each target command on each tree, interleaved ``repeat`` times; the table of medians."""
    load = [round(x, 1) for x in os.getloadavg()]
    runs: dict[tuple[str, Path], list[dict]] = {}
    for _ in range(repeat):
        for name, args, _target in TARGETS:
            for tree in trees:
                row = timeline(tree, args)
                print(json.dumps({"command": name, **row}), flush=True)
                runs.setdefault((name, tree), []).append(row)
    rows = []
    for name, _args, target in TARGETS:
        first = statistics.median(r["total_s"] for r in runs[(name, trees[0])])
        for tree in trees:
            done = runs[(name, tree)]
            med = {
                k: statistics.median(r[k] for r in done)
                for k in ("total_s", "started_s", "protocol_s", "after_s", "cpu_s")
            }
            walls = "/".join(f"{r['total_s']:.2f}" for r in done)
            rows.append(
                [
                    name,
                    str(tree),
                    med["total_s"],
                    walls,
                    med["started_s"],
                    med["protocol_s"],
                    med["after_s"],
                    med["cpu_s"],
                    ratio(med["total_s"], first),
                    target,
                ]
            )
    say()
    say(
        table(
            [
                "command",
                "tree",
                "wall s",
                "(repeats)",
                "start s",
                "protocol s",
                "after s",
                "CPU s",
                "÷ first tree",
                "target s",
            ],
            rows,
        )
    )
    say(f"load average before: {load}, after: {[round(x, 1) for x in os.getloadavg()]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tree", type=Path, action="append", help="a mutexlab source tree (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--targets", action="store_true", help="the two commands with a wall-time target, not ARGS"
    )
    parser.add_argument(
        "--split",
        action="store_true",
        help="sample each process's CPU and the broker's: CPU s per phase and process (bench/phases.py)",
    )
    parser.add_argument("args", nargs="*", help="the arguments of mutexlab run (after --)")
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [ROOT])]
    if args.targets:
        targets(trees, args.repeat)
        return 0
    if not args.args:
        parser.error("the arguments of mutexlab run (after --), or --targets")
    for _ in range(args.repeat):
        for tree in trees:
            print(json.dumps(timeline(tree, args.args, args.split)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
