"""What ``check --metrics`` costs beside the check itself, in two source trees side by side.

For each case a fresh interpreter per tree runs the plain check (``run_check``, the default
reductions) and then what ``--metrics`` adds (``checkfigures.run_metrics``: the figures' own
search), and reports the CPU time (``time.process_time()``) of each, the worlds each stored
and the figures. Runs are interleaved (base, new, base, new ...) and the best of ``--repeat``
is kept, so a burst of load on the shared machine hits both trees alike::

    python -m bench.check_metrics --base /tmp/base [--new .] [--case ra-3x1] [--repeat 3]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from .common import ROOT, machine, say, table

# name → (algorithm, processes, options); seed 0
CASES = {
    "ra-3x1": ("ricart-agrawala", 3, {"requests": 1}),
    "ra-2x4": ("ricart-agrawala", 2, {"requests": 4}),
    "lamport-2x2": ("lamport", 2, {"requests": 2}),
    "suzuki-kasami-3x1": ("suzuki-kasami", 3, {"requests": 1}),
    "raymond-4x1": ("raymond", 4, {"requests": 1}),
    "maekawa-3x1": ("maekawa", 3, {"requests": 1}),
    "sanders-3x1": ("sanders", 3, {"requests": 1}),
    "bees-2": ("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 2}),
    "elves-2": ("elves", 2, {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 1}),
}


def one(name: str) -> dict:
    """In a child: the plain check, then what --metrics adds, each timed."""
    from argparse import Namespace

    import mutexlab
    from mutexlab.check.engine import CheckConfig, run_check
    from mutexlab.commands.checkfigures import run_metrics

    algorithm, processes, options = CASES[name]
    config = CheckConfig(algorithm, processes, dict(options))
    cpu = time.process_time()
    result, model = run_check(config)
    check_s = time.process_time() - cpu
    # as `check --metrics` calls it in that tree (a tree whose run_metrics takes the check's model)
    given = {"model": model} if "model" in inspect.signature(run_metrics).parameters else {}
    cpu = time.process_time()
    figures = run_metrics(Namespace(metrics=True, metrics_witness=None), config, result, **given)
    metrics_s = time.process_time() - cpu
    return {
        "mutexlab": mutexlab.__file__,
        "check_s": check_s,
        "check_states": result.states,
        "metrics_s": metrics_s,
        "metrics_states": figures.get("states"),
        "figures": figures.get("resources", figures.get("why")),
    }


def child(tree: Path, name: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree / "shared"), PYTHONHASHSEED="0")
    done = subprocess.run(
        [sys.executable, "-m", "bench.check_metrics", "--one", name],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=3600,
        check=True,
    )
    out = json.loads(done.stdout.strip().splitlines()[-1])
    if not Path(out["mutexlab"]).is_relative_to(tree):
        raise SystemExit(f"{tree}: the child imported {out['mutexlab']}, not this tree's mutexlab")
    return out


def compare(base: Path | None, new: Path, names: list[str], repeat: int) -> list[dict]:
    rows = []
    trees = {"base": base, "new": new} if base is not None else {"new": new}
    for name in names:
        say(f"  {name}: best of {repeat}, interleaved ...")
        runs: dict[str, list[dict]] = {tree: [] for tree in trees}
        for _ in range(repeat):
            for tree, path in trees.items():
                runs[tree].append(child(path, name))
        row: dict = {"case": name}
        for tree, got in runs.items():
            row[f"{tree}_check_s"] = round(min(r["check_s"] for r in got), 3)
            row[f"{tree}_metrics_s"] = round(min(r["metrics_s"] for r in got), 3)
            row[f"{tree}_ratio"] = round(row[f"{tree}_metrics_s"] / max(row[f"{tree}_check_s"], 1e-3), 2)
            row[f"{tree}_check_states"] = got[0]["check_states"]
            row[f"{tree}_metrics_states"] = got[0]["metrics_states"]
            row[f"{tree}_figures"] = got[0]["figures"]
        if base is not None:
            row["same_figures"] = row["base_figures"] == row["new_figures"]
        rows.append(row)
    return rows


def render(rows: list[dict]) -> str:
    trees = [t for t in ("base", "new") if f"{t}_check_s" in rows[0]]
    head = ["case", "check s (worlds)"]
    for tree in trees:
        head += [f"{tree}: --metrics adds s (worlds)", f"{tree}: ÷ check"]
    if "base" in trees:
        head.append("same figures")
    body = []
    for r in rows:
        line = [r["case"], f"{r['new_check_s']} ({r['new_check_states']:,})"]
        for tree in trees:
            line += [f"{r[f'{tree}_metrics_s']} ({r[f'{tree}_metrics_states'] or 0:,})", r[f"{tree}_ratio"]]
        if "base" in trees:
            line.append("yes" if r["same_figures"] else "no (base: none defined)")
        body.append(line)
    return table(head, body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.check_metrics", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--base", type=Path, help="a tree to compare against (a checkout's root)")
    parser.add_argument("--new", type=Path, default=ROOT, help="the tree measured (default: this one)")
    parser.add_argument("--case", action="append", choices=CASES, help="a case (repeatable; default all)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per tree and case (default 3)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows and the machine as JSON")
    parser.add_argument("--one", choices=CASES, help=argparse.SUPPRESS)  # in a child
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    start = machine()
    base = args.base.resolve() if args.base else None
    rows = compare(base, args.new.resolve(), args.case or list(CASES), args.repeat)
    say(render(rows))
    say(f"load average: {start['load_average']} at the start, {os.getloadavg()} at the end")
    if args.json:
        Path(args.json).write_text(json.dumps({"machine": start, "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
