"""Performance of a classic mutual-exclusion run, computed from its trace events alone.

Pure functions over trace events (docs/architecture.md#trace-format), so a simulated trace and a RabbitMQ trace are
measured the same way:

* **messages per entry** — network ``send`` events over ``enter`` events of ``cs``;
* **T**, the mean message delay — the mean of ``recv.t − send.t`` over matched message ids
  (1.0 by construction in the simulator, up to chance and FIFO holding);
* **response time** — from a process's ``request`` event to its next ``enter``;
* **synchronization delay** — from an ``exit`` to the next ``enter`` (by anyone), counted only
  when some process was waiting (had requested and not yet entered) at the exit.

Delays are reported in units of T. ``LITERATURE`` gives, per algorithm, the figures the
literature quotes, for printing beside the measured ones.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from statistics import mean
from typing import Callable

CS = "cs"


@dataclass
class RunMetrics:
    entries: int
    requests: int
    messages: dict[str, int]                  # network messages by type
    mean_delay: float | None                  # T, in trace time units; None without any message
    response_times: list[float] = field(default_factory=list)   # in units of T
    sync_delays: list[float] = field(default_factory=list)      # in units of T

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

    def as_dict(self) -> dict:
        return {"entries": self.entries, "requests": self.requests, "messages": dict(sorted(self.messages.items())),
                "total_messages": self.total_messages, "messages_per_entry": _round(self.per_entry),
                "mean_message_delay": _round(self.mean_delay),
                "response_time": _round(self.response_time), "response_samples": len(self.response_times),
                "sync_delay": _round(self.sync_delay), "sync_samples": len(self.sync_delays)}


def _round(value: float | None, digits: int = 3) -> float | None:
    return None if value is None else round(value, digits)


def message_counts(events: list[dict]) -> dict[str, int]:
    return dict(Counter(e.get("type", "?") for e in events if e.get("event") == "send"))


def mean_message_delay(events: list[dict]) -> float | None:
    """Mean of receive time − send time over messages matched by id; None when there are none."""
    sent = {e["id"]: e["t"] for e in events if e.get("event") == "send" and "id" in e}
    delays = [e["t"] - sent[e["id"]] for e in events if e.get("event") == "recv" and e.get("id") in sent]
    return mean(delays) if delays else None


def measure(events: list[dict], unit: float | None = None) -> RunMetrics:
    """Measure a classic run. ``unit`` is T; by default the mean message delay of the trace
    itself (1.0 when the trace has no message)."""
    body = sorted((e for e in events if e.get("event") != "run"), key=lambda e: e.get("t", 0.0))  # stable
    measured = mean_message_delay(body)
    scale = unit if unit is not None else (measured if measured else 1.0)
    waiting: dict[str, float] = {}          # pid → time of its pending request
    last_exit: float | None = None          # an exit seen while someone waited, not yet followed
    entries = requests = 0
    response: list[float] = []
    sync: list[float] = []
    for e in body:
        kind, pid, t = e.get("event"), e.get("pid"), e.get("t", 0.0)
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
@dataclass(frozen=True)
class Figure:
    text: str                                           # as the literature writes it
    value: Callable[[int, dict], tuple[float, float] | None]   # (low, high) for N and the run's params

    def range(self, n: int, params: dict | None = None) -> tuple[float, float] | None:
        return self.value(n, params or {})

    def render(self, n: int, params: dict | None = None) -> str:
        span = self.range(n, params)
        if span is None:
            return self.text
        low, high = span
        number = f"{low:.3g}" if math.isclose(low, high) else f"{low:.3g}–{high:.3g}"
        return f"{self.text} = {number}"


def _sanders_messages(n: int, params: dict) -> tuple[float, float] | None:
    """Uncontended cost of Sanders' sets: REQUEST and GRANT for each other member of R_i, RELEASE
    for each other member of I_i, averaged over i (contention adds FAILED/INQUIRE/YIELD)."""
    request, inform = params.get("request_sets"), params.get("inform_sets")
    if not isinstance(request, dict) or not isinstance(inform, dict) or not request:
        return None
    costs = [2 * len(set(request[k]) - {int(k)}) + len(set(inform.get(k, [])) - {int(k)}) for k in request]
    value = sum(costs) / len(costs)
    return value, value


LITERATURE: dict[str, dict[str, Figure]] = {
    "lamport": {"messages": Figure("3(N−1)", lambda n, p: (3 * (n - 1),) * 2),
                "sync": Figure("T", lambda n, p: (1, 1))},
    "ricart-agrawala": {"messages": Figure("2(N−1)", lambda n, p: (2 * (n - 1),) * 2),
                        "sync": Figure("T", lambda n, p: (1, 1))},
    "maekawa": {"messages": Figure("3√N to 5√N", lambda n, p: (3 * math.sqrt(n), 5 * math.sqrt(n))),
                "sync": Figure("2T", lambda n, p: (2, 2))},
    "sanders": {"messages": Figure("sets: 2|R∖i|+|I∖i| uncontended", _sanders_messages),
                "sync": Figure("T to 2T (sets)", lambda n, p: (1, 2))},
    "suzuki-kasami": {"messages": Figure("0 or N", lambda n, p: (0, n)),
                      "sync": Figure("T", lambda n, p: (1, 1))},
    "raymond": {"messages": Figure("O(log N)", lambda n, p: (math.log2(n),) * 2 if n > 1 else (0, 0)),
                # Kshemkalyani & Singhal: (T log N)/2 — the token travels half the tree's diameter on average.
                "sync": Figure("(T·log N)/2", lambda n, p: (math.log2(n) / 2,) * 2 if n > 1 else (0, 0))},
}
