"""The effect of ``mutexlab check``'s reductions, per protocol, measured side by side in one run.

    python -m bench.check_reductions [--timeout 600] [--only NAME ...] [--json FILE]

Each configuration is checked three times — ``--no-reduction``, every reduction but
partial-order reduction (``--no-partial-order``), and every reduction — and the states,
transitions, wall time, states/s, peak memory and verdict of each are printed. The verdicts must
agree; the states never grow from one column to the next (the reductions only merge worlds or
skip interleavings).
"""

from __future__ import annotations

import sys

from bench.check_largest import BEES, arguments, run
from bench.common import save_json

CONFIGS: dict[str, list[str]] = {
    "ricart-agrawala": ["mutex", "-a", "ricart-agrawala", "-N", "3", "--requests", "1"],
    "ricart-agrawala ×2": ["mutex", "-a", "ricart-agrawala", "-N", "3", "--requests", "2"],
    "lamport": ["mutex", "-a", "lamport", "-N", "3", "--requests", "1"],
    "maekawa": ["mutex", "-a", "maekawa", "-N", "3", "--requests", "1"],
    "sanders": ["mutex", "-a", "sanders", "-N", "3", "--requests", "1"],
    "suzuki-kasami": ["mutex", "-a", "suzuki-kasami", "-N", "3", "--requests", "1"],
    "raymond": ["mutex", "-a", "raymond", "-N", "3", "--requests", "2"],
    "bees": BEES + ["--eggs", "1", "--cocoons", "1"],
    "elves": ["elves", "-N", "2", "--rounds", "2"],
    "elves 3": ["elves", "-N", "3", "--contracts", "1"],
}
MODES = {"none": ["--no-reduction"], "no POR": ["--no-partial-order"], "all": []}


def main(argv: list[str] | None = None) -> int:
    args = arguments(__doc__ or "", list(CONFIGS), argv)
    rows = []
    for name in args.only or CONFIGS:
        for mode, flags in MODES.items():
            row = run(CONFIGS[name] + flags, args.timeout, args.max_memory)
            row["protocol"], row["mode"] = name, mode
            rows.append(row)
            if row.get("states") is not None:
                rate = row.get("states_per_second") or 0
                print(
                    f"{name:<20} {mode:<7} {row['states']:>11,} states {row['transitions']:>12,} transitions "
                    f"{row['seconds']:>8.1f} s {rate:>8,} states/s {row['peak_mb']:>6.0f} MB  {row['verdict']}",
                    flush=True,
                )
            else:
                print(f"{name:<20} {mode:<7} {row['verdict']}", flush=True)
    save_json(args.json, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
