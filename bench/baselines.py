"""Part 3's yardsticks on the same broker and machine: raw pika, a queue semaphore, a Redis lock.

* **raw pika** — one producer process publishes M messages to one queue, one consumer process
  takes them: messages per second from the first publish to the last delivery. Three settings:
  ``transient`` (no confirms, non-persistent, auto-ack: the physical limit of this machine);
  ``confirmed`` (durable queue, persistent message, publisher confirm awaited per publish —
  ``BlockingChannel.confirm_delivery`` — manual ack of each delivery, prefetch 100); and
  ``pipelined`` (the transport's guarantees done the fastest way raw pika can: durable queue,
  persistent messages, publisher confirms received asynchronously and all awaited at the end,
  one cumulative manual ack per 50 deliveries, prefetch 100).
  One-hop latency: ping-pong between two processes over two queues, one hop = round trip / 2.
* **queue semaphore** — a durable queue holding K = 1 token message; each of N processes
  repeatedly takes it (consume, prefetch 1), leaves the critical section at once, publishes the
  token back (persistent, confirmed) and acks the delivery.
* **Redis lock** — redis-py's ``Lock`` on one key; each of N processes repeatedly acquires it
  (blocking), leaves at once and releases it. Twice: with redis-py's default polling interval
  (``sleep=0.1`` s, what most code uses) and with ``sleep=0.001`` s.

Every contender records its (enter, exit) times on the system-wide monotonic clock; the parent
checks that no two critical sections overlap (mutual exclusion held) and reports the longest run
of consecutive entries by one process (fairness). Loops are bounded; queues and keys are
deleted at the end, also on failure.
"""

from __future__ import annotations

import multiprocessing as mp
import queue as queue_module
import statistics
import time
import uuid

BODY = (
    b'{"run":"bench","id":"node-1#1","from":"node-1","to":"node-2","seq":1,'
    b'"vc":{"node-1":3,"node-2":2},"msg":{"type":"REQUEST","sender":1,"ts":7}}'
)
CTX = mp.get_context("fork")
JOIN_TIMEOUT = 300.0


def _now() -> int:
    return time.monotonic_ns()


MODES = ("transient", "confirmed", "pipelined")


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


def _declare(url: str, names: list[str], durable: bool) -> None:
    import pika

    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        ch = conn.channel()
        for name in names:
            ch.queue_declare(name, durable=durable)
            ch.queue_purge(name)
    finally:
        conn.close()


def _delete(url: str, names: list[str]) -> None:
    import pika

    try:
        conn = pika.BlockingConnection(pika.URLParameters(url))
    except Exception:  # noqa: BLE001 - nothing we can do without a broker
        return
    try:
        ch = conn.channel()
        for name in names:
            ch.queue_delete(name)
    finally:
        conn.close()


def _run_workers(target, args_list: list[tuple], timeout: float = JOIN_TIMEOUT) -> list:
    """Start one process per args tuple (each gets (barrier, results, *args)); collect one result each."""
    barrier = CTX.Barrier(len(args_list) + 1)
    results = CTX.Queue()
    procs = [
        CTX.Process(target=_guard, args=(target, barrier, results, *args), daemon=True) for args in args_list
    ]
    for proc in procs:
        proc.start()
    try:
        barrier.wait(timeout=120)
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
        return out
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
        try:
            barrier.abort()
        except Exception:  # noqa: BLE001
            pass


# -- raw pika: throughput -------------------------------------------------------------------------
def _producer(barrier, url: str, name: str, count: int, mode: str) -> dict:
    if mode == "pipelined":
        return _pipelined_producer(barrier, url, name, count)
    confirmed = mode == "confirmed"
    conn, ch = _connect(url, confirmed)
    props = _props(confirmed)
    barrier.wait(timeout=120)
    start = _now()
    for _ in range(count):
        ch.basic_publish("", name, BODY, properties=props)
    end = _now()
    conn.close()
    return {"role": "producer", "start": start, "end": end}


def async_confirms(url: str):
    """A connection and channel with publisher confirms taken in asynchronously: pika's
    ``SelectConnection`` through the transport's thin driver (``transport/amqp.py``, pika's public
    interfaces only), as the Bus has it; ``confirmed[0]`` is the highest tag confirmed so far."""
    import pika

    from mutexlab.transport.amqp import Connection

    conn = Connection(pika.URLParameters(url))
    ch = conn.channel()
    confirmed = [0]

    def on_confirm(frame) -> None:
        confirmed[0] = max(confirmed[0], frame.method.delivery_tag)  # one channel: confirms come in order

    ch.confirm_delivery(on_confirm, lambda *_returned: None)  # waits for the broker's select-ok
    return conn, ch, confirmed


def _pipelined_producer(barrier, url: str, name: str, count: int) -> dict:
    """Persistent publishes with asynchronous confirms; the end is when the last confirm arrived."""
    conn, ch, confirmed = async_confirms(url)
    props = _props(True)
    barrier.wait(timeout=120)
    start = _now()
    for _ in range(count):
        ch.basic_publish("", name, BODY, properties=props)
    while confirmed[0] < count:
        conn.process_data_events(time_limit=0.002)
    end = _now()
    conn.close()
    return {"role": "producer", "start": start, "end": end}


def _consumer(barrier, url: str, name: str, count: int, mode: str) -> dict:
    if mode == "transient":
        return drain(barrier, url, name, count, prefetch=None, ack_every=None)
    return drain(barrier, url, name, count, prefetch=100, ack_every=50 if mode == "pipelined" else 1)


