"""Part 2: simulator speed and scaling (issue 7).

Each case runs in a fresh interpreter (so peak memory is the case's own): wall and CPU time of
``Simulation.run()`` with tracing off, simulated messages per second, the peak resident set
(``VmHWM``, which includes the interpreter and imports: the ``rss_baseline`` taken just
before the run says how much) and, in a second run, the peak of Python allocations during the
run (``tracemalloc``; slower, so timed separately). Wall time is the best of ``repeat`` runs
(the machine is shared: the minimum is the least disturbed measurement).

Bees: P bees, K = 3 flowers, T = ⌈P/3⌉ reeds (3 bees fit on a reed with the default 5 eggs and
15 cocoons), so every bee lays all its eggs. Ricart–Agrawala: N nodes, ``requests`` each.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import sys
import time

from .common import run_json, say, table

TARGET = 100_000  # simulated messages per second, tracing off


def bees_case(p: int) -> dict:
    return {"algorithm": "bees", "processes": p, "options": {"reeds": math.ceil(p / 3)}, "seed": 0}


def ra_case(n: int, requests: int) -> dict:
    return {"algorithm": "ricart-agrawala", "processes": n, "options": {"requests": requests}, "seed": 0}


def cases(full: bool) -> list[dict]:
    bees = (10, 50, 100, 200) if full else (10, 50)
    ra = (10, 50, 100) if full else (10, 50)
    return [bees_case(p) for p in bees] + [ra_case(n, 10 if full else 5) for n in ra]


def peak_rss_kib() -> int:
    """This process's peak resident set (VmHWM). Not ``ru_maxrss``: Linux carries that across
    ``execve``, so a child would report its parent's peak."""
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def one(case: dict, memory: bool = False) -> dict:
    """Run one case in this process; returns the measurements."""
    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim import SimConfig, Simulation

    setup = make_setup(case["algorithm"], case["processes"], case["options"], case["seed"])
    sim = Simulation(setup, SimConfig(seed=case["seed"]))
    baseline = peak_rss_kib()
    if memory:
        import tracemalloc

        tracemalloc.start()
        result = sim.run()
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return {"tracemalloc_peak_kib": round(peak / 1024)}
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


def measure(case: dict, repeat: int, memory: bool) -> dict:
    runs = [run_json(["-m", "bench.simspeed", "--one", json.dumps(case)], timeout=900) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["wall_s"])
    out = dict(case, **{k: best[k] for k in ("messages", "events", "entries", "ok", "virtual_duration")})
    out["wall_s"] = best["wall_s"]
    out["cpu_s"] = best["cpu_s"]
    out["wall_s_all"] = [r["wall_s"] for r in runs]
    out["msgs_per_s"] = round(best["messages"] / best["wall_s"]) if best["wall_s"] else None
    out["msgs_per_cpu_s"] = round(best["messages"] / best["cpu_s"]) if best["cpu_s"] else None
    out["rss_baseline_mib"] = round(best["rss_baseline_kib"] / 1024, 1)
    out["rss_peak_mib"] = round(max(r["rss_peak_kib"] for r in runs) / 1024, 1)
    if memory:
        mem = run_json(["-m", "bench.simspeed", "--one", json.dumps(case), "--memory"], timeout=1800)
        out["tracemalloc_peak_mib"] = round(mem["tracemalloc_peak_kib"] / 1024, 2)
    return out


def growth(rows: list[dict], key: str) -> None:
    """Adds the local exponent of ``key`` between consecutive sizes: cost ∝ size^exponent."""
    previous = None
    for row in rows:
        if previous is not None and row[key] and previous[key]:
            row[f"{key}_exponent"] = round(
                math.log(row[key] / previous[key]) / math.log(row["processes"] / previous["processes"]), 2
            )
        previous = row


def run(full: bool) -> dict:
    repeat = 3 if full else 1
    results = []
    for case in cases(full):
        say(f"  simulating {case['algorithm']} with {case['processes']} processes ...")
        results.append(measure(case, repeat, memory=True))
    for algorithm in ("bees", "ricart-agrawala"):
        rows = [r for r in results if r["algorithm"] == algorithm]
        growth(rows, "messages")
        growth(rows, "wall_s")
    from . import ladder

    steps = (
        ladder.run([bees_case(100), bees_case(200), ra_case(100, 10)], repeat=5)
        if full
        else ladder.run([bees_case(50), ra_case(50, 5)], repeat=1)
    )
    return {"target_msgs_per_s": TARGET, "repeat": repeat, "cases": results, "optimisation_steps": steps}


