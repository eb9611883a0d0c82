"""Parts 3 and 4: the algorithms over RabbitMQ, exactly as a user starts them.

``mutexlab_run`` runs ``mutexlab run mutex`` (or ``bees``) with zero dwell times, every protocol step
a confirmed, persistent publish, the trace audited at the end, and reads its JSON summary
(``started``, ``duration``: the protocol phase, from the welcome to completion) and its trace
(synchronization delay via ``mutexlab.metrics.measure``). ``machine_busy`` is the share of the
machine's cores busy over the protocol phase and ``broker_cpu_us_per_msg`` the local broker's CPU
over it per protocol message: whether a run waits for handovers or for the CPU. ``wall_s`` is the
whole command, start-up and audit included.

Part 3 runs each classic algorithm beside centralized yardsticks with as many processes, on the
same broker: a **queue semaphore** (a durable queue holding one token message; each process takes
it with prefetch 1, leaves the critical section at once, publishes it back persistent and
confirmed, then acks the delivery) and **redis-py's** ``Lock`` on one key (acquire, leave at once,
release), with its default polling (``sleep=0.1`` s, what most code uses) and with 1 ms. Every
contender records its (enter, exit) times on the system-wide monotonic clock; the parent counts
overlapping critical sections (0: mutual exclusion held) and the longest run of consecutive
entries by one process (fairness). Queues and keys are deleted at the end, also on failure.

Part 4 runs the bees end to end and compares the message count with the simulator's for the same
configuration and seed.
"""

from __future__ import annotations

import contextlib
import itertools
import math
import tempfile
import time
import uuid
from pathlib import Path

import pika

from . import common
from .common import CpuSampler, mutexlab_run_json, ratio, run_workers, say, table

PERSISTENT = pika.BasicProperties(delivery_mode=2, content_type="application/json")


def mutexlab_run(args: list[str], url: str, timeout: float, tree: Path | None = None) -> dict:
    """``mutexlab run ARGS --dwell 0 --json --trace FILE`` of ``tree`` (default: the mutexlab this
    interpreter imports); the summary plus trace-derived figures. ``python_cpu_s`` is the CPU time
    of the command and all its processes (start-up and audit included)."""
    from mutexlab.metrics import measure
    from mutexlab.trace import read_trace

    with tempfile.TemporaryDirectory(prefix="mutexlab-bench-") as tmp:
        trace = Path(tmp) / "trace.jsonl"
        argv = [*args, "--dwell", "0", "--trace", str(trace), "--amqp-url", url]
        argv += ["--stall-timeout", "60", "--join-timeout", "240"]
        with CpuSampler(url=url) as cpu:
            summary, exit_code, began, ended, python_cpu = mutexlab_run_json(argv, tree, timeout)
        events = read_trace(trace) if trace.exists() else []
    body = [e for e in events if e.get("event") != "run"]
    metrics = measure(body, unit=1.0)  # unit 1: delays stay in seconds
    duration = summary.get("duration") or 0.0
    messages = sum(summary.get("messages", {}).values())
    entries = sum(summary.get("entries", {}).values())
    # The machine's CPU from the welcome to completion (the processes' start-up left out).
    started = summary.get("started")
    busy = cpu.window(started, started + duration) if started and duration else None
    broker_s = busy and busy["broker_cpu_s"]
    per_msg = round(broker_s / messages * 1e6) if broker_s is not None and messages else None
    return {
        "command": "mutexlab run " + " ".join(args) + " --dwell 0",
        "exit_code": exit_code,
        "complete": summary.get("complete"),
        "safe": summary.get("safe"),
        "duration_s": duration,
        "wall_s": round(ended - began, 2),
        "python_cpu_s": round(python_cpu, 3),
        "broker_cpu_s": broker_s,
        "messages": messages,
        "messages_by_type": summary.get("messages", {}),
        "entries": entries,
        "notes": summary.get("notes", {}),
        "trace_events": len(body),
        "entries_per_s": round(entries / duration, 2) if duration else None,
        "msgs_per_s": round(messages / duration, 1) if duration else None,
        "msgs_per_entry": round(messages / entries, 2) if entries else None,
        "sync_delay_ms": None if metrics.sync_delay is None else round(metrics.sync_delay * 1000, 2),
        "machine_busy": busy and busy["machine_busy"],
        "broker_cpu_us_per_msg": per_msg,
        "duplicates": summary.get("duplicates"),
        "dead_letters": summary.get("dead_letters"),
    }


# -- part 3: the yardsticks; what every contender reports -------------------------------------------------------
def summarise_contention(name: str, n: int, per_process: int, out: list[dict]) -> dict:
    intervals = sorted((enter, leave, o["who"]) for o in out for enter, leave in o["cs"])
    overlaps = sum(1 for a, b in zip(intervals, intervals[1:]) if b[0] < a[1])
    best = max((len(list(run)) for _, run in itertools.groupby(who for *_, who in intervals)), default=0)
    span = (max(o["end"] for o in out) - min(o["start"] for o in out)) / 1e9
    entries = len(intervals)
    return {
        "mechanism": name,
        "processes": n,
        "entries_per_process": per_process,
        "entries": entries,
        "seconds": round(span, 3),
        "entries_per_s": round(entries / span, 1) if span > 0 else None,
        "mutual_exclusion_violations": overlaps,
        "longest_streak_one_process": best,
    }


