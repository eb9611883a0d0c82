"""Part 2: simulator speed and scaling.

Each case runs in a fresh interpreter (so peak memory is the case's own): wall and CPU time of
``Simulation.run()`` with tracing off, simulated messages per second, the peak resident set
(``VmHWM``, with the interpreter and imports: ``rss_baseline``, taken just before the run, says
how much). Wall time is the best of ``repeat`` runs (the least disturbed on a shared machine).

Bees: P bees, K = 3 flowers, T = ⌈P/3⌉ reeds (3 bees fit on a reed with the default 5 eggs and
15 cocoons), so every bee lays all its eggs. Ricart–Agrawala: N nodes, ``requests`` each.
"""

from __future__ import annotations

import contextlib
import json
import math
import resource
import sys
import time
from pathlib import Path

from .common import run_json, say, table

TARGET = 100_000  # simulated messages per second, tracing off


def cases(full: bool) -> list[dict]:
    bee_sizes, ra_sizes = ((10, 50, 100, 200), (10, 50, 100)) if full else ((10, 50), (10, 50))
    bees = [("bees", p, {"reeds": math.ceil(p / 3)}) for p in bee_sizes]
    ra = [("ricart-agrawala", n, {"requests": 10 if full else 5}) for n in ra_sizes]
    return [{"algorithm": a, "processes": p, "options": o, "seed": 0} for a, p, o in bees + ra]


def peak_rss_kib() -> int:
    """This process's peak resident set (VmHWM; ``ru_maxrss`` survives ``execve`` on Linux). Like
    ``mutexlab.check.result.peak_mb``, which is not imported so as not to weigh on the figure."""
    with contextlib.suppress(OSError, StopIteration):
        lines = Path("/proc/self/status").read_text(encoding="ascii").splitlines()
        return int(next(line for line in lines if line.startswith("VmHWM:")).split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def one(case: dict) -> dict:
    """Run one case in this process; returns the measurements."""
    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim import SimConfig, Simulation

    setup = make_setup(case["algorithm"], case["processes"], case["options"], case["seed"])
    sim = Simulation(setup, SimConfig(seed=case["seed"]))
    baseline = peak_rss_kib()
    cpu, wall = time.process_time(), time.perf_counter()
    result = sim.run()
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {
        "wall_s": round(wall, 4),
        "cpu_s": round(cpu, 4),
        "messages": result.total_messages,
        "events": result.events,
        "entries": result.entries,
        "ok": result.ok,
        "virtual_duration": round(result.duration, 2),
        "rss_baseline_kib": baseline,
        "rss_peak_kib": peak_rss_kib(),
    }


def measure(case: dict, repeat: int) -> dict:
    runs = [run_json(["-m", "bench.simspeed", json.dumps(case)], timeout=900) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["wall_s"])
    out = dict(case, **{k: best[k] for k in ("messages", "events", "entries", "ok", "virtual_duration")})
    out |= {"wall_s": best["wall_s"], "cpu_s": best["cpu_s"]}
    out["wall_s_all"] = [r["wall_s"] for r in runs]
    out["msgs_per_s"] = round(best["messages"] / best["wall_s"]) if best["wall_s"] else None
    out["msgs_per_cpu_s"] = round(best["messages"] / best["cpu_s"]) if best["cpu_s"] else None
    out["rss_baseline_mib"] = round(best["rss_baseline_kib"] / 1024, 1)
    out["rss_peak_mib"] = round(max(r["rss_peak_kib"] for r in runs) / 1024, 1)
    return out


def growth(rows: list[dict], key: str) -> None:
    """Adds the local exponent of ``key`` between consecutive sizes: cost ∝ size^exponent."""
    for previous, row in zip(rows, rows[1:]):
        if row[key] and previous[key]:
            row[f"{key}_exponent"] = round(
                math.log(row[key] / previous[key]) / math.log(row["processes"] / previous["processes"]), 2
            )


def run(full: bool) -> dict:
    repeat = 3 if full else 1
    results = []
    for case in cases(full):
        say(f"  simulating {case['algorithm']} with {case['processes']} processes ...")
        results.append(measure(case, repeat))
    for algorithm in ("bees", "ricart-agrawala"):
        rows = [r for r in results if r["algorithm"] == algorithm]
        growth(rows, "messages")
        growth(rows, "wall_s")
    return {"target_msgs_per_s": TARGET, "repeat": repeat, "cases": results}


def render(part: dict) -> str:
    return table(
        ["algorithm", "P/N", "T (bees) / requests", "messages", "msg exp.", "time s", "time exp."]
        + ["msgs/s", "msgs/CPU-s", "peak RSS MiB", "RSS before run", "complete"],
        [
            [r["algorithm"], r["processes"], r["options"].get("reeds", r["options"].get("requests"))]
            + [r["messages"], r.get("messages_exponent"), r["wall_s"], r.get("wall_s_exponent")]
            + [r["msgs_per_s"], r["msgs_per_cpu_s"], r["rss_peak_mib"], r["rss_baseline_mib"]]
            + [r["ok"]]
            for r in part["cases"]
        ],
    )


if __name__ == "__main__":  # one case in this fresh interpreter, for ``measure``: its JSON on stdout
    print(json.dumps(one(json.loads(sys.argv[1]))))
