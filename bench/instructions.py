"""The simulator's speed in two source trees, compared independently of the machine's load.

CPU time on a shared machine moves by 10% and more with the load; instruction counts do not. For
every case this counts, under valgrind (``--tool=cachegrind``, no cache simulation), what
``Simulation.run()`` costs: an interpreter that builds the setup and runs it, minus one that only
builds it (with ``PYTHONHASHSEED=0`` a count repeats to within a few thousand instructions);
beside it, the best of ``--repeat`` CPU times of the run, interleaved in fresh interpreters. Each
tree is a checkout (``git worktree add /tmp/base <commit>``), reached by a link of one length for
both (counts move with the import path's length), its ``shared/`` first on ``PYTHONPATH``; each
child checks that it imported that tree's ``mutexlab``::

    python -m bench.instructions --base /tmp/base [--new .] [--case ra-50] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, machine, save_json, say, table

# name → (algorithm, processes, options); seed 0, tracing off, as bench.simspeed runs them.
CASES = {
    "bees-50": ("bees", 50, {"reeds": 17}),
    "bees-100": ("bees", 100, {"reeds": 34}),
    "elves-20": ("elves", 20, {"rounds": 20, "contracts": 10}),
    "lamport-30": ("lamport", 30, {"requests": 10}),
    "ricart-agrawala-50": ("ricart-agrawala", 50, {"requests": 10}),
    "maekawa-49": ("maekawa", 49, {"requests": 10}),
    "sanders-49": ("sanders", 49, {"requests": 10}),
    "suzuki-kasami-50": ("suzuki-kasami", 50, {"requests": 10}),
    "raymond-100": ("raymond", 100, {"requests": 10}),
}
VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]


def one(name: str, setup_only: bool) -> dict:
    """In a child: build the case's setup and (unless ``setup_only``) run it."""
    import mutexlab
    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim import SimConfig, Simulation

    algorithm, processes, options = CASES[name]
    simulation = Simulation(make_setup(algorithm, processes, options, 0), SimConfig(seed=0))
    out: dict = {"mutexlab": mutexlab.__file__}
    if not setup_only:
        cpu = time.process_time()
        result = simulation.run()
        out["cpu_s"] = time.process_time() - cpu
        out["messages"], out["events"], out["ok"] = result.total_messages, result.events, result.ok
    return out


def child(tree: Path, name: str, setup_only: bool = False, valgrind: bool = False) -> dict:
    command = [sys.executable, "-m", "bench.instructions", "--one", name]
    if setup_only:
        command.append("--setup-only")
    if valgrind:
        command = VALGRIND + command
    env = dict(os.environ, PYTHONPATH=str(tree / "shared"), PYTHONHASHSEED="0")
    done = subprocess.run(
        command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=3600, check=True
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(out["mutexlab"]).is_relative_to(tree):
        raise SystemExit(f"{tree}: the child imported {out['mutexlab']}, not this tree's mutexlab")
    if valgrind:
        refs = re.search(r"I\s+refs:\s+([\d,]+)", done.stderr)
        if refs is None:
            raise SystemExit(f"no instruction count in valgrind's output:\n{done.stderr[-2000:]}")
        out["instructions"] = int(refs.group(1).replace(",", ""))
    return out


def instructions(tree: Path, name: str) -> tuple[int, dict]:
    """The instructions ``Simulation.run()`` executes, and the full run's output."""
    full = child(tree, name, valgrind=True)
    return full["instructions"] - child(tree, name, setup_only=True, valgrind=True)["instructions"], full


def compare(base: Path, new: Path, names: list[str], repeat: int) -> list[dict]:
    rows = []
    for name in names:
        say(f"  {name}: instructions ...")
        base_i, base_out = instructions(base, name)
        new_i, new_out = instructions(new, name)
        if (base_out["messages"], base_out["events"]) != (new_out["messages"], new_out["events"]):
            raise SystemExit(f"{name}: the trees ran different simulations: {base_out} vs {new_out}")
        say(f"  {name}: CPU time, best of {repeat} interleaved ...")
        cpu: dict[str, list[float]] = {"base": [], "new": []}
        for _ in range(repeat):
            cpu["base"].append(child(base, name)["cpu_s"])
            cpu["new"].append(child(new, name)["cpu_s"])
        rows.append(
            {
                "case": name,
                "messages": new_out["messages"],
                "base_instructions": base_i,
                "new_instructions": new_i,
                "instructions_ratio": round(new_i / base_i, 4),
                "base_cpu_s": round(min(cpu["base"]), 4),
                "new_cpu_s": round(min(cpu["new"]), 4),
                "cpu_ratio": round(min(cpu["new"]) / min(cpu["base"]), 3),
            }
        )
    return rows


def render(rows: list[dict]) -> str:
    def minstr(r: dict, tree: str) -> float:
        return round(r[f"{tree}_instructions"] / 1e6, 1)

    return table(
        ["case", "messages", "base Minstr", "new Minstr", "new/base", "base CPU s", "new CPU s", "new/base"],
        [
            [r["case"], r["messages"], minstr(r, "base"), minstr(r, "new"), f"{r['instructions_ratio']:.3f}"]
            + [r["base_cpu_s"], r["new_cpu_s"], f"{r['cpu_ratio']:.3f}"]
            for r in rows
        ],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.instructions", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--base", type=Path, help="the tree to compare against (a checkout's root)")
    parser.add_argument("--new", type=Path, default=ROOT, help="the tree measured (default: this one)")
    parser.add_argument("--case", action="append", choices=CASES, help="a case (repeatable; default all)")
    parser.add_argument("--repeat", type=int, default=5, help="CPU-time runs per tree and case (default 5)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows and the machine as JSON")
    parser.add_argument("--one", choices=CASES, help=argparse.SUPPRESS)  # in a child
    parser.add_argument("--setup-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one, args.setup_only)))
        return 0
    if args.base is None:
        parser.error("--base is required")
    start = machine()
    with tempfile.TemporaryDirectory(prefix="mutexlab-instructions-") as tmp:  # both trees by links
        links = Path(tmp, "a"), Path(tmp, "b")  # of one length: counts move with the path's (×1.065 seen)
        for link, tree in zip(links, (args.base, args.new), strict=True):
            link.symlink_to(tree.resolve())
        rows = compare(*links, args.case or list(CASES), args.repeat)
    say(render(rows))
    say(f"load average: {start['load_average']} at the start, {os.getloadavg()} at the end")
    save_json(args.json, {"machine": start, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
