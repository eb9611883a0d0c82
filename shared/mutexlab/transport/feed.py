"""The monitor's audit feed (docs/architecture.md#monitor): the trace as it arrives, and when the run ends.

Each member publishes its trace events (``audit.<name>``, one batch per step, with its status
when the step changed its state) and its status (``status.<name>``). The feed

* drops what is no member's, and duplicates: each event ticks its process's own vector entry once
  and a process's events are published in order, so an entry not above the last one seen is a
  redelivered or re-published copy (counted); an entry beyond the next one means events were lost
  on the way (trace batches are transient, links.py): it is dropped too, and the process is
  ``behind`` until the monitor has asked it for the missing events and got them (so is a process
  whose status says it ``recorded`` more than the feed has);
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
from .view import Progress

log = logging.getLogger("mutexlab.monitor")

PROTOCOL_EVENTS = {"send", "recv", "enter", "exit", "state"}


class AuditFeed:
    """What the monitor has heard from the members. ``members`` is empty until the roster closes:
    until then every event and status is ignored."""

    def __init__(self, trace: TraceWriter, view: Progress) -> None:
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
        self.ahead: dict[str, int] = {}  # the highest own entry each member is known to have recorded
        self.duplicates = 0
        self.last_progress = time.monotonic()  # the last new trace event

    def batch(self, name: str, data: dict) -> str | None:
        """An ``audit.<name>`` message; the problem when it is malformed (to dead-letter it)."""
        events = data.get("events", [data])  # a batch (one step's events), or a single event
        if not isinstance(events, list) or not all(isinstance(e, dict) for e in events):
            return "monitor: an audit batch must hold a list of JSON objects"
        for event in events:
            self.event(name, event)
        if isinstance(data.get("status"), dict):  # the batch of an input that changed the state
            self.report(name, data["status"])
        return None

    def report(self, name: str, status: dict) -> None:
        """A member's status (``status.<name>``, or the one that came with a batch)."""
        if name in self.members:
            recorded = status.get("recorded")
            if isinstance(recorded, int) and recorded > self.ahead.get(name, 0):
                self.ahead[name] = recorded
            self.status[name] = status
            self.heard[name] = time.monotonic()
            self.view.status(name, status)

    def event(self, name: str, event: dict) -> None:
        """One trace event of ``name``: written unless it is no member's or a duplicate."""
        own = event.get("vc", {}).get(name) if isinstance(event.get("vc"), dict) else None
        if name not in self.members or event.get("pid") != name or not isinstance(own, int):
            log.warning("monitor: ignored a trace event claiming to be from %r", name)
            return
        if own <= self.last_own.get(name, 0):
            self.duplicates += 1
            return
        if own > self.last_own.get(name, 0) + 1:  # events before it were lost: asked for again
            self.ahead[name] = max(own, self.ahead.get(name, 0))
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
            if self.sent.pop(event.get("id"), None) is None:
                self.received_early.add(event.get("id"))
        elif kind == "enter":
            self.entries[resource_kind(str(event.get("resource")))] += 1
        elif kind not in PROTOCOL_EVENTS:
            self.notes[kind] += 1

    def done(self, name: str) -> bool:
        """``name`` reported itself finished, with no timer left."""
        status = self.status.get(name, {})
        return bool(status.get("finished")) and not status.get("timers")

    def behind(self) -> list[str]:
        """The members whose trace misses events they recorded (to ask for again)."""
        return [n for n, own in self.ahead.items() if own > self.last_own.get(n, 0)]

    def complete(self, names: Iterable[str]) -> bool:
        """Every one of ``names`` is done, every sent message was received and no trace misses events."""
        return not self.sent and all(self.done(n) for n in names) and not self.behind()

    def silent_for(self, seconds: float) -> bool:
        """No new trace event for more than ``seconds``: the run stalled."""
        return time.monotonic() - self.last_progress > seconds

    def stalled(self, names: Iterable[str]) -> dict[str, Any]:
        """Who of ``names`` is not done (state, what it waits for, seconds silent or None if never
        heard), and who has messages sent to it never received (``undelivered``)."""
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
        for dest, n in Counter(self.sent.values()).items():
            stalled.setdefault(
                dest,
                {
                    "state": self.status.get(dest, {}).get("state", "unknown"),
                    "waiting": {},
                    "silent_for": None,
                },
            )["undelivered"] = n
        return stalled

    def states(self, names: Iterable[str]) -> dict[str, str]:
        """Each of ``names``' last reported state (``unknown`` if none)."""
        return {n: self.status.get(n, {}).get("state", "unknown") for n in names}
