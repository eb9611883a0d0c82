"""The control messages a participant takes on its ``control.<name>`` key: the monitor's stop,
a link acknowledgement (transient delivery), a director's action (a directed replay).

A body that is not a JSON object, or of a kind this process does not know, changes nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from ..bus.wire import loads
from . import directing

log = logging.getLogger("mutexlab.participant")


def body_of(raw: bytes) -> dict[str, Any]:
    """The control message's object; ``{}`` when it is not JSON or not an object."""
    try:
        data = loads(raw)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def act(participant: Any, raw: bytes, local_input: Callable[[Any], None]) -> None:
    """Carry out one control message for ``participant`` (``local_input``: how it takes a local step)."""
    data = body_of(raw)
    kind = data.get("kind")
    if kind == "stop":
        log.info("%s: stop (%s)", participant.name, data.get("reason", "run over"))
        participant.stopped = True
    elif kind == "link" and participant.links is not None:
        participant.links.on_link(data, participant.roster, time.monotonic())
    elif kind == "directed" and participant.settings.directed:
        directing.act(participant, str(data.get("action")), local_input)
