"""Everything the transport takes from pika's private internals, in one place.

The bus (``rabbit.py``) uses pika's ``BlockingConnection`` — one thread, no callbacks to
reason about, a reconnect is a plain loop — and three things that class does not offer publicly:

* **asynchronous publisher confirms.** ``BlockingChannel.confirm_delivery`` makes every publish
  wait for its own confirm: one broker round trip and, for a persistent message, one disk sync
  (with quorum queues, one Raft commit on a majority) per message. The bus pipelines up to
  ``MAX_UNCONFIRMED`` publishes instead, which needs confirms delivered to a callback and
  publishes that do not wait. Both exist on the channel ``BlockingChannel`` wraps
  (``channel._impl``, a ``pika.channel.Channel``), which is the public channel of pika's own
  ``SelectConnection``;
* **joined socket writes** (``join_writes``): pika writes each frame with its own system call;
* **a wait ended by a confirm** (``wake``): ``process_data_events`` ends its wait early for a
  delivery, not for a confirm taken by a callback.

The alternative is ``SelectConnection`` (public, with asynchronous confirms), at the price of
rewriting the bus around pika's callback I/O loop; until that is done these few lines are the
whole dependency on pika's internals. They were written against pika 1.3 and 1.4 (checked on
1.4.4); ``PIKA_VERSIONS`` is the range ``pyproject.toml`` pins, and ``check_pika`` refuses a
pika whose internals are not the expected ones with a clear error instead of failing in the
middle of a run. ``tests/test_pika_internals.py`` checks the pin and the internals.

Besides, ``without_replies`` gives the same underlying channel for declarations, bindings and
deletions sent without waiting for each reply (``BlockingChannel`` waits for every one: one round
trip each), and for queue deletions whose reply comes to a callback, so that the run's queues are
deleted concurrently, on channels of their own (``rabbit.delete_queues``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pika

PIKA_VERSIONS = ">=1.3,<2"  # as pinned in pyproject.toml (tests/test_pika_internals.py compares them)

# Buffered frames are joined into socket writes of at most this many bytes (``join_writes``).
WRITE_LIMIT = 128 * 1024


class PikaInternalsError(RuntimeError):
    """The installed pika lacks an internal the transport relies on (see the module's doc)."""


def check_pika() -> None:
    """Raise PikaInternalsError naming what is missing when pika is not the one this module knows."""
    from pika import channel as pika_channel
    from pika.adapters.blocking_connection import BlockingChannel
    from pika.adapters.utils import io_services_utils

    missing = [
        what
        for what, present in (
            ("pika.channel.Channel.confirm_delivery", hasattr(pika_channel.Channel, "confirm_delivery")),
            ("pika.channel.Channel.basic_publish", hasattr(pika_channel.Channel, "basic_publish")),
            ("pika.channel.Channel.queue_delete", hasattr(pika_channel.Channel, "queue_delete")),
            ("BlockingChannel._impl", "_impl" in BlockingChannel.__init__.__code__.co_names),
            (
                "BlockingConnection._request_channel_dispatch",
                hasattr(pika.BlockingConnection, "_request_channel_dispatch"),
            ),
            (
                "io_services_utils._AsyncPlaintextTransport",
                hasattr(io_services_utils, "_AsyncPlaintextTransport"),
            ),
        )
        if not present
    ]
    if missing:
        raise PikaInternalsError(
            f"pika {pika.__version__} lacks {', '.join(missing)}; mutexlab's transport needs pika{PIKA_VERSIONS}"
        )


def confirm_asynchronously(
    channel: Any,
    on_confirm: Callable[[Any], None],
    on_return: Callable[[Any, Any, Any, bytes], None],
    selected: Callable[[Any], None],
) -> None:
    """Turn on publisher confirms on ``channel`` (a ``BlockingChannel``) with ``on_confirm``
    called for every ``Basic.Ack``/``Basic.Nack`` and ``on_return`` for every returned message;
    ``selected`` is called when the broker has switched the channel to confirm mode (the caller
    runs the connection's I/O until then)."""
    impl = channel._impl  # noqa: SLF001 - BlockingChannel offers no asynchronous confirms
    impl.confirm_delivery(ack_nack_callback=on_confirm, callback=selected)
    impl.add_on_return_callback(on_return)


def publish_without_waiting(
    channel: Any, exchange: str, routing_key: str, body: bytes, properties: Any, mandatory: bool
) -> None:
    """Publish on the channel ``channel`` wraps: pika buffers the frames until the connection's
    next I/O writes them, and nothing waits for the confirm (``BlockingChannel.basic_publish``
    would, in confirm mode)."""
    channel._impl.basic_publish(  # noqa: SLF001 - see confirm_asynchronously
        exchange, routing_key, body, properties=properties, mandatory=mandatory
    )


def wake(conn: pika.BlockingConnection) -> None:
    """End the wait of ``conn``'s current (or next) ``process_data_events`` once the callback that
    calls this returns. A negative channel number is pika's own request to stop waiting
    (``BlockingConnection._request_channel_dispatch``)."""
    conn._request_channel_dispatch(-1)  # noqa: SLF001 - pika offers no public way to end a wait early


def join_writes(conn: pika.BlockingConnection, limit: int = WRITE_LIMIT) -> bool:
    """Make ``conn`` write what it has buffered in few ``send`` calls instead of one per frame.

    pika sends every frame with its own system call: a publish is three (method, header, body), a
    participant's broadcast to four peers twelve, and the broker reads as many TCP segments. Joined,
    the frames buffered since the last poll leave in one write (same bytes, same order); a large
    backlog is joined into pieces of at most ``limit`` bytes (``WRITE_LIMIT``), so a partial send
    never re-copies much. Only pika's plain TCP transport is changed (TLS keeps pika's own path);
    False when it is not there.
    """
    from pika.adapters.utils import io_services_utils

    transport: Any = getattr(conn._impl, "_transport", None)  # noqa: SLF001 - pika offers no hook for this
    if type(transport) is not io_services_utils._AsyncPlaintextTransport:  # noqa: SLF001
        return False
    buffers, produce = transport._tx_buffers, transport._produce  # noqa: SLF001

    def produce_joined() -> None:
        if len(buffers) > 1:
            pieces: list[bytes] = []
            part: list[bytes] = []
            size = 0
            for chunk in buffers:
                if part and size + len(chunk) > limit:
                    pieces.append(b"".join(part))
                    part, size = [], 0
                part.append(chunk)
                size += len(chunk)
            pieces.append(b"".join(part))
            buffers.clear()
            buffers.extend(pieces)
        produce()

    transport._produce = produce_joined  # noqa: SLF001
    return True


def without_replies(channel: Any) -> Any:
    """The channel ``channel`` (a ``BlockingChannel``) wraps. Its ``exchange_declare``,
    ``queue_declare``, ``queue_bind``, ``queue_delete`` and ``exchange_delete`` called without a
    callback are sent with AMQP's ``nowait``: no reply, nothing waits (``queue_delete`` with a
    callback returns at once, and the callback hears the reply from the connection's I/O). The broker handles a
    channel's methods in order and closes the channel on the first it refuses, so one method that
    waits, sent after them on ``channel`` itself, returns only once all of them are done — or
    raises ``ChannelClosedByBroker`` with the refusal."""
    return channel._impl  # noqa: SLF001 - see confirm_asynchronously
