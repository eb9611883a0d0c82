"""The effect of ``mutexlab check``'s reductions, per protocol, measured side by side in one run.

    python -m bench.check_reductions [--timeout 600] [--only NAME ...] [--metrics] [--json FILE]

Each configuration is checked three times — ``--no-reduction``, every reduction but
partial-order reduction (``--no-partial-order``), and every reduction — and the states,
transitions, wall time, states/s, peak memory and verdict of each are printed. The verdicts must
agree; the states never grow from one column to the next (the reductions only merge worlds or
skip interleavings). A check that times out is shown as such, never as a pass. ``--metrics``:
the last run also computes ``check --metrics``' figures, and what they add is printed beside the
check's own seconds (both from the check's JSON), with the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

from bench.common import save_json

RA = ["mutex", "-a", "ricart-agrawala", "-N", "3", "--requests"]
CONFIGS: dict[str, list[str]] = {"ricart-agrawala": RA + ["1"], "ricart-agrawala ×2": RA + ["2"]}
for name in ("lamport", "maekawa", "sanders", "suzuki-kasami"):
    CONFIGS[name] = ["mutex", "-a", name, "-N", "3", "--requests", "1"]
CONFIGS["raymond"] = ["mutex", "-a", "raymond", "-N", "3", "--requests", "2"]
CONFIGS["bees"] = ["bees", "-P", "3", "-K", "1", "-T", "1", "--zero-clocks", "--eggs", "1", "--cocoons", "1"]
CONFIGS["elves"] = ["elves", "-N", "2", "--rounds", "2"]
CONFIGS["elves 3"] = ["elves", "-N", "3", "--contracts", "1"]

MODES = {"none": ["--no-reduction"], "no POR": ["--no-partial-order"], "all": []}


def run(argv: list[str], timeout: float | None, max_memory: float, env: dict | None = None) -> dict:
    """``mutexlab check ARGV --json`` in a fresh interpreter (``env``: variables set for it): its
    figures, ``wall`` its wall time."""
    cmd = [sys.executable, "-m", "mutexlab", "check", *argv, "--json", "--max-memory", str(max_memory)]
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
        )
    except subprocess.TimeoutExpired:
        return {"argv": argv, "verdict": f"timeout after {timeout:g} s", "complete": False}
    wall = time.perf_counter() - started
    try:
        out = json.loads(proc.stdout)
    except json.JSONDecodeError:
        failed = f"failed (exit {proc.returncode}): {proc.stderr.strip()[-200:]}"
        return {"argv": argv, "verdict": failed, "complete": False}
    out["argv"], out["wall"], out["exit"] = argv, wall, proc.returncode
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--max-memory", type=float, default=4000)
    p.add_argument("--only", nargs="+", choices=list(CONFIGS))
    p.add_argument("--metrics", action="store_true", help="what --metrics adds to the last run")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    when = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    print(f"{when}, load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores", flush=True)
    rows = []
    for name in args.only or CONFIGS:
        for mode, flags in MODES.items():
            extra = ["--metrics"] if args.metrics and mode == "all" else []
            row = run(CONFIGS[name] + flags + extra, args.timeout, args.max_memory)
            row["protocol"], row["mode"] = name, mode
            rows.append(row)
            figures = row.get("states") is not None and (
                f"{row['states']:>11,} states {row['transitions']:>12,} transitions {row['seconds']:>8.1f} s "
                f"{row.get('states_per_second') or 0:>8,} states/s {row['peak_mb']:>6.0f} MB  "
            )
            metrics = row.get("metrics") if isinstance(row.get("metrics"), dict) else {}
            added = metrics.get("seconds")
            cost = (
                f"  --metrics adds {added:.3f} s (÷ check {added / max(row['seconds'], 1e-3):.2f})"
                if added
                else ""
            )
            print(f"{name:<20} {mode:<7} {figures or ''}{row['verdict']}{cost}", flush=True)
    save_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
