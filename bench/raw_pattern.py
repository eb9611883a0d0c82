"""The yardstick for Ricart–Agrawala over RabbitMQ: its message pattern sent by raw pika, nothing else.

N members, one process each, against the same broker as ``mutexlab run``. Per entry a member sends
its N − 1 requests as **one publish** routed to the N − 1 other queues by the ``CC`` header (as the
bus sends a step), waits for the N − 1 replies, counts the entry and requests again; a request is
answered at once by one publish to its sender. No protocol logic (nothing is deferred: every
member may be "in" at once), no trace, no monitor: 2·(N − 1) deliveries per entry, the protocol
messages alone. Each delivery mode is sent as the bus sends it (docs/wire.md#delivery-modes):

* ``persistent``: durable classic queues of version 2, persistent messages, publisher confirms
  pipelined (no publish waits for one), a delivery acked only once everything published before it
  is confirmed, the released acks as one cumulative ack;
* ``transient``: non-durable queues, messages in memory, still confirmed (pipelined, nothing
  waits), each delivery acked as soon as it is handled.

Every publish is ``mandatory`` and ``application/json``; prefetch 100, as the bus's participants.
The bodies weigh what the bus's do, padded to size: ``request_bytes`` and ``reply_bytes``, default
the medians of a Ricart–Agrawala step to four addressees (request broadcast) and to one (reply)
recorded from ``mutexlab run mutex -a ricart-agrawala -r 20 --dwell 0`` at N = 5 and 10
(``SIZES``; another N takes the nearest): at N = 5 the step's trace batch rides in the body the
addressees get, at N = 10 a broadcast's batch goes to the monitor alone (docs/wire.md#wire), so its
request body is the frame only. The client is pika's ``SelectConnection`` on pika's own I/O loop, callbacks only.

    python -m bench.raw_pattern -N 5 --requests 40 --delivery persistent --delivery transient
"""

from __future__ import annotations

import argparse
import time
import uuid

from . import common
from .common import ratio, say

PREFETCH = 100
DEADLINE = 300.0  # seconds a member may take before it gives up
# Body bytes by N, recorded from mutexlab (see the docstring): N -> (request step, reply step).
SIZES = {5: (1735, 750), 10: (698, 727)}


def sizes(n: int) -> tuple[int, int]:
    """The request and reply body sizes at N: those recorded at the nearest N."""
    return SIZES[min(SIZES, key=lambda recorded: (abs(recorded - n), recorded))]


class Member:
    """One member's pattern on one ``SelectConnection``: everything happens in pika's callbacks."""

    def __init__(self, me: int, names: list[str], requests: int, persistent: bool, size: tuple[int, int]):
        import pika

        self.me, self.names, self.left, self.persistent = me, names, requests, persistent
        self.others = [q for i, q in enumerate(names) if i != me]
        self.expected = 2 * requests * len(self.others)  # a request and a reply from every other, per entry
        head = f"Q{me}|".encode()
        self.request = head + b"x" * max(0, size[0] - len(head))
        self.reply = b"R" + b"x" * max(0, size[1] - 1)
        mode = 2 if persistent else 1
        self.props = pika.BasicProperties(delivery_mode=mode, content_type="application/json")
        self.request_props = pika.BasicProperties(
            delivery_mode=mode, content_type="application/json", headers={"CC": self.others[1:]}
        )
        self.got = self.replies = self.entries = 0
        self.published = self.confirmed = 0  # every publish up to ``confirmed`` is confirmed
        self.early: set[int] = set()
        self.held: list[tuple[int, int]] = []  # (delivery tag, publishes it waits for), persistent only
        self.start = self.end = self.cpu = 0.0
        self.nacked = False

    # -- sending ------------------------------------------------------------------------------------
    def _publish(self, queue: str, body: bytes, props) -> None:
        self.ch.basic_publish("", queue, body, props, mandatory=True)
        self.published += 1

    def _ask(self) -> None:
        if self.left:
            self.left -= 1
            self.replies = 0
            self._publish(self.others[0], self.request, self.request_props)

    # -- callbacks ----------------------------------------------------------------------------------
    def on_message(self, _ch, method, _props, body: bytes) -> None:
        self.got += 1
        if body[:1] == b"Q":
            sender = int(body[1 : body.index(b"|")])
            self._publish(self.names[sender], self.reply, self.props)
        else:
            self.replies += 1
            if self.replies == len(self.others):
                self.entries += 1
                self._ask()
        if self.persistent:
            self.held.append((method.delivery_tag, self.published))
            self._release()
        else:
            self.ch.basic_ack(method.delivery_tag)
            self._finish()

    def on_confirm(self, frame) -> None:
        tag, multiple = frame.method.delivery_tag, frame.method.multiple
        if type(frame.method).__name__ == "Nack":
            self.nacked = True
        if multiple:
            self.confirmed = max(self.confirmed, tag)
        else:
            self.early.add(tag)  # a single confirm may come before an earlier one's
        while self.confirmed + 1 in self.early:
            self.confirmed += 1
            self.early.discard(self.confirmed)
        self._release()

    def _release(self) -> None:
        """Ack, cumulatively, every held delivery whose publishes before it are all confirmed."""
        last = None
        while self.held and self.held[0][1] <= self.confirmed:
            last = self.held.pop(0)[0]
        if last is not None:
            self.ch.basic_ack(last, multiple=True)
        self._finish()

    def _finish(self) -> None:
        done = self.got >= self.expected and not self.left and self.replies == len(self.others)
        if done and self.confirmed >= self.published and not self.held and not self.end:
            self.end, self.cpu = time.monotonic(), time.process_time() - self.cpu
            self.conn.close()

    def run(self, barrier, url: str) -> None:
        import pika

        def begin(_frame) -> None:
            self.ch.basic_consume(self.names[self.me], self.on_message)
            barrier.wait(timeout=120)
            self.start, self.cpu = time.monotonic(), time.process_time()
            self._ask()

        def opened(channel) -> None:
            self.ch = channel
            qos = lambda _f: channel.basic_qos(prefetch_count=PREFETCH, callback=begin)  # noqa: E731
            channel.add_on_return_callback(lambda *_returned: setattr(self, "nacked", True))
            channel.confirm_delivery(self.on_confirm, callback=qos)

        self.conn = pika.SelectConnection(
            pika.URLParameters(url),
            on_open_callback=lambda c: c.channel(on_open_callback=opened),
            on_close_callback=lambda c, _reason: c.ioloop.stop(),
        )
        self.conn.ioloop.call_later(DEADLINE, self.conn.close)
        self.conn.ioloop.start()


