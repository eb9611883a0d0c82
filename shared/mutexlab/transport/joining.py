"""A participant's admission (docs/architecture.md#membership): it announces itself with a join
(``join.<role>``, confirmed, expiring before it stops waiting) and waits on its own exclusive queue,
bound to ``control.<instance>``, for the monitor's answer: a welcome (its name, pid and the run's
configuration) or a refusal. Joins are idempotent: after a reconnect (the exclusive queue, with any
answer in it, is gone) it asks again and the monitor answers as it did or would have.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import time

from ..bus.rabbit import Bus
from .membership import wanted_name
from .settings import ParticipantSettings

log = logging.getLogger("mutexlab.participant")

JOIN_REPLY_MARGIN = 2.0  # seconds a join's answer may take: the join expires this much before the wait ends


def join_ttl(join_timeout: float) -> float:
    """How long a join may wait in the monitor's queue: until shortly before its participant gives up."""
    return max(join_timeout / 2, join_timeout - JOIN_REPLY_MARGIN)


def join_body(role: str, instance: str, wants: str | None = None) -> dict:
    body = {
        "kind": "join",
        "instance": instance,
        "role": role,
        "host": socket.gethostname(),
        "os_pid": os.getpid(),
    }
    if wants is not None:  # the name its stable name asks for (membership.wanted_name)
        body["wants"] = wants
    return body


def announce(bus: Bus, role: str, instance: str, deadline: float, wants: str | None = None) -> int:
    """Publish the join (confirmed); returns the connection generation it was published on.
    It expires before this process stops waiting for the answer: a monitor started after it gave
    up never takes the join, so it never admits a process that is gone."""
    bus.publish(
        f"join.{role}",
        join_body(role, instance, wants),
        expiration=join_ttl(max(0.0, deadline - time.monotonic())),
    )
    return bus.generation


def ask(bus: Bus, role: str, instance: str, queue: str, settings: ParticipantSettings) -> dict | None:
    """Join and wait for the monitor's answer to this instance: the welcome or refusal (a dict with
    ``kind``), or None when none came within ``JOIN_TIMEOUT`` (logged)."""
    bus.consume(queue)
    deadline = time.monotonic() + settings.join_timeout
    wants = wanted_name(role, settings.stable_name)
    announced = announce(bus, role, instance, deadline, wants)
    log.info("%s: asked to join run %s as instance %s", role, settings.run_id, instance)
    while time.monotonic() < deadline:
        if bus.generation != announced:
            log.info("%s %s: reconnected while joining; asking again", role, instance)
            announced = announce(bus, role, instance, deadline, wants)
        for delivery in bus.poll(0.5):
            bus.ack(delivery)
            try:
                data = json.loads(delivery.body)
            except ValueError:
                continue
            if not isinstance(data, dict) or data.get("instance") != instance:
                continue
            if data.get("kind") == "refused":
                log.warning("%s %s: REFUSED by the monitor: %s; exiting", role, instance, data.get("reason"))
                return data
            if data.get("kind") == "welcome":
                if wants is not None and data.get("name") != wants:
                    log.info("%s %s: asked to be %s, welcomed as %s", role, instance, wants, data.get("name"))
                return data
    log.error(
        "%s %s: no roster from the monitor within %gs (is the monitor running for run %s?)",
        role,
        instance,
        settings.join_timeout,
        settings.run_id,
    )
    return None
