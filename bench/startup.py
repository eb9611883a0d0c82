"""Where a ``mutexlab run`` command's time goes: start-up, joins, the protocol phase, the end.

    python -m bench.startup --tree /path/to/base --tree . --repeat 3 -- mutex -N 5 --requests 20 --dwell 0

Runs ``mutexlab run ARGS --json --logs DIR`` of each tree (its ``shared`` and root first on
PYTHONPATH), interleaved, and splits the command's wall time with the monitor's log (its first
line: the monitor is ready; the last ``joined``) and its summary (``started``: the welcome,
``duration``: the protocol phase). ``cpu`` is the CPU time of the command and all its processes.
The end is split with the monitor's log too: ``finals_s`` from its stop to the participants' final
statuses, ``cleanup_s`` deleting the run's exchanges and queues (``None`` where the log lacks them).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

STAMP = re.compile(r"(\d+-\d+-\d+ \d+:\d+:\d+,\d+)")
FINALS = re.compile(r"final statuses of \d+ of \d+ in ([\d.]+)s")
CLEANUP = re.compile(r"exchanges and queues deleted in ([\d.]+)s")


def _stamp(line: str) -> float | None:
    found = STAMP.match(line)
    return datetime.datetime.strptime(found.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp() if found else None


def timeline(tree: Path, args: list[str]) -> dict:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree / "shared"), str(tree)]))
    with tempfile.TemporaryDirectory(prefix="mutexlab-startup-") as logs:
        t0, c0 = time.time(), os.times()
        command = [sys.executable, "-m", "mutexlab", "run", *args, "--json", "--logs", logs]
        proc = subprocess.run(command, env=env, capture_output=True, text=True, cwd=tree, timeout=900)
        t1, c1 = time.time(), os.times()
        try:
            summary = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise RuntimeError(
                f"{tree}: mutexlab run {' '.join(args)} printed no summary: {proc.stderr[-600:]}"
            ) from None
        lines = (Path(logs) / "monitor.log").read_text().splitlines()
    joins = [_stamp(line) for line in lines if "joined as" in line]
    finals = [float(m.group(1)) for line in lines if (m := FINALS.search(line))]
    cleanup = [float(m.group(1)) for line in lines if (m := CLEANUP.search(line))]
    done = summary["started"] + summary["duration"]
    return {
        "tree": str(tree),
        "total_s": round(t1 - t0, 2),
        "monitor_ready_s": round(_stamp(lines[0]) - t0, 2),
        "joined_s": round(max(joins) - t0, 2) if joins else None,
        "started_s": round(summary["started"] - t0, 2),
        "protocol_s": round(summary["duration"], 2),
        "after_s": round(t1 - done, 2),
        "finals_s": finals[0] if finals else None,
        "cleanup_s": cleanup[0] if cleanup else None,
        "outside_s": round(t1 - t0 - summary["duration"], 2),
        "cpu_s": round((c1.children_user + c1.children_system) - (c0.children_user + c0.children_system), 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.startup", description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tree", type=Path, action="append", help="a mutexlab source tree (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("args", nargs="+", help="the arguments of mutexlab run (after --)")
    args = parser.parse_args(argv)
    trees = [t.resolve() for t in (args.tree or [Path(__file__).resolve().parents[1]])]
    for _ in range(args.repeat):
        for tree in trees:
            print(json.dumps(timeline(tree, args.args)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