def drain(barrier, url: str, name: str, count: int, prefetch: int | None, ack_every: int | None) -> dict:
    """Consume ``count`` messages from queue ``name``: auto-ack when ``ack_every`` is None, else one
    (cumulative) ack per ``ack_every`` deliveries."""
    conn, ch = _connect(url, False, prefetch=prefetch)
    got = 0
    barrier.wait(timeout=120)
    first = None
    for method, _props, _body in ch.consume(name, auto_ack=ack_every is None, inactivity_timeout=60):
        if method is None:
            break
        if first is None:
            first = _now()
        got += 1
        if ack_every is not None and (got % ack_every == 0 or got >= count):
            ch.basic_ack(method.delivery_tag, multiple=ack_every > 1)
        if got >= count:
            break
    end = _now()
    ch.cancel()
    conn.close()
    return {"role": "consumer", "received": got, "first": first, "end": end}


def throughput(url: str, count: int, mode: str) -> dict:
    """Raw pika, one producer and one consumer process: ``mode`` is one of ``MODES``."""
    if mode not in MODES:
        raise ValueError(f"raw pika mode must be one of {', '.join(MODES)}, got {mode!r}")
    from .common import broker_cpu_seconds, broker_pid

    name = f"mutexlab-bench.{uuid.uuid4().hex[:8]}.raw"
    _declare(url, [name], durable=mode != "transient")
    try:
        broker = broker_pid(url)
        cpu_before = broker_cpu_seconds(broker)
        out = _run_workers(
            _dispatch_raw, [("producer", url, name, count, mode), ("consumer", url, name, count, mode)]
        )
        cpu_after = broker_cpu_seconds(broker)
    finally:
        _delete(url, [name])
    prod = next(o for o in out if o["role"] == "producer")
    cons = next(o for o in out if o["role"] == "consumer")
    span = (max(cons["end"], prod["end"]) - prod["start"]) / 1e9
    return {
        "mode": mode,
        "messages": count,
        "received": cons["received"],
        "seconds": round(span, 3),
        "msgs_per_s": round(cons["received"] / span) if span > 0 else None,
        "publish_msgs_per_s": round(count / ((prod["end"] - prod["start"]) / 1e9)),
        "broker_cpu_us_per_msg": broker_us_per_msg(cpu_before, cpu_after, count),
    }


def broker_us_per_msg(before: float | None, after: float | None, messages: int) -> float | None:
    """The local broker's CPU time per message (µs) over a measurement, None without a local broker.
    Includes connection set-up and tear-down of the workers: an upper bound."""
    if before is None or after is None or not messages:
        return None
    return round((after - before) / messages * 1e6, 1)


def _dispatch_raw(barrier, role: str, *args) -> dict:
    return (_producer if role == "producer" else _consumer)(barrier, *args)


# -- raw pika: one-hop latency -------------------------------------------------------------------
def _pinger(barrier, url: str, ping: str, pong: str, rounds: int, confirmed: bool) -> dict:
    conn, ch = _connect(url, confirmed)
    props = _props(confirmed)
    barrier.wait(timeout=120)
    rtts = []
    replies = ch.consume(pong, auto_ack=True, inactivity_timeout=30)
    for _ in range(rounds):
        sent = _now()
        ch.basic_publish("", ping, BODY, properties=props)
        method, _p, _b = next(replies)
        if method is None:
            break
        rtts.append(_now() - sent)
    ch.cancel()
    conn.close()
    return {"role": "pinger", "rtts": rtts}


def _ponger(barrier, url: str, ping: str, pong: str, rounds: int, confirmed: bool) -> dict:
    conn, ch = _connect(url, confirmed)
    props = _props(confirmed)
    barrier.wait(timeout=120)
    done = 0
    for method, _p, body in ch.consume(ping, auto_ack=True, inactivity_timeout=30):
        if method is None:
            break
        ch.basic_publish("", pong, body, properties=props)
        done += 1
        if done >= rounds:
            break
    ch.cancel()
    conn.close()
    return {"role": "ponger", "answered": done}


def _dispatch_ping(barrier, role: str, *args) -> dict:
    return (_pinger if role == "pinger" else _ponger)(barrier, *args)


def latency(url: str, rounds: int, confirmed: bool) -> dict:
    tag = uuid.uuid4().hex[:8]
    ping, pong = f"mutexlab-bench.{tag}.ping", f"mutexlab-bench.{tag}.pong"
    _declare(url, [ping, pong], durable=confirmed)
    try:
        out = _run_workers(
            _dispatch_ping,
            [("pinger", url, ping, pong, rounds, confirmed), ("ponger", url, ping, pong, rounds, confirmed)],
        )
    finally:
        _delete(url, [ping, pong])
    rtts = sorted(next(o for o in out if o["role"] == "pinger")["rtts"])
    hops = [r / 2 / 1e6 for r in rtts]  # ms
    return {
        "mode": "confirmed" if confirmed else "transient",
        "rounds": len(rtts),
        "one_hop_ms_median": round(statistics.median(hops), 3),
        "one_hop_ms_p90": round(hops[int(0.9 * (len(hops) - 1))], 3),
        "one_hop_ms_mean": round(statistics.fmean(hops), 3),
    }


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
        try:
            redis.Redis.from_url(url).delete(key)
        except Exception:  # noqa: BLE001
            pass
    result = summarise_contention(f"redis-py Lock (sleep={sleep:g}s)", n, rounds, out)
    result["redis_commands_per_entry"] = "≥2 (SET NX PX + Lua release), plus polls while waiting"
    return result
