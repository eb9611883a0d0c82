"""Parts 3 and 4: the project's transport over RabbitMQ, against the yardsticks in ``baselines``.

Part 3 first measures the transport alone (``stream``: one sender streams protocol messages to
one receiver through the participant's code path, with the monitor's tap), beside raw pika in
three settings and beside raw pika doing exactly the stream's broker work (the twin). Then each
algorithm run is the real thing, exactly as a user starts it: ``mutexlab run mutex`` (or
``bees``) with zero dwell times — the monitor and every participant as separate OS processes,
every protocol message a confirmed, persistent publish, each step's trace events published to
the monitor as one batch, the trace audited at the end. ``latency_bound_msgs_per_s`` = messages
per entry ÷ synchronization delay, what the run would reach if every handover took exactly the
measured delay and nothing else. ``machine_busy`` is the share of all the machine's cores busy
from the welcome that starts the run to its completion (/proc/stat, sampled every 20 ms), and
``broker_cpu_us_per_msg`` the local broker's CPU over the same span per protocol message (the
message, the monitor's copy, its share of trace batches, statuses, confirms and acks): whether a
run waits for handovers or for the CPU. Figures come from the monitor's JSON summary
(``started``, ``duration``: from the welcome that starts the run to the moment it is complete) and
from the trace it writes (trace events = the audit publishes; synchronization delay in
milliseconds via ``mutexlab.metrics.measure``). ``wall_s`` is the whole command, process
start-up and audit included.

Part 4 runs the bees end to end and compares the message count with the simulator's for the
same configuration and seed (zero dwell in both).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT, CpuSampler, ratio, say, table

DEFAULT_AMQP = "amqp://guest:guest@127.0.0.1:5672/%2F"
DEFAULT_REDIS = "redis://127.0.0.1:6379/0"


def mutexlab_run(args: list[str], url: str, timeout: float, tree: Path | None = None) -> dict:
    """``mutexlab run ... --dwell 0 --json --trace FILE``; the summary plus trace-derived figures.

    ``tree``: run the mutexlab of that source tree (its ``shared`` and root first on PYTHONPATH)
    instead of this one's, so two versions can be measured side by side. ``python_cpu_s`` is the
    CPU time of the command and all its processes (start-up and audit included)."""
    from mutexlab.metrics import measure
    from mutexlab.trace import read_trace

    with tempfile.TemporaryDirectory(prefix="mutexlab-bench-") as tmp:
        trace = Path(tmp) / "trace.jsonl"
        command = [
            sys.executable,
            "-m",
            "mutexlab",
            "run",
            *args,
            "--dwell",
            "0",
            "--json",
            "--trace",
            str(trace),
            "--amqp-url",
            url,
            "--stall-timeout",
            "60",
            "--join-timeout",
            "240",
        ]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        if tree is not None:
            env["PYTHONPATH"] = os.pathsep.join([str(tree / "shared"), str(tree), env.get("PYTHONPATH", "")])
        began = time.perf_counter()
        cpu0 = os.times()
        with CpuSampler(url=url) as cpu:
            proc = subprocess.run(
                command, cwd=tree or ROOT, capture_output=True, text=True, timeout=timeout, env=env
            )
        wall = time.perf_counter() - began
        cpu1 = os.times()
        python_cpu = (cpu1.children_user + cpu1.children_system) - (cpu0.children_user + cpu0.children_system)
        try:
            summary = json.loads(proc.stdout)
        except json.JSONDecodeError:
            raise RuntimeError(
                f"mutexlab run {' '.join(args)} (exit {proc.returncode}) printed no summary: "
                f"{proc.stdout[-400:]} {proc.stderr[-800:]}"
            ) from None
        events = read_trace(trace) if trace.exists() else []
    body = [e for e in events if e.get("event") != "run"]
    metrics = measure(body, unit=1.0)  # unit 1: delays stay in seconds
    duration = summary.get("duration") or 0.0
    messages = sum(summary.get("messages", {}).values())
    entries = sum(summary.get("entries", {}).values())
    # The machine's CPU from the welcome to completion (the processes' start-up left out).
    busy = (
        cpu.window(summary["started"], summary["started"] + duration)
        if summary.get("started") and duration
        else None
    )
    broker_s = busy and busy["broker_cpu_s"]
    return {
        "command": "mutexlab run " + " ".join(args) + " --dwell 0",
        "exit_code": proc.returncode,
        "complete": summary.get("complete"),
        "safe": summary.get("safe"),
        "duration_s": duration,
        "wall_s": round(wall, 2),
        "python_cpu_s": round(python_cpu, 3),
        "broker_cpu_s": broker_s,
        "messages": messages,
        "messages_by_type": summary.get("messages", {}),
        "entries": entries,
        "entries_by_resource": summary.get("entries", {}),
        "notes": summary.get("notes", {}),
        "trace_events": len(body),
        "entries_per_s": round(entries / duration, 2) if duration else None,
        "msgs_per_s": round(messages / duration, 1) if duration else None,
        "msgs_per_entry": round(messages / entries, 2) if entries else None,
        "latency_bound_msgs_per_s": round(messages / entries / metrics.sync_delay, 1)
        if entries and metrics.sync_delay
        else None,
        "one_hop_ms": None if metrics.mean_delay is None else round(metrics.mean_delay * 1000, 2),
        "sync_delay_ms": None if metrics.sync_delay is None else round(metrics.sync_delay * 1000, 2),
        "machine_busy": busy and busy["machine_busy"],
        "broker_cpu_us_per_msg": round(broker_s / messages * 1e6)
        if broker_s is not None and messages
        else None,
        "duplicates": summary.get("duplicates"),
        "dead_letters": summary.get("dead_letters"),
    }


# -- part 3 ---------------------------------------------------------------------------------------
# The transport streams measured (bench/stream.py), as (mode, messages per input): an input answered
# by one message (a REPLY) and a broadcast of N = 5 (a REQUEST to 4 peers). Each, except the traced
# one, also done by raw pika alone with the same broker work (the twin).
STREAM_CASES = (("untapped", 1), ("messages", 1), ("messages", 4), ("traced", 1))


def part3(
    full: bool,
    amqp: str,
    redis_url: str,
    algorithms: list[str] | None = None,
    sizes: tuple[int, ...] = (5, 10),
) -> dict:
    from mutexlab.protocols.registry import CLASSIC

    from . import baselines
    from . import stream as transport_stream

    requests = 30 if full else 2  # enough for a run of a second or more at N = 5 (start-up excluded)
    contention_rounds = 200 if full else 20
    counts = (
        {"transient": 20_000, "confirmed": 5_000, "pipelined": 20_000}
        if full
        else {"transient": 3_000, "confirmed": 1_000, "pipelined": 3_000}
    )
    stream_count = 20_000 if full else 3_000
    ping_rounds = 1_000 if full else 200
    say("  raw pika: throughput and one-hop latency ...")
    repeat = 3 if full else 1
    # Raw pika and the transport stream take turns, best of ``repeat`` each: the machine is shared,
    # and interleaving keeps a quiet (or busy) moment from favouring one side.
    measurements: dict = {}
    for _ in range(repeat):
        for mode in baselines.MODES:
            measurements.setdefault(mode, []).append(baselines.throughput(amqp, counts[mode], mode))
        say("  the transport's own message path (stream), and raw pika doing the same work ...")
        for mode, per_input in STREAM_CASES:
            kwargs = {"tapped": mode != "untapped", "traced": mode == "traced", "per_input": per_input}
            for code in ("transport", "raw pika") if mode != "traced" else ("transport",):
                measurements.setdefault((code, mode, per_input), []).append(
                    transport_stream.stream(amqp, stream_count, raw=code == "raw pika", **kwargs)
                )
    best = {name: _best(rows) for name, rows in measurements.items()}
    raw = {mode: best[mode] for mode in baselines.MODES}
    streams = [best[key] for key in measurements if isinstance(key, tuple)]
    latency = {
        "transient": baselines.latency(amqp, ping_rounds, confirmed=False),
        "confirmed": baselines.latency(amqp, ping_rounds, confirmed=True),
    }
    for row in streams:
        row["vs_raw_transient"] = ratio(row["msgs_per_s"], raw["transient"]["msgs_per_s"], 3)
        row["vs_raw_pipelined"] = ratio(row["msgs_per_s"], raw["pipelined"]["msgs_per_s"], 3)
        twin = best.get(("raw pika", row["mode"], row["per_input"]))
        row["vs_twin"] = (
            ratio(row["msgs_per_s"], twin["msgs_per_s"], 3) if twin and row["code"] == "transport" else None
        )
    contention = []
    for n in sizes:
        say(f"  queue semaphore and Redis locks with {n} processes ...")
        contention.append(baselines.semaphore(amqp, n, contention_rounds))
        contention.append(baselines.redis_lock(redis_url, n, contention_rounds, sleep=0.1))
        contention.append(baselines.redis_lock(redis_url, n, contention_rounds, sleep=0.001))
    runs = []
    for n in sizes:
        for algorithm in algorithms or CLASSIC:
            say(
                f"  mutexlab run mutex -a {algorithm} -N {n} -r {requests} --dwell 0 "
                f"({repeat} run{'s' if repeat > 1 else ''}) ..."
            )
            row = _median_run(
                [
                    mutexlab_run(
                        ["mutex", "-a", algorithm, "-N", str(n), "-r", str(requests)], amqp, timeout=900
                    )
                    for _ in range(repeat)
                ]
            )
            row.update(algorithm=algorithm, n=n, requests_per_node=requests)
            sem = next(c for c in contention if c["processes"] == n and c["mechanism"].startswith("queue"))
            redis_default = next(
                c for c in contention if c["processes"] == n and "sleep=0.1s" in c["mechanism"]
            )
            redis_fast = next(
                c for c in contention if c["processes"] == n and "sleep=0.001s" in c["mechanism"]
            )
            row["vs_semaphore"] = ratio(row["entries_per_s"], sem["entries_per_s"], 3)
            row["vs_redis_default"] = ratio(row["entries_per_s"], redis_default["entries_per_s"], 3)
            row["vs_redis_1ms"] = ratio(row["entries_per_s"], redis_fast["entries_per_s"], 3)
            row["msgs_vs_raw_transient"] = ratio(row["msgs_per_s"], raw["transient"]["msgs_per_s"], 3)
            row["msgs_vs_latency_bound"] = ratio(row["msgs_per_s"], row["latency_bound_msgs_per_s"], 3)
            runs.append(row)
    return {
        "requests_per_node": requests,
        "contention_rounds_per_process": contention_rounds,
        "repeat": repeat,
        "raw": raw,
        "latency": latency,
        "stream": streams,
        "contention": contention,
        "runs": runs,
    }


def _median_run(rows: list[dict]) -> dict:
    """The run with the median entries per second (of an even number, the lower middle one), every
    run's rate kept beside it; a failed run (unsafe or incomplete) is the one reported, whatever
    its rate: a failure is never hidden behind a good repeat."""
    failed = [r for r in rows if not (r.get("safe") and r.get("complete"))]
    middle = (
        failed[0] if failed else sorted(rows, key=lambda r: r["entries_per_s"] or 0)[(len(rows) - 1) // 2]
    )
    return dict(middle, repeats_entries_per_s=[r["entries_per_s"] for r in rows])


def _repeated(values: list | None, single, digits: int = 0) -> str:
    """Every repeat's rate (or the single one), e.g. ``2,412 / 2,484 / 2,386``."""
    return " / ".join(f"{v:,.{digits}f}" for v in (values or [single]) if v is not None)


