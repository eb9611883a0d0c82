"""The same confirmed workloads on each AMQP client, to choose the transport's by measurement.

Clients, one process per member against the same broker: ``blocking`` (pika's
``BlockingConnection``), ``select`` (pika's ``SelectConnection`` on pika's own ``IOLoop``),
``select-turned`` (the same callbacks on the transport's driver, ``bus/amqp.py``, turned by
``process_data_events`` as the bus turns it), ``aio-pika`` and ``aio-pika-uvloop``. Workloads, with
the transport's guarantee (durable queues of version 2, persistent messages, publisher confirms, a
delivery acked only once what it caused is confirmed, prefetch 100): ``ring``, one token passed
``hops`` times around N members; ``ricart-agrawala``, ``requests`` critical sections per member
without dwell, 2·R·N·(N − 1) messages. Client ``transient`` is ``blocking`` without the guarantee
(transient queues and messages, no confirms, auto-ack): with ``blocking``, the raw pika token
ring that ``bench/wire.py`` sets beside the token algorithms, the broker's own limit for a handover.

Per client: hops/s or entries/s from the start barrier to the last member's end; client CPU
(every member, user + system) and broker CPU (the local RabbitMQ node) per message over that span.
Clients take turns within each repetition, so a burst of load hits all alike; the median of the
repetitions is reported with each one beside it::

    python -m bench.clients --repeat 3 -N 5 --hops 2000 --requests 50 --json /tmp/clients.json
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import time
import uuid
from collections import deque

from . import common
from .common import connect, medians, ratio, repeats, say

CLIENTS = ("blocking", "select", "select-turned", "aio-pika", "aio-pika-uvloop")
WORKLOADS = ("ring", "ricart-agrawala")
PREFETCH = 100
DEADLINE = 300.0  # seconds a member may take before it gives up


# -- the workloads, without I/O: each input gives the messages to send ((member, body), ...) -----------
class Ring:
    def __init__(self, me: int, n: int, hops: int) -> None:
        self.me, self.n, self.hops, self.got = me, n, hops, 0
        self.mine = sum(1 for h in range(1, hops + 1) if h % n == me)  # the hops this member receives

    def start(self) -> list[tuple[int, bytes]]:
        return [(1 % self.n, b"1")] if self.me == 0 else []

    def handle(self, body: bytes) -> list[tuple[int, bytes]]:
        self.got += 1
        hop = int(body)
        return [((self.me + 1) % self.n, str(hop + 1).encode())] if hop < self.hops else []

    @property
    def done(self) -> bool:
        return self.got >= self.mine


class RicartAgrawala:
    def __init__(self, me: int, n: int, requests: int) -> None:
        self.me, self.n, self.left = me, n, requests
        self.expected = 2 * requests * (n - 1)  # a REQUEST and a REPLY from every other member, per request
        self.clock = self.got = self.replies = self.entries = 0
        self.ts: int | None = None  # the pending request's timestamp (None: not requesting)
        self.deferred: list[int] = []

    def _send(self, to: int, kind: str) -> tuple[int, bytes]:
        stamp = self.ts if kind == "Q" else self.clock
        return to, json.dumps({"t": kind, "ts": stamp, "from": self.me}).encode()

    def start(self) -> list[tuple[int, bytes]]:
        if not self.left:
            return []
        self.clock += 1
        self.ts, self.replies = self.clock, 0
        return [self._send(j, "Q") for j in range(self.n) if j != self.me]

    def handle(self, body: bytes) -> list[tuple[int, bytes]]:
        msg = json.loads(body)
        self.got += 1
        self.clock = max(self.clock, msg["ts"]) + 1
        if msg["t"] == "Q":
            if self.ts is not None and (self.ts, self.me) < (msg["ts"], msg["from"]):
                self.deferred.append(msg["from"])
                return []
            return [self._send(msg["from"], "R")]
        self.replies += 1
        if self.replies < self.n - 1:
            return []
        self.entries, self.left, self.ts = self.entries + 1, self.left - 1, None  # enter, leave at once
        out, self.deferred = [self._send(j, "R") for j in self.deferred], []
        return out + self.start()

    @property
    def done(self) -> bool:
        return self.got >= self.expected and not self.left and self.ts is None


# -- the clients: each returns (start, end, CPU seconds) of its member ----------------------------------
def _blocking(barrier, member, names: list[str], url: str, confirmed: bool) -> tuple[float, float, float]:
    """``confirmed``: each publish waits for its own confirm, then the delivery that caused it is
    acked; else (the raw ring's ``transient``) transient queues and messages, no confirms, auto-ack."""
    import pika

    conn, ch = connect(url, confirmed, PREFETCH)
    inbox: deque = deque()
    on_message = lambda _c, m, _p, b: inbox.append((m.delivery_tag, b))  # noqa: E731
    ch.basic_consume(names[member.me], on_message, auto_ack=not confirmed)
    props = pika.BasicProperties(delivery_mode=2 if confirmed else 1)

    def send(out) -> None:
        for dest, body in out:
            ch.basic_publish("", names[dest], body, properties=props)  # returns once confirmed

    barrier.wait(timeout=120)
    start, cpu = time.monotonic(), time.process_time()
    send(member.start())
    while not member.done and time.monotonic() - start < DEADLINE:
        conn.process_data_events(time_limit=1.0)
        while inbox:
            tag, body = inbox.popleft()
            send(member.handle(body))
            if confirmed:
                ch.basic_ack(tag)
    end, cpu = time.monotonic(), time.process_time() - cpu
    conn.close()
    return start, end, cpu


def _select(barrier, member, names: list[str], url: str, turned: bool) -> tuple[float, float, float]:
    """Callbacks only: publishes do not wait, confirms come to a callback, a delivery's ack waits
    until everything published before it is confirmed: the transport's own bookkeeping (``Outbox``)."""
    import pika

    from mutexlab.bus.outbox import Outbox, Outgoing

    span: dict[str, float] = {}
    outbox, props = Outbox(), pika.BasicProperties(delivery_mode=2)

    def publish(out) -> None:
        for dest, body in out:
            ch.basic_publish("", names[dest], body, properties=props)
            outbox.add(Outgoing("", names[dest], body, props, False))

    def settle() -> None:
        for tag, multiple in outbox.release():  # the held delivery tags whose acks may go now
            ch.basic_ack(tag, multiple=multiple)
        if member.done and not outbox and not outbox.held and "end" not in span:
            span["end"], span["cpu"] = time.monotonic(), time.process_time() - span["cpu"]
            if not turned:
                conn.close()

    def on_message(_ch, method, _props, body) -> None:
        publish(member.handle(body))
        outbox.hold(method.delivery_tag)
        settle()

    def on_confirm(frame) -> None:
        outbox.confirm(frame.method.delivery_tag, frame.method.multiple, nack=False)
        settle()

    def begin(channel) -> None:
        channel.basic_consume(names[member.me], on_message)
        barrier.wait(timeout=120)
        span["start"], span["cpu"] = time.monotonic(), time.process_time()
        publish(member.start())

    if turned:
        from mutexlab.bus.amqp import Connection

        conn = Connection(pika.URLParameters(url))
        channel = conn.channel()
        ch = channel.nowait
        channel.confirm_delivery(on_confirm, lambda *_returned: None)
        channel.basic_qos(prefetch_count=PREFETCH)
        begin(ch)  # pika's channel: its basic_consume takes the callback without waiting
        while "end" not in span and time.monotonic() - span["start"] < DEADLINE:
            conn.process_data_events(1.0)
        conn.close()
    else:

        def opened(channel) -> None:
            nonlocal ch
            ch = channel
            qos = lambda _f: channel.basic_qos(prefetch_count=PREFETCH, callback=lambda _f: begin(channel))  # noqa: E731
            channel.confirm_delivery(on_confirm, callback=qos)

        conn = pika.SelectConnection(
            pika.URLParameters(url),
            on_open_callback=lambda c: c.channel(on_open_callback=opened),
            on_close_callback=lambda c, _reason: c.ioloop.stop(),
        )
        conn.ioloop.call_later(DEADLINE + 120, conn.ioloop.stop)
        conn.ioloop.start()
    return span["start"], span.get("end", time.monotonic()), span.get("cpu", 0.0)


def _aio(barrier, member, names: list[str], url: str, uvloop: bool) -> tuple[float, float, float]:
    """``channel(publisher_confirms=True)``; each delivery's publishes awaited in a task of its own,
    the delivery acked once they are confirmed."""

    async def main() -> tuple[float, float, float]:
        import aio_pika

        connection = await aio_pika.connect(url)
        channel = await connection.channel(publisher_confirms=True)
        await channel.set_qos(prefetch_count=PREFETCH)
        exchange = channel.default_exchange
        queue = await channel.get_queue(names[member.me], ensure=False)
        pending: set[asyncio.Task] = set()  # not yet through their publishes and ack (and referenced)
        finished = asyncio.Event()
        persistent = aio_pika.DeliveryMode.PERSISTENT

        async def send_then_ack(out, message) -> None:
            await asyncio.gather(
                *(exchange.publish(aio_pika.Message(b, delivery_mode=persistent), names[d]) for d, b in out)
            )
            if message is not None:
                await message.ack()
            pending.discard(asyncio.current_task())
            if member.done and not pending:
                finished.set()

        async def on_message(message) -> None:  # handled in delivery order, sent concurrently
            pending.add(asyncio.ensure_future(send_then_ack(member.handle(message.body), message)))

        await queue.consume(on_message)
        barrier.wait(timeout=120)
        start, cpu = time.monotonic(), time.process_time()
        pending.add(asyncio.ensure_future(send_then_ack(member.start(), None)))
        await asyncio.wait_for(finished.wait(), DEADLINE)
        end, cpu = time.monotonic(), time.process_time() - cpu
        await connection.close()
        return start, end, cpu

    if uvloop:
        import uvloop as uv

        return uv.run(main())
    return asyncio.run(main())


def _worker(barrier, client: str, workload: str, url: str, names: list[str], me: int, size: int) -> dict:
    member = (Ring if workload == "ring" else RicartAgrawala)(me, len(names), size)
    if client in ("blocking", "transient"):
        start, end, cpu = _blocking(barrier, member, names, url, client == "blocking")
    elif client.startswith("select"):
        start, end, cpu = _select(barrier, member, names, url, client == "select-turned")
    else:
        start, end, cpu = _aio(barrier, member, names, url, client.endswith("uvloop"))
    if not member.done:
        raise RuntimeError(f"{client} {workload} member {me}: not done within {DEADLINE:g}s")
    return {"start": start, "end": end, "cpu": cpu, "entries": getattr(member, "entries", 0)}


# -- a measurement -------------------------------------------------------------------------------------
def measure(url: str, client: str, workload: str, n: int, size: int) -> dict:
    """One run of ``workload`` (``size``: hops, or requests per member) on ``client``, N members."""
    if client not in (*CLIENTS, "transient") or workload not in WORKLOADS:
        raise ValueError(f"no client {client!r} or no workload {workload!r}: see bench/clients.py")
    if n < 2 or size < 1:
        raise ValueError(f"{workload} needs n >= 2 and a size >= 1, got n={n}, size={size}")
    names = [f"mutexlab-bench.{uuid.uuid4().hex[:8]}.m{i}" for i in range(n)]
    common.declare_queues(url, names, durable=client != "transient", arguments={"x-queue-version": 2})
    broker = common.broker_pid(url)
    try:
        args = [(client, workload, url, names, i, size) for i in range(n)]
        *out, before, after = common.run_workers(
            _worker, args, DEADLINE + 60, lambda: common.broker_cpu_seconds(broker)
        )
    finally:
        common.delete_queues(url, names)
    span = max(o["end"] for o in out) - min(o["start"] for o in out)
    messages = size if workload == "ring" else 2 * size * n * (n - 1)
    broker_s = None if None in (before, after) else after - before
    row = {
        "client": client,
        "workload": workload,
        "n": n,
        "messages": messages,
        "seconds": round(span, 3),
        "msgs_per_s": round(messages / span),
        "client_cpu_us_per_msg": round(sum(o["cpu"] for o in out) / messages * 1e6),
        # includes the members' connection set-up and tear-down: an upper bound
        "broker_cpu_us_per_msg": ratio(broker_s, messages / 1e6, 1),
    }
    if workload == "ricart-agrawala":
        row["entries_per_s"] = round(sum(o["entries"] for o in out) / span, 1)
    return row


def run(url: str, clients: list[str], n: int, hops: int, requests: int, repeat: int) -> dict:
    samples: dict[tuple[str, str], list[dict]] = {}
    for rep, workload, client in itertools.product(range(repeat), WORKLOADS, clients):
        say(f"  repetition {rep + 1}/{repeat}: {workload} on {client} ...")
        row = measure(url, client, workload, n, hops if workload == "ring" else requests)
        samples.setdefault((workload, client), []).append(row)
    keys = ("msgs_per_s", "entries_per_s", "client_cpu_us_per_msg", "broker_cpu_us_per_msg")
    rows = [
        {"workload": workload, "client": client, "repeats": runs, **medians(runs, keys)}
        for (workload, client), runs in samples.items()
    ]
    return dict(machine=common.machine(), n=n, hops=hops, requests=requests, repeat=repeat, rows=rows)


def render(result: dict) -> str:
    out = []
    for workload in WORKLOADS:
        ring = workload == "ring"
        rows = [r for r in result["rows"] if r["workload"] == workload]
        base = next((r for r in rows if r["client"] == "blocking"), None)
        key = "msgs_per_s" if ring else "entries_per_s"
        body = [
            [r["client"], r[key], repeats(r, key)]
            + [ratio(r[key], base and base[key]), None if ring else r["msgs_per_s"]]
            + [r["client_cpu_us_per_msg"], r["broker_cpu_us_per_msg"]]
            for r in rows
        ]
        size = f"{result['hops']} hops" if ring else f"{result['requests']} requests per member"
        headers = ["client", "hops/s" if ring else "entries/s", "(repeats)", "÷ blocking", "msgs/s"]
        headers += ["client CPU µs/msg", "broker CPU µs/msg"]
        out += [f"{workload}, N = {result['n']}, {size}:\n", common.table(headers, body), ""]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--amqp-url", default=common.DEFAULT_AMQP_URL)
    parser.add_argument("-N", type=int, default=5)
    parser.add_argument("--hops", type=int, default=2000)
    parser.add_argument("--requests", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--client", action="append", choices=CLIENTS, help="default: every client")
    parser.add_argument("--json", help="also write the result here")
    args = parser.parse_args()
    result = run(args.amqp_url, args.client or list(CLIENTS), args.N, args.hops, args.requests, args.repeat)
    common.save_json(args.json, result)
    print(render(result))


if __name__ == "__main__":
    main()
