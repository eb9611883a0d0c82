"""What ``mutexlab test`` costs: schedules per second of ``systematic`` on the C Ricart–Agrawala
node, and one delivery through the director beside the same line over a bare pipe.

    python -m bench.director --runs 1000 --nodes 3

Builds examples/nodes/ricart_agrawala.c with gcc into a temporary directory, then measures:

* ``systematic``: ``--runs`` schedules of N nodes, 1 request each, the processes kept across runs
  (the node answers ``init`` with ``reinit``) and started anew for every run (``fresh``);
* per delivery: a REPLY line written to one node and its ``done`` read back, ``--lines`` times,
  over a bare pipe (bytes only), through ``NodeProcess.ask`` (the line checked and parsed), and
  a whole director step (the systematic runs' wall time over their steps: choice, clocks, trace,
  audit and the node's answer).

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "shared"))

from mutexlab.director.problem import make_problem  # noqa: E402
from mutexlab.director.process import NodeProcess, Pool  # noqa: E402
from mutexlab.director.search import Settings, search  # noqa: E402
from mutexlab.director.strategies import Systematic  # noqa: E402

REPLY = b'{"body":{"ts":1,"type":"REPLY"},"from":2,"type":"recv"}\n'


class FreshPool(Pool):
    """A pool that starts every run's processes anew, as for a node that cannot re-initialise."""

    def fresh(self, nodes: int, first: int = 1):
        self.close()
        return super().fresh(nodes, first)


def systematic(binary: str, nodes: int, runs: int, pool_class) -> dict:
    argv = [binary]
    problem = make_problem("mutex", nodes, 1, {}, 0)
    pool = pool_class(argv, 5.0)
    try:
        start, cpu = time.perf_counter(), time.process_time()
        found = search(Settings(problem, argv), pool, Systematic(reduce=False), runs, None)
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    finally:
        pool.close()
    assert found.finding is None, found.finding
    return {
        "runs": found.runs,
        "steps": found.steps,
        "seconds": round(seconds, 3),
        "schedules_per_s": round(found.runs / seconds, 1),
        "us_per_step": round(seconds / found.steps * 1e6, 1),
        "director_cpu_us_per_step": round(cpu / found.steps * 1e6, 1),
        "processes_started": found.started,
    }


def bare_pipe(binary: str, lines: int) -> tuple[float, float]:
    """µs per REPLY line written and ``done`` read back, bytes only: (wall, this process's CPU)."""
    proc = subprocess.Popen([binary], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0)
    assert proc.stdin is not None and proc.stdout is not None
    out = proc.stdout.fileno()
    proc.stdin.write(b'{"type":"init","id":1,"nodes":3,"peers":[2,3]}\n')
    os.read(out, 4096)
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(lines):
        proc.stdin.write(REPLY)
        buffer = b""
        while not buffer.endswith(b'{"type":"done"}\n'):
            buffer += os.read(out, 4096)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    proc.kill()
    proc.wait()
    return seconds / lines * 1e6, cpu / lines * 1e6


def through_ask(binary: str, lines: int) -> tuple[float, float]:
    """µs per REPLY line through ``NodeProcess.ask`` (written, read, checked, parsed): (wall, CPU)."""
    node = NodeProcess([binary], 1, frozenset({2, 3}), 5.0)
    try:
        node.ask({"type": "init", "id": 1, "nodes": 3, "peers": [2, 3]})
        message = {"type": "recv", "from": 2, "body": {"type": "REPLY", "ts": 1}}
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(lines):
            node.ask(message)
        return (time.perf_counter() - start) / lines * 1e6, (time.process_time() - cpu) / lines * 1e6
    finally:
        node.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--nodes", type=int, default=3)
    parser.add_argument("--lines", type=int, default=20000)
    args = parser.parse_args(argv)
    if shutil.which("gcc") is None:
        print("gcc is not installed", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        binary = str(Path(tmp) / "ra")
        subprocess.run(
            ["gcc", "-O2", "-o", binary, str(ROOT / "examples/nodes/ricart_agrawala.c")], check=True
        )
        kept = systematic(binary, args.nodes, args.runs, Pool)
        fresh = systematic(binary, args.nodes, args.runs, FreshPool)
        pipe = bare_pipe(binary, args.lines)
        ask = through_ask(binary, args.lines)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 2),
        "python": platform.python_version(),
        "nodes": args.nodes,
        "systematic_kept": kept,
        "systematic_fresh": fresh,
        "kept_over_fresh": round(kept["schedules_per_s"] / fresh["schedules_per_s"], 2),
        "us_per_line_bare_pipe": round(pipe[0], 1),
        "cpu_us_per_line_bare_pipe": round(pipe[1], 1),
        "us_per_line_ask": round(ask[0], 1),
        "cpu_us_per_line_ask": round(ask[1], 1),
        "us_per_director_step": kept["us_per_step"],
        "cpu_us_per_director_step": kept["director_cpu_us_per_step"],
        "director_step_over_bare_pipe": round(kept["us_per_step"] / pipe[0], 2),
        "director_cpu_over_bare_pipe_cpu": round(kept["director_cpu_us_per_step"] / pipe[1], 2),
    }
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
