"""The bus (docs/wire.md#publishing, and the acknowledging and reconnecting rules after it):
publishes ``mandatory`` and confirmed, pipelined (``send`` does not wait, ``poll`` takes confirms
in, ``flush`` waits for all, ``publish`` is both); acks held back behind them (``outbox.Outbox``)."""

from __future__ import annotations

import contextlib
import functools
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import pika

from .amqp import LOST, Channel, TransportError
from .auth import MAC_HEADER, Signer
from .inbox import Delivery
from .outbox import Outbox, Outgoing
from .session import Session
from .topology import Topology
from .wire import compact

log = logging.getLogger("mutexlab.transport")

ACK_LINGER = 0.05  # seconds without a delivery after which every releasable ack goes (else in batches)
MAX_UNCONFIRMED = 1000  # messages published and not yet confirmed, at most (back-pressure)
NACK_PAUSE = 0.5  # quorum queues: seconds before re-publishing after a nack (a leader election)
CONFIRM_WAIT = 1.0  # seconds of I/O at most between looks at the confirms a flush waits for
FORGERIES_KEPT = 10  # the reasons of the first forged deliveries kept (the count is exact)


class Bus(Session):
    """One connection and one confirming channel, re-established when lost (``session.Session``).

    Deliveries are collected by pika's callback and handed out by ``poll`` (never handled inside
    the callback), so a handler may publish, and a reconnect happens outside pika's dispatch. Acks
    of deliveries from an older connection are skipped: the broker redelivers those, and the
    receiver drops them as duplicates.

    Invariant: ``outbox`` holds every published message until it and all before it are confirmed,
    and the deliveries whose acks wait for that (``outbox.Outbox``).
    """

    def __init__(
        self,
        url: str,
        topology: Topology,
        connect_timeout: float = 60.0,
        on_connect: Callable[[Any], None] | None = None,
        name: str = "client",
        prefetch: int = 100,
        first_node: int | None = None,
        secret: str | None = None,
    ) -> None:
        super().__init__(url, topology, connect_timeout, name, first_node)
        # the run's delivery mode is its topology's (docs/wire.md#delivery-designs)
        self.persistent = topology.durable
        self.on_connect = on_connect
        self.prefetch = prefetch
        # While deliveries keep coming, acks go out in batches of this many (at once when idle).
        self.ack_batch = max(1, prefetch // 4)
        # Invariant: at most this many published messages wait for their confirm (``send`` then waits
        # until half of them are confirmed: memory stays bounded when the broker slows down).
        self.max_unconfirmed = MAX_UNCONFIRMED
        self._consumers: dict[str, str] = {}  # queue -> consumer tag (re-established on reconnect)
        self._auto: set[str] = set()  # queues consumed without acks (``consume``)
        self._inbox: deque[Delivery] = deque()
        self.outbox = Outbox(quorum=topology.queue_type == "quorum")
        self._awaiting = False  # a flush waits for confirms: each one ends the I/O's wait
        self._nacked_since: float | None = None  # when the current run of nacks began (None: no nacks)
        self.published = self.redelivered = 0  # publishes, deliveries flagged redelivered
        # With the run's secret: every publish signed, every delivery checked (auth.py).
        self.signer = Signer(secret) if secret is not None else None
        self.forged = 0  # deliveries without a valid MAC, dead-lettered by ``poll``
        self.forgeries: list[str] = []  # the first FORGERIES_KEPT of them: key and reason

    # -- connection ------------------------------------------------------------------------
    def _open(self) -> None:
        """The confirming channel; declarations; consumers again; what was not confirmed, again."""
        channel: Channel = self.conn.channel()
        channel.confirm_delivery(self._on_confirm, self._on_return)
        channel.basic_qos(prefetch_count=self.prefetch)
        self.channel = channel
        self.topology.declare_base(channel)
        if self.on_connect is not None:
            self.on_connect(channel)
        self.generation += 1
        self.outbox.held.clear()  # their deliveries come back from the broker
        for queue in list(self._consumers):
            self._consume(queue)
        self._republish()
        if self.generation == 1:
            log.info("%s: connected to %s (%s queues)", self.name, self.node, self.topology.queue_type)

    def _on_confirm(self, frame) -> None:
        if (self.outbox.held or self._awaiting) and self.conn is not None:
            self.conn.wake()  # an ack or a flush waits for confirms: it goes on now
        method = frame.method
        nack = isinstance(method, pika.spec.Basic.Nack)
        if not nack:
            self._nacked_since = None  # the broker takes messages again
        self.outbox.confirm(method.delivery_tag, method.multiple, nack)

    def _on_return(self, _channel, method, _props, _body) -> None:
        self.outbox.returned(method.routing_key, method.exchange)

    def reconnect(self, why: BaseException) -> None:
        self._inbox.clear()  # unacked deliveries of the old connection come back from the broker
        super().reconnect(why)

    def _pending(self) -> int:
        return len(self.outbox)

    def close(self) -> None:
        """Wait for outstanding confirms and acks (briefly, if the broker is reachable), then disconnect."""
        if self.channel is not None and (self.outbox or self.outbox.held):
            try:
                self.flush(timeout=5.0)
            except (TransportError, *LOST):
                pass
        self._drop()

    # -- consuming -------------------------------------------------------------------------
    def consume(self, queue: str, auto_ack: bool = False) -> None:
        """Consume ``queue``; ``auto_ack``: the broker counts each delivery acked as it sends it (no
        unacked delivery to track, no ack to take) and ``ack`` sends nothing for it — only where the
        sender keeps custody of what is lost with a connection (transient protocol queues: links.py)."""
        self._consumers[queue] = ""
        if auto_ack:
            self._auto.add(queue)
        self._guard(lambda: self._consume(queue))

    def _consume(self, queue: str) -> None:
        generation, auto = self.generation, queue in self._auto

        def on_message(_ch, method, props, body, queue=queue):
            if method.redelivered:
                self.redelivered += 1
            headers = dict(props.headers or {})
            signer = self.signer
            forged = None if signer is None else signer.forged(method.routing_key, body, headers)
            self._inbox.append(
                Delivery(
                    queue,
                    method.routing_key,
                    body,
                    0 if auto else method.delivery_tag,  # 0: nothing to ack
                    generation,
                    bool(method.redelivered),
                    headers,
                    forged,
                    signer is not None and forged is None,
                )
            )
            self.conn.wake()  # a delivery ends the poll's wait

        self._consumers[queue] = self.channel.nowait.basic_consume(queue, on_message, auto_ack=auto)

    def cancel(self, queue: str) -> None:
        tag = self._consumers.pop(queue, None)
        if tag and self.channel is not None:
            with contextlib.suppress(*LOST):  # a lost channel has no consumer left to cancel
                self.channel.nowait.basic_cancel(tag)
        self._inbox = deque(d for d in self._inbox if d.queue != queue)

    def poll(self, timeout: float) -> list[Delivery]:
        """Wait up to ``timeout`` seconds for deliveries; return those collected, in order.

        On the way, buffered publishes are written out, confirms taken in and the acks they
        release sent — in batches of ``ack_batch`` while deliveries keep coming, all of them once
        the bus has been idle for ``ACK_LINGER`` seconds. While acks are held back, a confirm ends
        the I/O's wait early (``_on_confirm`` wakes it), and so does the end of the linger."""
        now = time.monotonic()
        deadline = now + max(0.0, timeout)
        linger_end = now + ACK_LINGER  # a delivery ends the poll: it is idle until then
        # acks already allowed go out before any wait (they free the prefetch window)
        self._settle(force=False)
        if self._inbox:  # taken in while ``flush`` waited for confirms: handed out without a wait
            deadline = now
        while True:
            wait = deadline - now
            if self.outbox.held and linger_end > now:
                wait = min(wait, linger_end - now)
            self._guard(functools.partial(self._io, max(0.0, wait)))
            self._settle(force=False)
            now = time.monotonic()
            if self._inbox or now >= deadline or not self.outbox.held:
                break  # deliveries, time is up, or the full wait passed with no ack held back
            if now >= linger_end:
                self._settle(force=True)
        return self._authentic()

    def _authentic(self) -> list[Delivery]:
        """The deliveries collected, up to the first forged one (``auth.py``). A forged delivery at
        the head is dead-lettered here, with its reason: every delivery handed out before it has been
        acked by now (the consumer acks or dead-letters each before it polls again), so its ack
        keeps the delivery order that cumulative acks need."""
        batch: list[Delivery] = []
        while self._inbox:
            if self._inbox[0].forged is None:
                batch.append(self._inbox.popleft())
                continue
            if batch:
                break  # handed out first; this one at the next poll, after their acks
            delivery = self._inbox.popleft()
            self.forged += 1
            reason = f"{delivery.forged} ({delivery.routing_key})"
            if len(self.forgeries) < FORGERIES_KEPT:
                self.forgeries.append(reason[:300])
            log.warning("%s: dead-lettered a forged message: %s", self.name, reason)
            self.dead_letter(delivery, reason)
        return batch

    def _io(self, seconds: float) -> None:
        """The connection's I/O for up to ``seconds``: writes, confirms, deliveries; raises the
        channel's closing (the broker refused something on it) as a lost connection."""
        self.conn.process_data_events(time_limit=seconds)
        self.channel.check()

    def ack(self, delivery: Delivery, later: bool = False, blocked: bool = False) -> None:
        """Acknowledge ``delivery`` once everything published so far is confirmed; ``later``: and
        the publish ``made`` will name (a trace batch not yet sent that will hold its events);
        ``blocked``: and only after ``unblock`` (it carries a message held back in memory).

        The ack goes out with the next ``poll``, ``flush`` or ``close``, together with the others
        released then (one cumulative ack; one by one behind a blocked delivery)."""
        if delivery.generation != self.generation or not delivery.tag:
            return  # from a lost connection: the broker redelivers it; tag 0: acked when sent
        self.outbox.hold(delivery, wait=self.persistent, later=later, blocked=blocked)

    def unblock(self, done: Callable[[Delivery], bool], later: bool = False) -> None:
        """The deliveries acked ``blocked`` that ``done`` names are handled: their acks wait, from
        now on, as ``ack`` would have them wait now (``later`` alike)."""
        self.outbox.unblock(done, wait=self.persistent, later=later)

    def made(self) -> None:
        """The publish just sent is the one the acks held ``later`` wait for (``Outbox.made``)."""
        self.outbox.made()

    # -- publishing ------------------------------------------------------------------------
    def send(
        self,
        routing_key: str,
        body: bytes | dict,
        message_id: str | None = None,
        exchange: str | None = None,
        headers: dict | None = None,
        mandatory: bool = True,
        expiration: float | None = None,
    ) -> None:
        """Publish (persistently, unless transient) without waiting for the confirm (``flush`` waits for it).

        ``expiration``: seconds after which the broker drops the message if no consumer took it
        (it is then dead-lettered with the reason ``expired``)."""
        if isinstance(body, dict):
            body = compact(body)
        if self.signer is not None:
            headers = dict(headers or {}, **{MAC_HEADER: self.signer.mac(routing_key, body)})
        props = pika.BasicProperties(
            delivery_mode=2 if self.persistent else 1,
            content_type="application/json",
            message_id=message_id,
            headers=headers,
            expiration=None if expiration is None else str(max(1, round(expiration * 1000))),
        )
        message = Outgoing(
            self.topology.exchange if exchange is None else exchange, routing_key, body, props, mandatory
        )
        if self.channel is None:
            self.connect()
        if len(self.outbox) >= self.max_unconfirmed:
            self._wait_confirms(self.max_unconfirmed // 2)  # back-pressure: the broker sets the pace
        try:
            self._transmit(message)
        except LOST as exc:
            self.reconnect(exc)  # re-publishes everything unconfirmed, this message included
        self.published += 1

    def publish(self, routing_key: str, body: bytes | dict, **options: Any) -> None:
        """``send`` (same options), then wait for the broker's confirm of it and of everything
        before it. Raises TransportError when the broker nacks or cannot route a message."""
        self.send(routing_key, body, **options)
        self.flush()

    def flush(self, timeout: float | None = None) -> None:
        """Wait until every message sent so far is confirmed, and send the acks that releases.

        Raises TransportError when the broker refused a message, or (with ``timeout``) when the
        confirms did not come in time."""
        self._wait_confirms(0, timeout)
        self._settle()

    def _wait_confirms(self, at_most: int, timeout: float | None = None) -> None:
        """Take in confirms until no more than ``at_most`` messages are unconfirmed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        self._awaiting = True
        try:
            while len(self.outbox) > at_most:
                wait = CONFIRM_WAIT
                if deadline is not None:
                    wait = min(wait, deadline - time.monotonic())
                    if wait <= 0:
                        raise TransportError(f"{len(self.outbox)} messages not confirmed within {timeout:g}s")
                self._guard(functools.partial(self._io, wait))
                self._raise_refused()
        finally:
            self._awaiting = False

    def _settle(self, force: bool = True) -> None:
        """Raise a refusal; send the acks of the held-back deliveries now allowed to go (unless
        ``force`` is off and fewer than ``ack_batch`` are): one cumulative ack, and single ones
        behind a blocked delivery."""
        self._raise_refused()
        acks = self.outbox.release(1 if force else self.ack_batch) if self.outbox.held else []
        if acks and self.channel is not None:
            try:
                for delivery, multiple in acks:
                    self.channel.nowait.basic_ack(delivery.tag, multiple=multiple)
            except LOST as exc:
                self.reconnect(exc)

    def _raise_refused(self) -> None:
        if self.outbox.nacked:
            self._recover_nacked()
        if self.outbox.refused:
            reason = self.outbox.refused[0]
            self.outbox.refused.clear()
            raise TransportError(reason)

    def _recover_nacked(self) -> None:
        """Quorum queues: after a nack (a queue without a leader), wait a moment, then start over on a
        fresh connection and channel and re-publish everything unconfirmed in its original order
        (as after a lost connection: what was delivered and not acked comes back, and duplicates are
        dropped by their sequence numbers). Gives up with TransportError after ``connect_timeout``
        seconds of nacks."""
        nacked = len(self.outbox.nacked)
        now = time.monotonic()
        if self._nacked_since is None:
            self._nacked_since = now
        elif now - self._nacked_since > self.connect_timeout:
            raise TransportError(
                f"quorum queues kept refusing messages (nack) for {self.connect_timeout:g}s: "
                "is a majority of the cluster's nodes running?"
            )
        log.warning(
            "%s: the broker refused %d publish(es) (nack: a quorum queue without a leader?); "
            "re-publishing %d unconfirmed from a fresh connection",
            self.name,
            nacked,
            len(self.outbox),
        )
        time.sleep(NACK_PAUSE)
        self.reconnect(TransportError("publishes nacked by a quorum queue"))

    def _transmit(self, message: Outgoing) -> None:
        self.outbox.add(message)
        # buffered until the next poll or flush writes it out (amqp.Channel.basic_publish)
        self.channel.basic_publish(
            message.exchange, message.routing_key, message.body, message.props, message.mandatory
        )

    def _republish(self) -> None:
        """After a reconnect: send again, in the original order, everything not confirmed."""
        for message in self.outbox.restart():
            self._transmit(message)

    def dead_letter(self, delivery: Delivery, reason: str, ack: bool = True) -> None:
        """Move a delivery to the run's dead-letter queue with its reason, then ack it (unless
        ``ack`` is off: the caller asks for its ack itself, behind its step)."""
        headers = {
            **delivery.headers,
            "x-mutexlab-reason": reason[:500],
            "x-mutexlab-queue": delivery.queue,
            "x-mutexlab-routing-key": delivery.routing_key,
        }
        self.send(delivery.routing_key, delivery.body, exchange=self.topology.dlx, headers=headers)
        if ack:
            self.ack(delivery)
