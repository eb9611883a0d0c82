"""Performance of a classic mutual-exclusion run, computed from its trace events alone.

Pure functions over trace events (docs/architecture.md#trace-format), so a simulated trace and a RabbitMQ trace are
measured the same way:

* **messages per entry** — network ``send`` events over ``enter`` events of ``cs``;
* **T**, the mean message delay — the mean of ``recv.t − send.t`` over matched message ids
  (1.0 by construction in the simulator, up to chance and FIFO holding);
* **response time** — from a process's ``request`` event to its next ``enter``;
* **synchronization delay** — from an ``exit`` to the next ``enter`` (by anyone), counted only
  when some process was waiting (had requested and not yet entered) at the exit.

Delays are reported in units of T. ``literature(name)`` gives the figures the literature quotes
for an algorithm (declared in its spec), for printing beside the measured ones.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from statistics import mean
from typing import Any

from .spec import Figure  # noqa: F401  (re-exported: the figures' type)

CS = "cs"


@dataclass
class RunMetrics:
    entries: int
    requests: int
    messages: dict[str, int]  # network messages by type
    mean_delay: float | None  # T, in trace time units; None without any message
    response_times: list[float] = field(default_factory=list)  # in units of T
    sync_delays: list[float] = field(default_factory=list)  # in units of T

    @property
    def total_messages(self) -> int:
        return sum(self.messages.values())

    @property
    def per_entry(self) -> float | None:
        return self.total_messages / self.entries if self.entries else None

    @property
    def response_time(self) -> float | None:
        return mean(self.response_times) if self.response_times else None

    @property
    def sync_delay(self) -> float | None:
        return mean(self.sync_delays) if self.sync_delays else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "entries": self.entries,
            "requests": self.requests,
            "messages": dict(sorted(self.messages.items())),
            "total_messages": self.total_messages,
            "messages_per_entry": _round(self.per_entry),
            "mean_message_delay": _round(self.mean_delay),
            "response_time": _round(self.response_time),
            "response_samples": len(self.response_times),
            "sync_delay": _round(self.sync_delay),
            "sync_samples": len(self.sync_delays),
        }


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def message_counts(events: list[dict[str, Any]]) -> dict[str, int]:
    return dict(Counter(e.get("type", "?") for e in events if e.get("event") == "send"))


def mean_message_delay(events: list[dict[str, Any]]) -> float | None:
    """Mean of receive time − send time over messages matched by id; None when there are none."""
    sent = {e["id"]: e["t"] for e in events if e.get("event") == "send" and "id" in e}
    delays = [e["t"] - sent[e["id"]] for e in events if e.get("event") == "recv" and e.get("id") in sent]
    return mean(delays) if delays else None


def measure(events: list[dict[str, Any]], unit: float | None = None) -> RunMetrics:
    """Measure a classic run. ``unit`` is T; by default the mean message delay of the trace
    itself (1.0 when the trace has no message)."""
    body = sorted((e for e in events if e.get("event") != "run"), key=lambda e: e.get("t", 0.0))  # stable
    measured = mean_message_delay(body)
    scale = unit if unit is not None else (measured if measured else 1.0)
    waiting: dict[str, float] = {}  # pid → time of its pending request
    last_exit: float | None = None  # an exit seen while someone waited, not yet followed
    entries = requests = 0
    response: list[float] = []
    sync: list[float] = []
    for e in body:
        kind, pid, t = e["event"], e["pid"], e.get("t", 0.0)  # every event has both (trace.REQUIRED)
        if kind == "request" and e.get("resource", CS) == CS:
            requests += 1
            waiting[pid] = t
        elif kind == "enter" and e.get("resource") == CS:
            entries += 1
            asked = waiting.pop(pid, None)
            if asked is not None:
                response.append((t - asked) / scale)
            if last_exit is not None:
                sync.append((t - last_exit) / scale)
                last_exit = None
        elif kind == "exit" and e.get("resource") == CS:
            last_exit = t if any(p != pid for p in waiting) else None
    return RunMetrics(entries, requests, message_counts(body), measured, response, sync)


# -- what the literature says ----------------------------------------------------------------
def literature(algorithm: str | None) -> dict[str, Figure]:
    """The figures the literature quotes for ``algorithm`` (its spec's), or none (plugins, unknown names)."""
    from .protocols import registry

    found = registry.SPECS.get(algorithm or "")
    return dict(found.literature) if found is not None else {}
