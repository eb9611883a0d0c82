"""The simulator optimisations, measured one step at a time on this machine (part 2).

Each step is a set of file versions from git history (``sim/engine.py``, ``protocols/bees.py``,
``messages.py``, ``protocol.py``) dropped into a copy of the current library, so every other
module is the same in all steps. The cases run interleaved (step 0, 1, 2, 3, step 0, 1, ...) in fresh
interpreters, and the best of ``repeat`` runs is kept, so a burst of load on a shared machine
hits every step alike. Every step must produce the same message and event counts (the traces
themselves are compared by ``python -m bench.tracecheck``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .common import ROOT, run_json, say, table
from .simspeed import bees_case, ra_case

FILES = {
    "engine": "shared/mutexlab/sim/engine.py",
    "bees": "shared/mutexlab/protocols/bees.py",
    "messages": "shared/mutexlab/messages.py",
    "protocol": "shared/mutexlab/protocol.py",
}
# messages.py and protocol.py as they were through step 3 (a step that names no commit for them).
BEFORE = {"messages": "8a54f30", "protocol": "8a54f30"}

# (name, {file: commit}); the commits are in this repository's history.
STEPS = [
    ("0 original", {"engine": "edb5d24", "bees": "8fa876e"}),
    ("1 plain run loop (deliver/apply/transmit inlined)", {"engine": "e991f01", "bees": "8fa876e"}),
    ("2 bees: subset test, one sort, ACK-count pre-check", {"engine": "e991f01", "bees": "cb070ad"}),
    ("3 inline exponential draw, no id strings", {"engine": "cb2fc0e", "bees": "cb070ad"}),
    (
        "4 bees: requests sorted again only after a new one; live-ACK counts",
        {"engine": "cb2fc0e", "bees": "9d9ee79"},
    ),
    (
        "5 bees: ACKs built without validation (Model.trusted)",
        {"engine": "cb2fc0e", "bees": "57dd35e", "messages": "57dd35e"},
    ),
    (
        "6 engine: per-sender link table, sequence number in a local",
        {"engine": "6914f92", "bees": "57dd35e", "messages": "57dd35e"},
    ),
    (
        "7 Send.__init__ through its slot setters",
        {"engine": "6914f92", "bees": "57dd35e", "messages": "57dd35e", "protocol": "aa6f133"},
    ),
]


def _show(commit: str, path: str) -> str:
    return subprocess.run(
        ["git", "show", f"{commit}:{path}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout


def build(workdir: Path) -> list[tuple[str, Path]]:
    """One library copy per step."""
    source = ROOT / "shared" / "mutexlab"
    out = []
    for index, (name, commits) in enumerate(STEPS):
        lib = workdir / f"step{index}"
        shutil.copytree(source, lib / "mutexlab", ignore=shutil.ignore_patterns("__pycache__"))
        for key, path in FILES.items():
            commit = commits.get(key) or BEFORE[key]
            (lib / Path(path).relative_to("shared")).write_text(_show(commit, path))
        out.append((name, lib))
    return out


def run(cases: list[dict] | None = None, repeat: int = 3) -> dict:
    cases = cases or [bees_case(100), bees_case(200), ra_case(100, 10)]
    commits = sorted({c for _, step in STEPS for c in step.values()} | set(BEFORE.values()))
    try:
        for commit in commits:
            subprocess.run(
                ["git", "cat-file", "-e", f"{commit}^{{commit}}"], cwd=ROOT, check=True, capture_output=True
            )
    except (OSError, subprocess.CalledProcessError):
        return {"skipped": "the optimisation commits are not in this checkout's git history"}
    rows = []
    with tempfile.TemporaryDirectory(prefix="mutexlab-ladder-") as tmp:
        steps = build(Path(tmp))
        for case in cases:
            say(f"  optimisation steps on {case['algorithm']} with {case['processes']} processes ...")
            runs: dict[str, list[dict]] = {name: [] for name, _ in steps}
            for _ in range(repeat):
                for name, lib in steps:
                    env = {"PYTHONPATH": str(lib) + os.pathsep + os.environ.get("PYTHONPATH", "")}
                    runs[name].append(
                        run_json(["-m", "bench.simspeed", "--one", json.dumps(case)], timeout=900, env=env)
                    )
            base = None
            for name, _ in steps:
                best_cpu = min(r["cpu_s"] for r in runs[name])
                best_wall = min(r["wall_s"] for r in runs[name])
                first = runs[name][0]
                row = {
                    "case": f"{case['algorithm']} {case['processes']}",
                    "step": name,
                    "messages": first["messages"],
                    "events": first["events"],
                    "cpu_s": best_cpu,
                    "wall_s": best_wall,
                    "msgs_per_cpu_s": round(first["messages"] / best_cpu),
                    "msgs_per_s": round(first["messages"] / best_wall),
                }
                base = base or row
                row["speedup_cpu"] = round(base["cpu_s"] / best_cpu, 2)
                row["same_counts_as_original"] = (row["messages"], row["events"]) == (
                    base["messages"],
                    base["events"],
                )
                rows.append(row)
    return {"repeat": repeat, "steps": [s[0] for s in STEPS], "rows": rows}


def render(part: dict) -> str:
    if "skipped" in part:
        return f"(optimisation steps skipped: {part['skipped']})"
    return table(
        [
            "case",
            "step",
            "messages",
            "best CPU s",
            "msgs/CPU-s",
            "best wall s",
            "msgs/s",
            "speed-up (CPU)",
            "same counts",
        ],
        [
            [
                r["case"],
                r["step"],
                r["messages"],
                r["cpu_s"],
                r["msgs_per_cpu_s"],
                r["wall_s"],
                r["msgs_per_s"],
                r["speedup_cpu"],
                r["same_counts_as_original"],
            ]
            for r in part["rows"]
        ],
        digits=3,
    )


if __name__ == "__main__":
    part = run(repeat=int(sys.argv[1]) if len(sys.argv) > 1 else 3)
    say(render(part))
