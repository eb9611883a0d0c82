"""The RabbitMQ transport (DESIGN.md §5): topology, envelopes, a confirming, reconnecting bus.

Topology of run ``R`` (every name contains the run id, so runs never mix):

* exchange ``mutexlab.R`` (topic, durable). Routing keys:
  ``<TYPE>.<dest>`` a protocol message (``REQUEST.node-3``), ``audit.<name>`` a trace event,
  ``status.<name>`` a participant's state/heartbeat, ``join.<role>`` a participant asking to
  join, ``control.<name|instance|all>`` the monitor's roster, refusal and stop signals;
* queue ``mutexlab.R.<name>`` per participant (``node-3``), bound to ``<TYPE>.<name>`` for each
  message type of the algorithm, ``control.<name>`` and ``control.all``;
* queue ``mutexlab.R.monitor`` bound to ``#``: the monitor sees everything;
* exchange ``mutexlab.R.dlx`` (fanout) and queue ``mutexlab.R.dead``: malformed or unknown
  messages, with the reason in the header ``x-mutexlab-reason``.

Queues are durable and messages persistent; every publish waits for the broker's confirm
(publisher confirms, ``mandatory`` so an unroutable message is an error, not a silent loss);
consumers ack by hand after handling. The ``Bus`` re-connects after a lost connection and
re-publishes what was not confirmed, so a message may arrive twice: receivers drop duplicates
by the per-link sequence number in the envelope (``LinkInbox``), which also keeps each link FIFO.
"""

from __future__ import annotations

import json
import logging
import time
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

import pika
from pika.exceptions import AMQPChannelError, AMQPConnectionError, NackError, UnroutableError

log = logging.getLogger("mutexlab.transport")

# A message body larger than this is refused (dead-lettered) without being parsed.
MAX_BODY = 64 * 1024

LOST = (AMQPConnectionError, AMQPChannelError, ConnectionError, OSError)


class TransportError(RuntimeError):
    """The broker cannot be used (unreachable, refused credentials, a publish nacked)."""


class EnvelopeError(ValueError):
    """A message that is not a valid envelope for this run; the text is the dead-letter reason."""


# -- names ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Topology:
    run_id: str

    @property
    def exchange(self) -> str:
        return f"mutexlab.{self.run_id}"

    @property
    def dlx(self) -> str:
        return f"mutexlab.{self.run_id}.dlx"

    @property
    def monitor_queue(self) -> str:
        return f"mutexlab.{self.run_id}.monitor"

    @property
    def dead_queue(self) -> str:
        return f"mutexlab.{self.run_id}.dead"

    def queue(self, name: str) -> str:
        return f"mutexlab.{self.run_id}.{name}"

    def _queue_args(self) -> dict:
        return {"x-dead-letter-exchange": self.dlx}

    def declare_base(self, channel) -> None:
        """Exchanges, the dead-letter queue and the monitor's queue; idempotent, anyone may call it."""
        channel.exchange_declare(self.exchange, exchange_type="topic", durable=True)
        channel.exchange_declare(self.dlx, exchange_type="fanout", durable=True)
        channel.queue_declare(self.dead_queue, durable=True)
        channel.queue_bind(self.dead_queue, self.dlx)
        channel.queue_declare(self.monitor_queue, durable=True, arguments=self._queue_args())
        channel.queue_bind(self.monitor_queue, self.exchange, routing_key="#")

    def declare_participant(self, channel, name: str, types: list[str]) -> str:
        queue = self.queue(name)
        channel.queue_declare(queue, durable=True, arguments=self._queue_args())
        for key in [f"{t}.{name}" for t in types] + [f"control.{name}", "control.all"]:
            channel.queue_bind(queue, self.exchange, routing_key=key)
        return queue

    def delete(self, channel, names: list[str]) -> None:
        """Delete the run's queues and exchanges (missing ones are fine)."""
        for queue in [self.queue(n) for n in names] + [self.monitor_queue, self.dead_queue]:
            channel.queue_delete(queue)
        channel.exchange_delete(self.exchange)
        channel.exchange_delete(self.dlx)


def delete_run(url: str, run_id: str, names: list[str]) -> None:
    """Remove everything run ``run_id`` declared (used by ``mutexlab run`` and the tests)."""
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        Topology(run_id).delete(conn.channel(), names)
    finally:
        conn.close()


# -- envelopes ------------------------------------------------------------------------------
def envelope(run_id: str, msg_id: str, sender: str, to: str, seq: int, vc: dict | None, msg: dict) -> dict:
    """A protocol message on the wire: who, where, the link sequence number, the sender's vector clock."""
    return {"run": run_id, "id": msg_id, "from": sender, "to": to, "seq": seq, "vc": vc or {}, "msg": msg}