def render(part: dict) -> str:
    rows = [
        [
            r["algorithm"],
            r["processes"],
            r["options"].get("reeds", r["options"].get("requests")),
            r["messages"],
            r.get("messages_exponent"),
            r["wall_s"],
            r.get("wall_s_exponent"),
            r["msgs_per_s"],
            r["msgs_per_cpu_s"],
            r["rss_peak_mib"],
            r["rss_baseline_mib"],
            r.get("tracemalloc_peak_mib"),
            r["ok"],
        ]
        for r in part["cases"]
    ]
    from . import ladder

    text = table(
        [
            "algorithm",
            "P/N",
            "T (bees) / requests",
            "messages",
            "msg exp.",
            "time s",
            "time exp.",
            "msgs/s",
            "msgs/CPU-s",
            "peak RSS MiB",
            "RSS before run",
            "tracemalloc peak MiB",
            "complete",
        ],
        rows,
    )
    if "optimisation_steps" in part:
        text += "\n\n" + ladder.render(part["optimisation_steps"])
    return text


def scale_run(p: int, events: int, audit: bool, profile: str | None = None) -> dict:
    """The first ``events`` events of ``simulate bees --bees P`` as bench.scale sizes it (T = ⌈P/3⌉,
    K = P/10, seed 1), audited as the command does when ``audit``: the CPU time of the simulation
    alone (no start-up, no verdict), for A/B runs and profiles at P = 300–1000 without the whole run.
    ``profile``: a file to write a cProfile of the run to."""
    from mutexlab.commands.longrun import audit_trace
    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim import SimConfig, Simulation

    setup = make_setup("bees", p, {"reeds": math.ceil(p / 3), "flowers": max(1, p // 10)}, 1)
    trace, auditor = audit_trace(setup, None) if audit else (None, None)
    if isinstance(trace, str):
        raise SystemExit(trace)
    sim = Simulation(setup, SimConfig(seed=1, max_events=events), trace, trace_bodies=False)
    cpu = time.process_time()
    if profile:
        import cProfile

        out: dict = {}
        cProfile.runctx("out['result'] = sim.run()", globals(), {"sim": sim, "out": out}, profile)
        result = out["result"]
    else:
        result = sim.run()
    cpu = time.process_time() - cpu
    done = sim.events
    return {
        "P": p,
        "audit": audit,
        "events": done,
        "cpu_s": round(cpu, 2),
        "us_per_event": round(cpu / done * 1e6, 2) if done else None,
        "whole_run": not result.truncated,
        "rss_peak_mib": round(peak_rss_kib() / 1024, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.simspeed")
    parser.add_argument(
        "--bees",
        type=int,
        metavar="P",
        help="one run of the first --events events of simulate bees --bees P (T = P/3, K = P/10, seed 1)",
    )
    parser.add_argument("--events", type=int, default=10**8, help="with --bees: events to run")
    parser.add_argument("--audit", action="store_true", help="with --bees: audited, as the command runs")
    parser.add_argument("--profile", metavar="FILE", help="with --bees: write a cProfile of the run")
    parser.add_argument("--one", metavar="CASE_JSON", help="(internal) run one case, print its JSON")
    parser.add_argument("--memory", action="store_true", help="(internal) with --one: tracemalloc peak only")
    parser.add_argument("--full", action="store_true")
    args = parser.parse_args(argv)
    if args.bees is not None:
        if args.bees < 2 or args.events < 1:
            parser.error("--bees takes at least 2 bees and --events at least 1")
        print(json.dumps(scale_run(args.bees, args.events, args.audit, args.profile)))
        return 0
    if args.one:
        print(json.dumps(one(json.loads(args.one), args.memory)))
        return 0
    part = run(args.full)
    say(render(part))
    return 0


if __name__ == "__main__":
    sys.exit(main())
