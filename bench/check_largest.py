"""The largest configurations ``mutexlab check`` completes, per protocol, with its reductions.

    python -m bench.check_largest [--timeout 600] [--only NAME ...] [--json FILE]

Each ladder is climbed until a step does not complete within ``--timeout`` seconds (or
``--max-memory``): the last complete step is that protocol's largest configuration. Every row
is one ``mutexlab check ... --json`` run (states, transitions, seconds, peak memory, verdict);
a step that timed out is shown as such, never as a pass.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from .common import save_json


def mutex_ladder(algorithm: str, *sizes: tuple[int, int]) -> list[list[str]]:
    """``check mutex`` configurations of ``algorithm`` growing: (nodes, requests) each."""
    return [["mutex", "-a", algorithm, "-N", str(n), "--requests", str(r)] for n, r in sizes]


BEES = ["bees", "-P", "3", "-K", "1", "-T", "1", "--zero-clocks"]
LADDERS: dict[str, list[list[str]]] = {
    "ricart-agrawala": mutex_ladder("ricart-agrawala", (3, 2), (4, 1), (3, 3)),
    "lamport": mutex_ladder("lamport", (3, 1), (3, 2)),
    "maekawa": mutex_ladder("maekawa", (3, 1), (3, 2)),
    "sanders": mutex_ladder("sanders", (3, 1), (3, 2)),
    "suzuki-kasami": mutex_ladder("suzuki-kasami", (3, 1), (3, 2), (4, 1)),
    "raymond": mutex_ladder("raymond", (3, 2), (4, 2), (5, 1)),
    "bees": [
        BEES + ["--eggs", "1", "--cocoons", "1"],
        BEES + ["--eggs", "2", "--cocoons", "2"],
        BEES + ["--eggs", "3", "--cocoons", "9"],
        BEES + ["--eggs", "4", "--cocoons", "12"],
        BEES + ["--eggs", "5", "--cocoons", "15"],
    ],
    "elves": [
        ["elves", "-N", "2", "--rounds", "1"],
        ["elves", "-N", "2", "--rounds", "2"],
        ["elves", "-N", "3", "--contracts", "1", "--rounds", "1"],
        ["elves", "-N", "3", "--contracts", "1", "--rounds", "2"],
        ["elves", "-N", "3", "--contracts", "2", "--rounds", "1"],
        ["elves", "-N", "3", "--contracts", "2", "--rounds", "2"],
    ],
}


def run(argv: list[str], timeout: float, max_memory: float) -> dict:
    cmd = [sys.executable, "-m", "mutexlab", "check", *argv, "--json", "--max-memory", str(max_memory)]
    started = time.perf_counter()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"argv": argv, "verdict": f"timeout after {timeout:g} s", "complete": False}
    wall = time.perf_counter() - started
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {
            "argv": argv,
            "verdict": f"failed (exit {proc.returncode}): {proc.stderr.strip()[-200:]}",
            "complete": False,
        }
    out["argv"], out["wall"], out["exit"] = argv, wall, proc.returncode
    return out


def arguments(doc: str, names: list[str], argv: list[str] | None) -> argparse.Namespace:
    """The flags of the check benchmarks (``--timeout``, ``--max-memory``, ``--only``,
    ``--json``); prints when and under what load the run starts."""
    p = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--max-memory", type=float, default=4000)
    p.add_argument("--only", nargs="+", choices=names)
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    print(
        f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores",
        flush=True,
    )
    return args


def main(argv: list[str] | None = None) -> int:
    args = arguments(__doc__ or "", list(LADDERS), argv)
    rows = []
    for name in args.only or LADDERS:
        for step in LADDERS[name]:
            row = run(step, args.timeout, args.max_memory)
            row["protocol"] = name
            rows.append(row)
            line = " ".join(step)
            if row.get("states") is not None:
                print(
                    f"{line:<60} {row['states']:>11,} states {row['transitions']:>12,} transitions "
                    f"{row['seconds']:>8.1f} s {row['peak_mb']:>6.0f} MB  {row['verdict']}"
                    + (f" ({row['stopped']})" if row.get("stopped") else ""),
                    flush=True,
                )
            else:
                print(f"{line:<60} {row['verdict']}", flush=True)
            if not row.get("complete"):
                break
    save_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
