"""A participant directed by ``mutexlab replay --over-rabbitmq`` (``DIRECTED``; director: directed.py).

A directed participant acts only on the director's word, a control message
``{"kind": "directed", "action": A}`` on ``control.<name>``: ``start`` (its protocol's
``start()``), ``request`` or ``exit`` (a local decision, as a scenario's step), ``over`` (the
scenario is played). Its ``Schedule`` effects arm no timer (``Participant.add_timer``): as in
scripted replay, the scenario decides when a process acts. Its protocol messages reach it only
as the director releases them (the director moves the bindings of its queue).

Invariant: until ``over``, the participant reports one pending decision (``HELD``, a timer that
never fires), so the monitor never judges the run complete before the scenario is played.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Callable
from typing import Any

log = logging.getLogger("mutexlab.participant")

HELD = (math.inf, 0, "")  # a timer entry that never comes due


def hold(participant: Any) -> None:
    """At the start of the work: wait for the director, counted as a pending decision."""
    participant.timers.append(HELD)


def act(participant: Any, action: str, feed: Callable[[Callable[[Any], Any]], None]) -> None:
    """Carry out the director's word ``action`` (module doc); ``feed`` hands a local input to the
    protocol (``Participant._input``)."""
    if action == "over":
        participant.timers = [t for t in participant.timers if t != HELD]
        heapq.heapify(participant.timers)
        participant.changed = True  # the next step carries the status that says so
    elif action == "start":
        feed(lambda p: p.start())
    elif action in ("request", "exit"):
        feed(lambda p: p.on_local(action))
    else:
        log.warning("%s: unknown directed action %r ignored", participant.name, action)