def _contend(barrier, who: int, rounds: int, acquire, release) -> dict:
    """``rounds`` times: ``acquire()`` (False: nothing within 120 s), enter and leave at once, ``release()``."""
    barrier.wait(timeout=120)
    start, cs = time.monotonic_ns(), []
    for _ in range(rounds):
        if not acquire():
            raise RuntimeError(f"contender {who}: nothing acquired within 120 s")
        cs.append((time.monotonic_ns(), time.monotonic_ns()))  # enter; zero dwell: leave at once
        release()
    return {"who": who, "cs": cs, "start": start, "end": time.monotonic_ns()}


# -- queue semaphore ---------------------------------------------------------------------------
def _sem_worker(barrier, url: str, name: str, who: int, rounds: int) -> dict:
    conn, ch = common.connect(url, True, prefetch=1)
    deliveries, held = ch.consume(name, auto_ack=False, inactivity_timeout=120), []

    def take() -> bool:
        held[:] = next(deliveries)
        return held[0] is not None

    def give_back() -> None:  # release: the token goes back, then the delivery is acked
        ch.basic_publish("", name, held[2], properties=PERSISTENT)
        ch.basic_ack(held[0].delivery_tag)

    out = _contend(barrier, who, rounds, take, give_back)
    ch.cancel()  # a token delivered meanwhile is requeued
    out["end"] = time.monotonic_ns()
    conn.close()
    return out


def semaphore(url: str, n: int, rounds: int) -> dict:
    name = f"mutexlab-bench.{uuid.uuid4().hex[:8]}.semaphore"
    common.declare_queues(url, [name], durable=True)
    try:
        conn, ch = common.connect(url, True)
        ch.basic_publish("", name, b"token", properties=PERSISTENT)  # the one token: K = 1
        conn.close()
        out = run_workers(_sem_worker, [(url, name, who, rounds) for who in range(1, n + 1)])
    finally:
        common.delete_queues(url, [name])
    result = summarise_contention("queue semaphore (K=1)", n, rounds, out)
    result["amqp_messages_per_entry"] = 1  # one publish (the token back) and its delivery
    return result


# -- Redis lock -----------------------------------------------------------------------------------
def _redis_worker(barrier, url: str, key: str, who: int, rounds: int, sleep: float) -> dict:
    import redis

    client = redis.Redis.from_url(url)
    lock = client.lock(key, timeout=30, sleep=sleep)
    client.ping()
    out = _contend(
        barrier, who, rounds, lambda: lock.acquire(blocking=True, blocking_timeout=120), lock.release
    )
    client.close()
    return out


def redis_lock(url: str, n: int, rounds: int, sleep: float) -> dict:
    import redis

    key = f"mutexlab-bench:{uuid.uuid4().hex[:8]}:lock"
    try:
        out = run_workers(_redis_worker, [(url, key, who, rounds, sleep) for who in range(1, n + 1)])
    finally:
        with contextlib.suppress(Exception):  # a clean-up: the result stands without it
            redis.Redis.from_url(url).delete(key)
    result = summarise_contention(f"redis-py Lock (sleep={sleep:g}s)", n, rounds, out)
    result["redis_commands_per_entry"] = "≥2 (SET NX PX + Lua release), plus polls while waiting"
    return result


# -- part 3 ---------------------------------------------------------------------------------------
def part3(full: bool, amqp: str, redis_url: str, algorithms: list[str] | None = None) -> dict:
    from mutexlab.protocols.registry import CLASSIC

    sizes = (5, 10)
    requests = 30 if full else 2  # enough for a run of a second or more at N = 5 (start-up excluded)
    rounds = 200 if full else 20
    repeat = 3 if full else 1
    contention = []
    for n in sizes:
        say(f"  queue semaphore and Redis locks with {n} processes ...")
        contention.append(semaphore(amqp, n, rounds))
        contention += [redis_lock(redis_url, n, rounds, sleep) for sleep in (0.1, 0.001)]
    runs = []
    for n in sizes:
        yardsticks = [c for c in contention if c["processes"] == n]  # semaphore, redis 0.1 s, redis 1 ms
        for algorithm in algorithms or CLASSIC:
            say(f"  mutexlab run mutex -a {algorithm} -N {n} -r {requests} --dwell 0 ({repeat}×) ...")
            argv = ["mutex", "-a", algorithm, "-N", str(n), "-r", str(requests)]
            row = _median_run([mutexlab_run(argv, amqp, timeout=900) for _ in range(repeat)])
            row.update(algorithm=algorithm, n=n, requests_per_node=requests)
            for key, other in zip(RATIO_KEYS, yardsticks):
                row[key] = ratio(row["entries_per_s"], other["entries_per_s"], 3)
            runs.append(row)
    return {
        "requests_per_node": requests,
        "contention_rounds_per_process": rounds,
        "repeat": repeat,
        "contention": contention,
        "runs": runs,
    }


