"""The monitor's audit feed (docs/architecture.md#monitor): the trace as it arrives, and when the run ends.

Each member publishes its trace events (``audit.<name>``, one batch for the steps since its last,
with its latest status when a state changed: tracing.py) and its status (``status.<name>``).
Batches of different members come in any order, so a receipt can come before its send. The feed

* drops what is no member's, and duplicates: each event ticks its process's own vector entry once,
  from 1, so an entry not above the last one seen is a redelivered or re-published copy (counted);
* puts a batch that starts beyond the next entry of its process aside until the events before it
  come: after a failover a process's batches can arrive out of order (a publish a quorum queue
  refused, re-sent after later ones were taken; a consumer's unacked deliveries handed back
  behind newer ones), and the run is not complete while any waits;
* writes every other event to the trace (docs/architecture.md#trace-format) and shows it in the
  live view (view.py);
* counts messages by type, entries by resource kind and scenario events, and keeps the messages
  sent and not yet received;
* says when the run is complete (every member finished with no timer left, and every sent
  message received) and, when it is not, who stalled: each member's state, what it waits for,
  how long it has been silent, and how many messages sent to it it never received.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Collection, Iterable
from typing import Any

from ..sim.driver import resource_kind
from ..trace import TraceWriter
from .tracing import unpack_batch
from .view import LiveView

log = logging.getLogger("mutexlab.monitor")

PROTOCOL_EVENTS = {"send", "recv", "enter", "exit", "state"}


class AuditFeed:
    """What the monitor has heard from the members. ``members`` is empty until the roster closes:
    until then every event and status is ignored."""

    def __init__(self, trace: TraceWriter, view: LiveView) -> None:
        self.trace = trace
        self.view = view
        self.members: Collection[str] = ()
        self.status: dict[str, dict] = {}  # each member's last status
        self.heard: dict[str, float] = {}  # monotonic time each member was last heard
        self.sent: dict[Any, Any] = {}  # message id -> destination, until received (as the event says)
        # Receipts heard before their send: batches of different participants arrive in any order
        # (a sender's batch re-published after a failover comes after its addressee's receipt).
        self.received_early: set[Any] = set()
        self.messages: Counter[str] = Counter()
        self.entries: Counter[str] = Counter()
        self.notes: Counter[str] = Counter()
        self.last_own: dict[str, int] = {}
        # Batches held back until the earlier events of their process come: name -> {own entry it starts at: batch}.
        self.held: dict[str, dict[int, dict]] = {}
        self.duplicates = 0
        self.last_progress = time.monotonic()  # the last new trace event
        self.holding: dict[str, list[str]] = {}  # resource → who holds it now, by enter and exit events

    def batch(self, name: str, data: dict) -> str | None:
        """An ``audit.<name>`` message; the problem when it is malformed (to dead-letter it)."""
        problem = unpack_batch(data)  # clocks sent as what changed since the event before
        if problem is not None:
            return f"monitor: {problem}"
        events = data.get("events", [data])  # a batch (one step's events), or a single event
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            return "monitor: an audit batch must hold a list of JSON objects"
        first = _own(name, events[0]) if events and name in self.members else None
        if first is not None and first > self.last_own.get(name, 0) + 1:
            held = self.held.setdefault(name, {})
            if first in held:
                self.duplicates += len(events)
            held.setdefault(first, data)
            return None
        self._take(name, events, data)
        held = self.held.get(name, {})
        while held and min(held) <= self.last_own.get(name, 0) + 1:  # what was held back for these
            data = held.pop(min(held))
            self._take(name, data.get("events", [data]), data)
        return None

    def _take(self, name: str, events: list[dict], data: dict) -> None:
        for event in events:
            self.event(name, event)
        if isinstance(data.get("status"), dict):  # the batch of an input that changed the state
            self.report(name, data["status"])

    def report(self, name: str, status: dict) -> None:
        """A member's status (``status.<name>``, or the one that came with a batch)."""
        if name in self.members:
            self.status[name] = status
            self.heard[name] = time.monotonic()
            self.view.status(name, status)

    def event(self, name: str, event: dict) -> None:
        """One trace event of ``name``: written unless it is no member's or a duplicate."""
        own = _own(name, event)
        if name not in self.members or own is None:
            log.warning("monitor: ignored a trace event claiming to be from %r", name)
            return
        if own <= self.last_own.get(name, 0):
            self.duplicates += 1
            return
        self.last_own[name] = own
        self.trace.write(event)
        self.last_progress = time.monotonic()
        self.heard[name] = self.last_progress
        kind = event["event"]
        self.view.event(name, event)
        if kind == "send":
            self.messages[event.get("type", "?")] += 1
            if event.get("id") in self.received_early:
                self.received_early.discard(event.get("id"))
            else:
                self.sent[event.get("id")] = event.get("to")
        elif kind == "recv":
            if event.get("copy") is True:  # a second delivery of a message paired already
                pass
            elif self.sent.pop(event.get("id"), None) is None:
                self.received_early.add(event.get("id"))
        elif kind == "enter":
            self.entries[resource_kind(str(event.get("resource")))] += 1
            self.holding.setdefault(str(event.get("resource")), []).append(name)
        elif kind == "exit" and name in self.holding.get(str(event.get("resource")), ()):
            self.holding[str(event.get("resource"))].remove(name)
        elif kind not in PROTOCOL_EVENTS:
            self.notes[kind] += 1

    def done(self, name: str) -> bool:
        """``name`` reported itself finished, with no timer left, and every trace event it had
        recorded then (its status's ``events``) was heard: a status can overtake the batch before it
        after a failover."""
        status = self.status.get(name, {})
        events = status.get("events")
        heard = not isinstance(events, int) or self.last_own.get(name, 0) >= events
        return bool(status.get("finished")) and not status.get("timers") and heard

    def complete(self, names: Iterable[str]) -> bool:
        """Every one of ``names`` is done, every sent message was received, and no batch waits for
        earlier events of its process. No receipt heard before its send (``received_early``) is
        asked about: with every member done and all its events heard, every send was heard and
        paired; one left is a receipt of a message no member sent, which the audit reports at
        once — waiting on it would only turn that finding into a stall."""
        return not self.sent and not any(self.held.values()) and all(self.done(n) for n in names)

    def silent_for(self, seconds: float) -> bool:
        """No new trace event for more than ``seconds``: the run stalled."""
        return time.monotonic() - self.last_progress > seconds

    def stalled(self, names: Iterable[str]) -> dict[str, Any]:
        """Who of ``names`` is not done (state, what it waits for, seconds silent or None if never
        heard), who has messages sent to it never received (``undelivered``), and whose trace misses
        events that later ones wait behind (``missing_events``: the own vector entry of the first)."""
        stalled: dict[str, Any] = {}
        now = time.monotonic()
        for name in names:
            if self.done(name):
                continue
            status = self.status.get(name, {})
            stalled[name] = {
                "state": status.get("state", "unknown"),
                "waiting": status.get("waiting", {}),
                "silent_for": round(now - self.heard[name], 1) if name in self.heard else None,
            }
            if isinstance(status.get("wants"), list):  # what it waits to enter, as it told (sim/stuck.told)
                stalled[name]["wants"] = [str(w)[:100] for w in status["wants"][:16]]
            if status.get("hint"):  # why it may be stuck that its waits cannot say (Protocol.stall_hint)
                stalled[name]["hint"] = str(status["hint"])[:500]

        def entry(name: str) -> dict[str, Any]:  # a member stalled only for what the transport knows
            return stalled.setdefault(
                name,
                {
                    "state": self.status.get(name, {}).get("state", "unknown"),
                    "waiting": {},
                    "silent_for": None,
                },
            )

        for dest, n in Counter(self.sent.values()).items():
            entry(dest)["undelivered"] = n
        for name, held in self.held.items():
            if held:
                entry(name)["missing_events"] = self.last_own.get(name, 0) + 1
        return stalled

    def rejected(self, names: Iterable[str]) -> list[dict[str, Any]]:
        """The inputs ``names``' protocols rejected, as their last statuses tell: one
        ``{"process", "count", "reasons"}`` per member that rejected any (a finding: the run stops)."""
        found = []
        for name in names:
            status = self.status.get(name, {})
            n, reasons = status.get("rejected"), status.get("rejections")
            if isinstance(n, int) and n > 0:
                kept = [str(r) for r in reasons] if isinstance(reasons, list) else []
                found.append({"process": name, "count": n, "reasons": kept})
        return found

    def states(self, names: Iterable[str]) -> dict[str, str]:
        """Each of ``names``' last reported state (``unknown`` if none)."""
        return {n: self.status.get(n, {}).get("state", "unknown") for n in names}


def _own(name: str, event: dict) -> int | None:
    """The own vector entry of ``name``'s event (its number among the process's events), or None
    when the event is not ``name``'s or has no such entry."""
    vc = event.get("vc")
    own = vc.get(name) if isinstance(vc, dict) else None
    return own if event.get("pid") == name and isinstance(own, int) else None