def parse_envelope(body: bytes, run_id: str, me: str, roster: dict[str, int]) -> dict:
    """Check an envelope's frame (not yet the protocol message). Raises EnvelopeError with the reason."""
    if len(body) > MAX_BODY:
        raise EnvelopeError(f"oversized body: {len(body)} bytes (limit {MAX_BODY})")
    try:
        data = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise EnvelopeError(f"not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise EnvelopeError("an envelope must be a JSON object")
    missing = [k for k in ("run", "id", "from", "to", "seq", "vc", "msg") if k not in data]
    if missing:
        raise EnvelopeError(f"envelope lacks {', '.join(missing)}")
    if data["run"] != run_id:
        raise EnvelopeError(f"envelope of run {data['run']!r}, this is run {run_id!r}")
    if data["from"] not in roster:
        raise EnvelopeError(f"sender {data['from']!r} is not a member of this run")
    if data["to"] != me:
        raise EnvelopeError(f"addressed to {data['to']!r}, delivered to {me}")
    seq = data["seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
        raise EnvelopeError(f"bad sequence number {seq!r}")
    if not isinstance(data["vc"], dict) or not all(isinstance(v, int) for v in data["vc"].values()):
        raise EnvelopeError("bad vector clock")
    if not isinstance(data["msg"], dict):
        raise EnvelopeError("the protocol message must be a JSON object")
    return data


class LinkInbox:
    """Per-link sequence numbers. Invariant: each (sender → me) message is handled once, in order.

    ``accept(sender, seq)`` is True for the next message of the link, False for one already
    handled (a redelivered duplicate). A gap (a message skipped) cannot happen with confirms and
    FIFO queues; it is counted and logged, and the message is still handled.
    """

    def __init__(self) -> None:
        self.last: dict[str, int] = {}
        self.duplicates = 0
        self.gaps = 0

    def accept(self, sender: str, seq: int) -> bool:
        last = self.last.get(sender, 0)
        if seq <= last:
            self.duplicates += 1
            return False
        if seq != last + 1:
            self.gaps += 1
            log.warning("link %s: sequence jumped from %d to %d (messages missing)", sender, last, seq)
        self.last[sender] = seq
        return True


# -- the bus --------------------------------------------------------------------------------
@dataclass
class Delivery:
    queue: str
    routing_key: str
    body: bytes
    tag: int
    generation: int
    redelivered: bool
    headers: dict


class Bus:
    """One connection and one confirming channel, re-established when lost.

    Deliveries are collected by the pika callback and handed out by ``poll`` (never handled
    inside pika's callback), so a handler may publish, and a reconnect happens outside pika's
    dispatch. Acks of deliveries from an older connection are skipped: the broker redelivers
    those, and the receiver drops them as duplicates.
    """

    def __init__(self, url: str, topology: Topology, connect_timeout: float = 60.0,
                 on_connect: Callable[[Any], None] | None = None, name: str = "client") -> None:
        self.url = url
        self.name = name
        self.topology = topology
        self.connect_timeout = connect_timeout
        self.on_connect = on_connect
        self.generation = 0
        self.reconnects = 0
        self.conn = None
        self.channel = None
        self._consumers: dict[str, str] = {}   # queue -> consumer tag (re-established on reconnect)
        self._inbox: deque[Delivery] = deque()
        self.published = 0
        self.redelivered = 0   # deliveries the broker flagged as redelivered (after a lost connection)

    # -- connection ------------------------------------------------------------------------
    def connect(self) -> None:
        deadline = time.monotonic() + self.connect_timeout
        params = pika.URLParameters(self.url)
        # Shown by the broker (management UI, rabbitmqctl list_connections): which run, which process.
        params.client_properties = {"connection_name": f"mutexlab {self.topology.run_id} {self.name}"}
        delay = 0.2
        while True:
            try:
                self.conn = pika.BlockingConnection(params)
                channel = self.conn.channel()
                channel.confirm_delivery()
                channel.basic_qos(prefetch_count=100)
                self.channel = channel
                self.topology.declare_base(channel)
                if self.on_connect is not None:
                    self.on_connect(channel)
                self.generation += 1
                for queue in list(self._consumers):
                    self._consume(queue)
                return
            except (pika.exceptions.ProbableAuthenticationError, pika.exceptions.AuthenticationError,
                    pika.exceptions.ProbableAccessDeniedError) as exc:
                raise TransportError(f"the broker refused the credentials of {redact(self.url)}: {exc!r}") from None
            except LOST as exc:
                self._drop()
                if time.monotonic() >= deadline:
                    raise TransportError(f"cannot reach RabbitMQ at {redact(self.url)} "
                                         f"within {self.connect_timeout:g}s: {exc!r}") from None
                time.sleep(delay)
                delay = min(delay * 2, 2.0)

    def reconnect(self, why: BaseException) -> None:
        log.warning("connection lost (%r); reconnecting", why)
        self._drop()
        self._inbox.clear()   # unacked deliveries of the old connection come back from the broker
        self.reconnects += 1
        self.connect()
        log.warning("reconnected (reconnect #%d)", self.reconnects)

    def _drop(self) -> None:
        conn, self.conn, self.channel = self.conn, None, None
        if conn is not None:
            try:
                if conn.is_open:
                    conn.close()
            except Exception:  # noqa: BLE001 - it is already broken
                pass

    def close(self) -> None:
        self._drop()

    # -- consuming -------------------------------------------------------------------------
    def consume(self, queue: str) -> None:
        self._consumers[queue] = ""
        self._guard(lambda: self._consume(queue))

    def _consume(self, queue: str) -> None:
        generation = self.generation

        def on_message(_ch, method, props, body, queue=queue):
            if method.redelivered:
                self.redelivered += 1
            self._inbox.append(Delivery(queue, method.routing_key, body, method.delivery_tag, generation,
                                        bool(method.redelivered), dict(props.headers or {})))

        self._consumers[queue] = self.channel.basic_consume(queue, on_message, auto_ack=False)

    def cancel(self, queue: str) -> None:
        tag = self._consumers.pop(queue, None)
        if tag and self.channel is not None:
            try:
                self.channel.basic_cancel(tag)
            except LOST:
                pass
        self._inbox = deque(d for d in self._inbox if d.queue != queue)

    def poll(self, timeout: float) -> list[Delivery]:
        """Wait up to ``timeout`` seconds for deliveries; return those collected (in order)."""
        if not self._inbox:
            self._guard(lambda: self.conn.process_data_events(time_limit=max(0.0, timeout)))
        batch = list(self._inbox)
        self._inbox.clear()
        return batch

    def ack(self, delivery: Delivery) -> None:
        if delivery.generation != self.generation or self.channel is None:
            return  # from a lost connection: the broker redelivers it
        try:
            self.channel.basic_ack(delivery.tag)
        except LOST as exc:
            self.reconnect(exc)

    # -- publishing ------------------------------------------------------------------------
    def publish(self, routing_key: str, body: bytes | dict, message_id: str | None = None,
                exchange: str | None = None, headers: dict | None = None, mandatory: bool = True) -> None:
        """Publish persistently and wait for the broker's confirm; re-publish after a reconnect.

        Raises TransportError when the broker nacks or cannot route the message.
        """
        if isinstance(body, dict):
            body = json.dumps(body, separators=(",", ":")).encode()
        props = pika.BasicProperties(delivery_mode=2, content_type="application/json",
                                     message_id=message_id, headers=headers)
        target = self.topology.exchange if exchange is None else exchange

        def send():
            self.channel.basic_publish(target, routing_key, body, properties=props, mandatory=mandatory)

        try:
            self._guard(send)
        except UnroutableError:
            raise TransportError(f"no queue takes routing key {routing_key!r} on {target}") from None
        except NackError:
            raise TransportError(f"the broker refused (nack) a message to {routing_key!r}") from None
        self.published += 1

    def dead_letter(self, delivery: Delivery, reason: str) -> None:
        """Move a delivery to the run's dead-letter queue with its reason, then ack it."""
        headers = dict(delivery.headers)
        headers.update({"x-mutexlab-reason": reason[:500], "x-mutexlab-queue": delivery.queue,
                        "x-mutexlab-routing-key": delivery.routing_key})
        self.publish(delivery.routing_key, delivery.body, exchange=self.topology.dlx, headers=headers)
        self.ack(delivery)

    def _guard(self, action: Callable[[], Any]) -> Any:
        """Run ``action`` on the current channel; after a lost connection reconnect and retry."""
        while True:
            if self.channel is None:
                self.connect()
            try:
                return action()
            except (UnroutableError, NackError):
                raise
            except LOST as exc:
                self.reconnect(exc)


def redact(url: str) -> str:
    """The URL without its credentials, for logs and errors."""
    params = pika.URLParameters(url)
    vhost = "" if params.virtual_host == "/" else "/" + params.virtual_host
    return f"{url.split('://', 1)[0]}://{params.host}:{params.port}{vhost}"