def _best(rows: list[dict]) -> dict:
    """The fastest of repeated measurements, with every repeat's rate kept beside it."""
    top = dict(max(rows, key=lambda r: r["msgs_per_s"] or 0))
    top["repeats_msgs_per_s"] = [r["msgs_per_s"] for r in rows]
    return top


RATIO_KEYS = (
    "vs_semaphore",
    "vs_redis_default",
    "vs_redis_1ms",
    "msgs_vs_raw_transient",
    "msgs_vs_latency_bound",
)


def _ratios3(row: dict) -> dict:
    """Ratios printed with three decimals, the other figures with one (a ratio an older results
    file lacks stays empty)."""
    return {
        **row,
        **{k: (None if row.get(k) is None else f"{row[k]:.3f}") for k in RATIO_KEYS},
        "msgs_per_entry": None if row["msgs_per_entry"] is None else f"{row['msgs_per_entry']:.2f}",
        "duration_s": f"{row['duration_s']:.2f}",
    }


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.0%}"


def _r3(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def render3(part: dict) -> str:
    raw, lat = part["raw"], part["latency"]
    out = [
        table(
            [
                "raw pika (same broker)",
                "messages",
                "msgs/s",
                "repeats msgs/s",
                "broker CPU µs/msg",
                "one-hop median ms",
                "one-hop p90 ms",
            ],
            [
                [
                    mode,
                    raw[mode]["messages"],
                    raw[mode]["msgs_per_s"],
                    _repeated(raw[mode].get("repeats_msgs_per_s"), raw[mode]["msgs_per_s"]),
                    raw[mode].get("broker_cpu_us_per_msg"),
                    lat[mode]["one_hop_ms_median"] if mode in lat else "–",
                    lat[mode]["one_hop_ms_p90"] if mode in lat else "–",
                ]
                for mode in raw
            ],
        ),
        "",
    ]
    if part.get("stream"):
        out.append(
            table(
                [
                    "stream",
                    "code",
                    "msgs per input",
                    "messages",
                    "received",
                    "tapped",
                    "gaps",
                    "duplicates",
                    "msgs/s",
                    "repeats msgs/s",
                    "broker CPU µs/msg",
                    "÷ raw pika same work",
                    "÷ raw transient",
                    "÷ raw pipelined",
                ],
                [
                    [
                        s["mode"],
                        s.get("code", "transport"),
                        s.get("per_input", 1),
                        s["messages"],
                        s["received"],
                        s["tapped"],
                        s["gaps"],
                        s["duplicates"],
                        s["msgs_per_s"],
                        _repeated(s.get("repeats_msgs_per_s"), s["msgs_per_s"]),
                        s.get("broker_cpu_us_per_msg"),
                        _r3(s.get("vs_twin")),
                        _r3(s["vs_raw_transient"]),
                        _r3(s["vs_raw_pipelined"]),
                    ]
                    for s in part["stream"]
                ],
            )
        )
        out.append("")
    out.append(
        table(
            ["centralized mechanism", "processes", "entries", "entries/s", "overlaps", "longest streak"],
            [
                [
                    c["mechanism"],
                    c["processes"],
                    c["entries"],
                    c["entries_per_s"],
                    c["mutual_exclusion_violations"],
                    c["longest_streak_one_process"],
                ]
                for c in part["contention"]
            ],
        )
    )
    out.append("")
    out.append(
        table(
            [
                "algorithm",
                "N",
                "entries",
                "msgs",
                "msgs/entry",
                "duration s",
                "entries/s",
                "repeats entries/s",
                "msgs/s",
                "sync delay ms",
                "latency bound msgs/s",
                "msgs ÷ bound",
                "msgs ÷ raw",
                "× semaphore",
                "× redis 0.1s",
                "× redis 1ms",
                "send→recv ms",
                "CPU busy",
                "broker CPU µs/msg",
                "safe",
                "complete",
            ],
            [
                [
                    r["algorithm"],
                    r["n"],
                    r["entries"],
                    r["messages"],
                    r["msgs_per_entry"],
                    r["duration_s"],
                    r["entries_per_s"],
                    _repeated(r.get("repeats_entries_per_s"), r["entries_per_s"], 1),
                    r["msgs_per_s"],
                    r["sync_delay_ms"],
                    r.get("latency_bound_msgs_per_s"),
                    r["msgs_vs_latency_bound"],
                    r["msgs_vs_raw_transient"],
                    r["vs_semaphore"],
                    r["vs_redis_default"],
                    r["vs_redis_1ms"],
                    r["one_hop_ms"],
                    _percent(r.get("machine_busy")),
                    r.get("broker_cpu_us_per_msg"),
                    r["safe"],
                    r["complete"],
                ]
                for r in (_ratios3(r) for r in part["runs"])
            ],
            digits=1,
        )
    )
    return "\n".join(out)


# -- part 4 ---------------------------------------------------------------------------------------
def simulate_bees(p: int, reeds: int, seed: int, delay_seed: int | None = None) -> dict:
    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim import SimConfig, Simulation

    setup = make_setup("bees", p, {"reeds": reeds}, seed)
    config = SimConfig(
        seed=seed if delay_seed is None else delay_seed, dwell={"rest": 0, "reed": 0, "flower": 0}
    )
    result = Simulation(setup, config).run()
    return {
        "messages": result.total_messages,
        "messages_by_type": result.messages,
        "entries": result.entries,
        "notes": result.notes,
        "ok": result.ok,
    }


def part4(full: bool, amqp: str, sizes: tuple[int, ...] | None = None, seed: int = 0) -> dict:
    sizes = sizes or ((10, 20, 50) if full else (10,))
    rows = []
    for p in sizes:
        reeds = math.ceil(p / 3)
        say(f"  mutexlab run bees -P {p} -T {reeds} --dwell 0 --seed {seed} ...")
        row = mutexlab_run(["bees", "-P", str(p), "-T", str(reeds), "--seed", str(seed)], amqp, timeout=1800)
        sim = simulate_bees(p, reeds, seed)
        # The model's own spread: the same setup (same initial clocks) under other delay draws.
        spread = [simulate_bees(p, reeds, seed, delay_seed)["messages"] for delay_seed in range(1, 11)]
        row.update(
            bees=p,
            reeds=reeds,
            seed=seed,
            sim_messages=sim["messages"],
            sim_messages_by_type=sim["messages_by_type"],
            sim_entries=sim["entries"],
            sim_ok=sim["ok"],
            ratio_to_sim=ratio(row["messages"], sim["messages"], 4),
            sim_other_delays=[min(spread), max(spread)],
            eggs=row["notes"].get("egg"),
            deaths=row["notes"].get("death"),
        )
        row["type_difference"] = {
            t: row["messages_by_type"].get(t, 0) - sim["messages_by_type"].get(t, 0)
            for t in sorted(set(row["messages_by_type"]) | set(sim["messages_by_type"]))
        }
        rows.append(row)
    return {"seed": seed, "runs": rows}


def render4(part: dict) -> str:
    return table(
        [
            "P",
            "T",
            "duration s",
            "wall s",
            "messages",
            "msgs/s",
            "eggs",
            "simulator messages",
            "ratio",
            "simulator, 10 other delay seeds",
            "difference by type (RabbitMQ − sim)",
            "safe",
            "complete",
        ],
        [
            [
                r["bees"],
                r["reeds"],
                r["duration_s"],
                r["wall_s"],
                r["messages"],
                r["msgs_per_s"],
                r["eggs"],
                r["sim_messages"],
                None if r["ratio_to_sim"] is None else f"{r['ratio_to_sim']:.4f}",
                "–"
                if "sim_other_delays" not in r
                else f"{r['sim_other_delays'][0]:,}–{r['sim_other_delays'][1]:,}",
                ", ".join(f"{t} {d:+d}" for t, d in r["type_difference"].items() if d) or "none",
                r["safe"],
                r["complete"],
            ]
            for r in part["runs"]
        ],
        digits=1,
    )
