"""The centralized yardsticks beside the algorithms over RabbitMQ, on the same broker and machine.

* **queue semaphore** — a durable queue holding K = 1 token message; each of N processes
  repeatedly takes it (consume, prefetch 1), leaves the critical section at once, publishes the
  token back (persistent, confirmed) and acks the delivery.
* **Redis lock** — redis-py's ``Lock`` on one key; each of N processes repeatedly acquires it
  (blocking), leaves at once and releases it. Twice: with redis-py's default polling interval
  (``sleep=0.1`` s, what most code uses) and with ``sleep=0.001`` s.

Every contender records its (enter, exit) times on the system-wide monotonic clock; the parent
checks that no two critical sections overlap (mutual exclusion held) and reports the longest run
of consecutive entries by one process (fairness). Loops are bounded; queues and keys are
deleted at the end, also on failure. The worker helpers here also drive ``bench/clients.py``.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import queue as queue_module
import threading
import time
import uuid

CTX = mp.get_context("fork")
JOIN_TIMEOUT = 300.0


def _now() -> int:
    return time.monotonic_ns()


def _connect(url: str, confirmed: bool, prefetch: int | None = None):
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(url))
    ch = conn.channel()
    if confirmed:
        ch.confirm_delivery()
    if prefetch:
        ch.basic_qos(prefetch_count=prefetch)
    return conn, ch


def _props(confirmed: bool):
    import pika

    return pika.BasicProperties(delivery_mode=2 if confirmed else 1, content_type="application/json")


def _declare(url: str, names: list[str], durable: bool, arguments: dict | None = None) -> None:
    def declare(ch, name: str) -> None:
        ch.queue_declare(name, durable=durable, arguments=arguments)
        ch.queue_purge(name)

    _each_queue(url, names, declare)


def _delete(url: str, names: list[str]) -> None:
    """A clean-up, also after a failure: without a broker there is nothing to delete."""
    import pika

    with contextlib.suppress(pika.exceptions.AMQPConnectionError):
        _each_queue(url, names, lambda ch, name: ch.queue_delete(name))


def _each_queue(url: str, names: list[str], act) -> None:
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        ch = conn.channel()
        for name in names:
            act(ch, name)
    finally:
        conn.close()


def _run_workers(target, args_list: list[tuple], timeout: float = JOIN_TIMEOUT, stamp=None) -> list:
    """Start one process per args tuple (each gets (barrier, results, *args)); collect one result each.
    ``stamp``: called once every worker passed the barrier and again once every result is in, its
    two values appended to the results."""
    barrier = CTX.Barrier(len(args_list) + 1)
    results = CTX.Queue()
    procs = [
        CTX.Process(target=_guard, args=(target, barrier, results, *args), daemon=True) for args in args_list
    ]
    for proc in procs:
        proc.start()
    try:
        with contextlib.suppress(threading.BrokenBarrierError):  # a worker failed: its error is below
            barrier.wait(timeout=120)
        before = stamp() if stamp else None
        out = []
        deadline = time.monotonic() + timeout
        while len(out) < len(procs):
            try:
                item = results.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue_module.Empty:
                raise RuntimeError(f"{target.__name__}: workers did not finish within {timeout:g}s") from None
            if isinstance(item, dict) and "error" in item:
                raise RuntimeError(f"{target.__name__}: a worker failed: {item['error']}")
            out.append(item)
        return out + [before, stamp()] if stamp else out
    finally:
        for proc in procs:
            proc.join(timeout=5)
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=5)


def _guard(target, barrier, results, *args) -> None:
    try:
        results.put(target(barrier, *args))
    except Exception as exc:  # noqa: BLE001 - reported to the parent
        results.put({"error": f"{type(exc).__name__}: {exc}"})
        with contextlib.suppress(Exception):  # the others are told; nothing more to report
            barrier.abort()


def broker_us_per_msg(before: float | None, after: float | None, messages: int) -> float | None:
    """The local broker's CPU time per message (µs) over a measurement, None without a local broker.
    Includes connection set-up and tear-down of the workers: an upper bound."""
    if before is None or after is None or not messages:
        return None
    return round((after - before) / messages * 1e6, 1)


# -- contention: what every contender reports -------------------------------------------------------
def summarise_contention(name: str, n: int, per_process: int, out: list[dict]) -> dict:
    intervals = sorted((enter, leave, o["who"]) for o in out for enter, leave in o["cs"])
    overlaps = sum(1 for a, b in zip(intervals, intervals[1:]) if b[0] < a[1])
    streak = best = 0
    previous = None
    for _, _, who in intervals:
        streak = streak + 1 if who == previous else 1
        previous = who
        best = max(best, streak)
    start = min(o["start"] for o in out)
    end = max(o["end"] for o in out)
    span = (end - start) / 1e9
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


# -- queue semaphore ---------------------------------------------------------------------------
def _sem_worker(barrier, url: str, name: str, who: int, rounds: int) -> dict:
    conn, ch = _connect(url, True, prefetch=1)
    props = _props(True)
    barrier.wait(timeout=120)
    start = _now()
    cs = []
    if rounds:
        for method, _p, body in ch.consume(name, auto_ack=False, inactivity_timeout=120):
            if method is None:
                raise RuntimeError(f"semaphore worker {who}: no token for 120 s")
            enter = _now()
            leave = _now()  # zero dwell: leave at once
            cs.append((enter, leave))
            ch.basic_publish("", name, body, properties=props)  # release: the token goes back
            ch.basic_ack(method.delivery_tag)
            if len(cs) >= rounds:
                break
        ch.cancel()  # a token delivered meanwhile is requeued
    end = _now()
    conn.close()
    return {"who": who, "cs": cs, "start": start, "end": end}


def semaphore(url: str, n: int, rounds: int, tokens: int = 1) -> dict:
    name = f"mutexlab-bench.{uuid.uuid4().hex[:8]}.semaphore"
    _declare(url, [name], durable=True)
    try:
        conn, ch = _connect(url, True)
        for _ in range(tokens):
            ch.basic_publish("", name, b"token", properties=_props(True))
        conn.close()
        out = _run_workers(_sem_worker, [(url, name, who, rounds) for who in range(1, n + 1)])
    finally:
        _delete(url, [name])
    result = summarise_contention(f"queue semaphore (K={tokens})", n, rounds, out)
    result["amqp_messages_per_entry"] = 1  # one publish (the token back) and its delivery
    return result


# -- Redis lock -----------------------------------------------------------------------------------
def _redis_worker(barrier, url: str, key: str, who: int, rounds: int, sleep: float) -> dict:
    import redis

    client = redis.Redis.from_url(url)
    lock = client.lock(key, timeout=30, sleep=sleep)
    client.ping()
    barrier.wait(timeout=120)
    start = _now()
    cs = []
    for _ in range(rounds):
        if not lock.acquire(blocking=True, blocking_timeout=120):
            raise RuntimeError(f"redis worker {who}: lock not acquired within 120 s")
        enter = _now()
        leave = _now()
        cs.append((enter, leave))
        lock.release()
    end = _now()
    client.close()
    return {"who": who, "cs": cs, "start": start, "end": end}


def redis_lock(url: str, n: int, rounds: int, sleep: float) -> dict:
    import redis

    key = f"mutexlab-bench:{uuid.uuid4().hex[:8]}:lock"
    try:
        out = _run_workers(_redis_worker, [(url, key, who, rounds, sleep) for who in range(1, n + 1)])
    finally:
        with contextlib.suppress(Exception):  # a clean-up: the result stands without it
            redis.Redis.from_url(url).delete(key)
    result = summarise_contention(f"redis-py Lock (sleep={sleep:g}s)", n, rounds, out)
    result["redis_commands_per_entry"] = "≥2 (SET NX PX + Lua release), plus polls while waiting"
    return result