RATIO_KEYS = ("vs_semaphore", "vs_redis_default", "vs_redis_1ms")


def _median_run(rows: list[dict]) -> dict:
    """The run with the median entries per second (of an even number, the lower middle one), every
    run's rate kept beside it; a failed run (unsafe or incomplete) is the one reported, whatever
    its rate: a failure is never hidden behind a good repeat."""
    failed = [r for r in rows if not (r.get("safe") and r.get("complete"))]
    ranked = sorted(rows, key=lambda r: r["entries_per_s"] or 0)
    middle = failed[0] if failed else ranked[(len(rows) - 1) // 2]
    return dict(middle, repeats_entries_per_s=[r["entries_per_s"] for r in rows])


def render3(part: dict) -> str:
    contention = table(
        ["centralized mechanism", "processes", "entries", "entries/s", "overlaps", "longest streak"],
        [
            [c["mechanism"], c["processes"], c["entries"], c["entries_per_s"]]
            + [c["mutual_exclusion_violations"], c["longest_streak_one_process"]]
            for c in part["contention"]
        ],
    )
    runs = table(
        ["algorithm", "N", "entries", "msgs", "msgs/entry", "duration s", "entries/s", "repeats"]
        + ["sync delay ms", "× semaphore", "× redis 0.1s", "× redis 1ms"]
        + ["CPU busy", "broker CPU µs/msg", "safe", "complete"],
        [
            [r["algorithm"], r["n"], r["entries"], r["messages"], r["msgs_per_entry"], r["duration_s"]]
            + [r["entries_per_s"], " / ".join(f"{v:.1f}" for v in r["repeats_entries_per_s"] if v)]
            + [r["sync_delay_ms"], *(None if r[k] is None else f"{r[k]:.3f}" for k in RATIO_KEYS)]
            + [None if r["machine_busy"] is None else f"{r['machine_busy']:.0%}"]
            + [r["broker_cpu_us_per_msg"], r["safe"], r["complete"]]
            for r in part["runs"]
        ],
    )
    return contention + "\n\n" + runs


# -- part 4 ---------------------------------------------------------------------------------------
def simulate_bees(p: int, reeds: int, seed: int, delay_seed: int | None = None):
    """The simulator's run (a ``SimResult``) of the same bees, its delays drawn from ``delay_seed``."""
    from mutexlab.protocols.registry import make_setup
    from mutexlab.sim import SimConfig, Simulation

    setup = make_setup("bees", p, {"reeds": reeds}, seed)
    dwell = {"rest": 0, "reed": 0, "flower": 0}
    return Simulation(setup, SimConfig(seed=seed if delay_seed is None else delay_seed, dwell=dwell)).run()


def part4(full: bool, amqp: str, seed: int = 0) -> dict:
    rows = []
    for p in (10, 20, 50) if full else (10,):
        reeds = math.ceil(p / 3)
        say(f"  mutexlab run bees -P {p} -T {reeds} --dwell 0 --seed {seed} ...")
        row = mutexlab_run(["bees", "-P", str(p), "-T", str(reeds), "--seed", str(seed)], amqp, timeout=1800)
        sim = simulate_bees(p, reeds, seed)
        # The model's own spread: the same setup (same initial clocks) under other delay draws.
        spread = [simulate_bees(p, reeds, seed, delay_seed).total_messages for delay_seed in range(1, 11)]
        row.update(
            bees=p,
            reeds=reeds,
            seed=seed,
            sim_messages=sim.total_messages,
            sim_messages_by_type=sim.messages,
            sim_entries=sim.entries,
            sim_ok=sim.ok,
            ratio_to_sim=ratio(row["messages"], sim.total_messages, 4),
            sim_other_delays=[min(spread), max(spread)],
            eggs=row["notes"].get("egg"),
            deaths=row["notes"].get("death"),
        )
        row["type_difference"] = {
            t: row["messages_by_type"].get(t, 0) - sim.messages.get(t, 0)
            for t in sorted(set(row["messages_by_type"]) | set(sim.messages))
        }
        rows.append(row)
    return {"seed": seed, "runs": rows}


def render4(part: dict) -> str:
    return table(
        ["P", "T", "duration s", "wall s", "messages", "simulator messages", "ratio"]
        + ["simulator, 10 other delay seeds", "eggs", "safe", "complete"],
        [
            [r["bees"], r["reeds"], r["duration_s"], r["wall_s"], r["messages"], r["sim_messages"]]
            + [f"{r['ratio_to_sim']:.4f}", "{:,}–{:,}".format(*r["sim_other_delays"]), r["eggs"], r["safe"]]
            + [r["complete"]]
            for r in part["runs"]
        ],
        digits=1,
    )
