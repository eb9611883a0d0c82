"""The streamed audit's cost: ``simulate bees`` audited against ``--no-audit``, in one run.

Each command runs in its own interpreter (``python -m mutexlab simulate bees --bees P --reeds ⌈P/3⌉
--flowers P/10 --seed 1``), audited and with ``--no-audit`` alternated, ``--rounds`` times; the
ratio is audited ÷ ``--no-audit`` CPU seconds (user + system, the command's whole process: start-up,
imports and the verdict included) of the same round, then the median over the rounds. ``--tree``
names source trees to measure side by side (each its ``shared`` first on PYTHONPATH), alternated
within every round, so a before and an after share the machine's load.

    python -m bench.auditcost --sizes 100 200 400 --rounds 3 --tree /path/before --tree .
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from .common import ROOT, children_cpu, machine, save_json, say, table


def command(p: int, audited: bool) -> list[str]:
    args = ["simulate", "bees", "--bees", str(p), "--reeds", str(math.ceil(p / 3))]
    args += ["--flowers", str(max(1, p // 10)), "--seed", "1"]
    return [sys.executable, "-m", "mutexlab", *args, *([] if audited else ["--no-audit"])]


def once(tree: Path, p: int, audited: bool, timeout: float) -> dict:
    """One command of ``tree``: wall and CPU seconds, exit code, and its last output line."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tree / "shared"), str(tree)]))
    cpu, wall = children_cpu(), time.perf_counter()
    proc = subprocess.run(
        command(p, audited), cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
    )
    wall, cpu = time.perf_counter() - wall, children_cpu() - cpu
    lines = proc.stdout.strip().splitlines()
    return {
        "wall": round(wall, 2),
        "cpu": round(cpu, 2),
        "exit": proc.returncode,
        "said": lines[-1] if lines else "",
    }


def run(trees: list[Path], sizes: list[int], rounds: int, timeout: float) -> dict:
    rows = []
    for p in sizes:
        for tree in trees:
            rows.append({"tree": str(tree), "P": p, "rounds": []})
    for r in range(rounds):
        for row in rows:
            tree, p = Path(row["tree"]), row["P"]
            audited = once(tree, p, True, timeout)
            plain = once(tree, p, False, timeout)
            ratio = round(audited["cpu"] / plain["cpu"], 3) if plain["cpu"] else None
            row["rounds"].append({"audited": audited, "no_audit": plain, "cpu_ratio": ratio})
            say(
                f"  round {r + 1}, {tree}, P = {p}: audited {audited['cpu']} CPU-s, --no-audit {plain['cpu']}: ×{ratio}"
            )
    for row in rows:
        ratios = [x["cpu_ratio"] for x in row["rounds"] if x["cpu_ratio"] is not None]
        row["cpu_ratio_median"] = statistics.median(ratios) if ratios else None
        row["cpu_ratio_range"] = [min(ratios), max(ratios)] if ratios else None
    return {"machine": machine(), "rounds": rounds, "rows": rows}


def render(result: dict) -> str:
    return table(
        ["tree", "P", "audited CPU-s", "--no-audit CPU-s", "ratio (median)", "ratio range"],
        [
            [
                row["tree"],
                row["P"],
                "/".join(str(x["audited"]["cpu"]) for x in row["rounds"]),
                "/".join(str(x["no_audit"]["cpu"]) for x in row["rounds"]),
                row["cpu_ratio_median"],
                "–".join(str(v) for v in row["cpu_ratio_range"] or []),
            ]
            for row in result["rows"]
        ],
        digits=2,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tree", type=Path, action="append", help="a source tree (default: this one)")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--json", help="also write the figures here")
    args = parser.parse_args()
    trees = [t.resolve() for t in args.tree] if args.tree else [ROOT]
    result = run(trees, args.sizes, args.rounds, args.timeout)
    save_json(args.json, result)
    say(render(result))


if __name__ == "__main__":
    main()