def _worker(barrier, url: str, names: list[str], me: int, requests: int, persistent: bool, size) -> dict:
    member = Member(me, names, requests, persistent, size)
    member.run(barrier, url)
    if not member.end or member.nacked:
        what = "a publish nacked or returned" if member.nacked else f"not done within {DEADLINE:g}s"
        raise RuntimeError(f"raw pattern member {me}: {what}")
    return {"start": member.start, "end": member.end, "cpu": member.cpu, "entries": member.entries}


def measure(url: str, n: int, requests: int, delivery: str, size: tuple[int, int] | None = None) -> dict:
    """One run of the pattern: N members, ``requests`` entries each, in ``delivery`` mode."""
    if n < 2 or requests < 1 or delivery not in ("persistent", "transient"):
        raise ValueError(
            f"the raw pattern needs N >= 2, requests >= 1 and a delivery mode, got {n}, {requests}, {delivery!r}"
        )
    persistent, size = delivery == "persistent", size or sizes(n)
    names = [f"mutexlab-bench.{uuid.uuid4().hex[:8]}.p{i}" for i in range(n)]
    arguments = {"x-queue-version": 2} if persistent else None
    common.declare_queues(url, names, durable=persistent, arguments=arguments)
    broker = common.broker_pid(url)
    try:
        args = [(url, names, i, requests, persistent, size) for i in range(n)]
        *out, before, after = common.run_workers(
            _worker, args, DEADLINE + 60, lambda: common.broker_cpu_seconds(broker)
        )
    finally:
        common.delete_queues(url, names)
    span = max(o["end"] for o in out) - min(o["start"] for o in out)
    messages = 2 * requests * n * (n - 1)
    broker_s = None if None in (before, after) else after - before
    return {
        "delivery": delivery,
        "n": n,
        "bytes": list(size),
        "messages": messages,
        "seconds": round(span, 3),
        "entries_per_s": round(sum(o["entries"] for o in out) / span, 1),
        "msgs_per_s": round(messages / span),
        "client_cpu_us_per_msg": round(sum(o["cpu"] for o in out) / messages * 1e6),
        # includes the members' connection set-up and tear-down: an upper bound
        "broker_cpu_us_per_msg": ratio(broker_s, messages / 1e6, 1),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--amqp-url", default=common.DEFAULT_AMQP_URL)
    parser.add_argument("-N", type=int, default=5)
    parser.add_argument("--requests", type=int, default=40, help="entries per member (default 40)")
    parser.add_argument("--repeat", type=int, default=1)
    delivery_help = "delivery mode (repeatable; default persistent)"
    parser.add_argument(
        "--delivery", action="append", choices=("persistent", "transient"), help=delivery_help
    )
    args = parser.parse_args(argv)
    if args.N < 2 or args.requests < 1 or args.repeat < 1:
        parser.error("-N must be >= 2, --requests and --repeat >= 1")
    for _ in range(args.repeat):
        for delivery in dict.fromkeys(args.delivery or ["persistent"]):
            say(str(measure(args.amqp_url, args.N, args.requests, delivery)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
