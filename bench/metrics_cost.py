"""What ``check --metrics`` costs beside a plain ``check`` of the same configuration, per
configuration docs/check.md lists in its metrics section, optionally beside another tree.

    python -m bench.metrics_cost [--base DIR] [--case NAME ...] [--repeat 1] [--quick]

For each case a fresh interpreter per tree runs the plain check (``run_check``, the default
reductions: what ``check`` runs) and then what ``--metrics`` adds (``checkfigures.run_metrics``
on the check's model), timing each in CPU seconds (``time.process_time()``; the modules of both
are imported before either timer starts). The ratio is ``(check + figures) ÷ check``: what
``check --metrics`` costs over a plain ``check`` (target ≤ 2). Runs are interleaved (base, new,
base, new ...) and the best of ``--repeat`` is kept, so a burst of load on the shared machine
hits both trees alike. The figures of both trees are compared.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import pkgutil
import subprocess
import sys
import time
from pathlib import Path

from .common import ROOT, machine, say, table

# name → (algorithm, processes, options); seed 0. The first nine: docs/check.md's cost table;
# the rest: its table of figures (larger, minutes each).
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
    "lamport-2x3": ("lamport", 2, {"requests": 3}),
    "raymond-3x2": ("raymond", 3, {"requests": 2}),
    "bees-2-2reeds": ("bees", 2, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}),
    "elves-2x2": ("elves", 2, {"pins": 1, "poison": 2, "contracts": 2, "hamsters": [1, 2], "rounds": 2}),
    "ra-3x2": ("ricart-agrawala", 3, {"requests": 2}),
    "lamport-3x1": ("lamport", 3, {"requests": 1}),
    "suzuki-kasami-3x2": ("suzuki-kasami", 3, {"requests": 2}),
    "bees-3": ("bees", 3, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 3}),
}
QUICK = ["ra-3x1", "bees-2"]  # the smoke test's


def one(name: str) -> dict:
    """In a child: the plain check, then what --metrics adds, each timed."""
    from argparse import Namespace

    # what either run imports on its first call (the protocols' modules, the figures' search),
    # imported before either timer starts: with PYTHONDONTWRITEBYTECODE each import compiles its
    # source (the figures' modules: about 10 ms here), a start-up cost of neither engine
    import mutexlab
    import mutexlab.check.metrics  # noqa: F401
    import mutexlab.check.witness  # noqa: F401
    import mutexlab.protocols
    from mutexlab.check.engine import CheckConfig, run_check
    from mutexlab.commands.checkfigures import run_metrics

    for found in pkgutil.walk_packages(mutexlab.protocols.__path__, "mutexlab.protocols."):
        importlib.import_module(found.name)

    algorithm, processes, options = CASES[name]
    config = CheckConfig(algorithm, processes, dict(options))
    cpu = time.process_time()
    result, model = run_check(config)
    check_s = time.process_time() - cpu
    cpu = time.process_time()
    figures = run_metrics(Namespace(metrics=True, metrics_witness=None), config, result, model=model)
    metrics_s = time.process_time() - cpu
    return {
        "mutexlab": mutexlab.__file__,
        "check_s": check_s,
        "check_states": result.states,
        "metrics_s": metrics_s,
        "metrics_states": figures.get("states"),
        "figures": figures.get("resources", figures.get("why", figures.get("stopped"))),
    }


def child(tree: Path, name: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree / "shared"), PYTHONHASHSEED="0")
    done = subprocess.run(
        [sys.executable, "-m", "bench.metrics_cost", "--one", name],
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
        runs: dict[str, list[dict]] = {t: [] for t in trees}
        for _ in range(repeat):
            for tree, path in trees.items():
                runs[tree].append(child(path, name))  # type: ignore[arg-type]
        row: dict = {"case": name, "load": round(os.getloadavg()[0], 2)}
        for tree, got in runs.items():
            check_s = min(r["check_s"] for r in got)
            metrics_s = min(r["metrics_s"] for r in got)
            row[f"{tree}_check_s"] = round(check_s, 3)
            row[f"{tree}_metrics_s"] = round(metrics_s, 3)
            row[f"{tree}_ratio"] = round((check_s + metrics_s) / max(check_s, 1e-6), 2)
            row[f"{tree}_check_states"] = got[0]["check_states"]
            row[f"{tree}_metrics_states"] = got[0]["metrics_states"]
            row[f"{tree}_figures"] = got[0]["figures"]
        if base is not None:
            row["same_figures"] = row["base_figures"] == row["new_figures"]
        rows.append(row)
        say(render([row], base is not None).splitlines()[-1])
    return rows


def render(rows: list[dict], with_base: bool) -> str:
    head = ["case", "check s (worlds)", "--metrics adds s (worlds)", "÷ plain check"]
    if with_base:
        head += ["base adds s", "base ÷ plain", "same figures"]
    head.append("load")
    body = []
    for r in rows:
        line = [
            r["case"],
            f"{r['new_check_s']} ({r['new_check_states']:,})",
            f"{r['new_metrics_s']} ({r['new_metrics_states'] or 0:,})",
            r["new_ratio"],
        ]
        if with_base:
            line += [r["base_metrics_s"], r["base_ratio"], "yes" if r["same_figures"] else "NO"]
        body.append([*line, r["load"]])
    return table(head, body)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--base", type=Path, help="another source tree, measured beside this one")
    parser.add_argument("--new", type=Path, default=ROOT, help="the tree measured (default: this one)")
    parser.add_argument("--case", action="append", choices=CASES, help="a case (repeatable; default all)")
    parser.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK)}")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--json", metavar="FILE")
    parser.add_argument("--one", choices=CASES, help=argparse.SUPPRESS)  # in a child
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(one(args.one)))
        return 0
    info = machine()
    say(f"{info['date']}, {info['git_commit']}, load average {info['load_average']} on {info['nproc']} cores")
    names = args.case or (QUICK if args.quick else list(CASES))
    base = args.base.resolve() if args.base else None
    rows = compare(base, args.new.resolve(), names, args.repeat)
    say(render(rows, base is not None))
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0 if all(r.get("same_figures", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
