"""The ``mutex`` and ``kmutex`` problems' progress checks of a trace (resource ``cs``).

Safety (at most one holder of ``cs``) is the generic capacity audit's job. This module checks
that the run ended well, from the trace alone:

* every request was served: per node, the number of ``request`` events (ClassicNode records
  one per local request) equals the number of ``enter`` events of ``cs``;
* nobody entered without asking (more entries than requests);
* every node ends idle: its last ``state`` event (if any) is ``RELEASED``, and it holds no
  ``cs`` at the end (an ``enter`` without its ``exit``).
  Idle is the node's final state (``ClassicNode.is_final``): released with no request left. With
  ``params.requests`` = R > 0 each node asks R times by itself, so fewer entries is a trace that
  ends early even with everyone released (``workload-short``).

A trace of a run that was cut short fails these checks on purpose: a request left waiting is
exactly what they are there to show.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..findings import Invariants, Violation
from ..words import count

CS = "cs"  # the critical section
IDLE_STATE = "RELEASED"  # a node's final state: it neither wants nor holds the critical section

CHECKS = ("every request served", "no entry without a request", "every node ends idle")
# The event kinds ``check`` reads (no clocks); ``Stream`` reads them one at a time, keeping none.
EVENTS = frozenset({"request", "enter", "exit", "state"})


def check(events: list[dict[str, Any]], run: dict[str, Any]) -> list[Violation]:
    stream = Stream(run)
    for event in events:
        stream.feed(event)
    return stream.finish()


class Stream:
    """``check`` fed one event at a time (``feed``, then ``finish``): it keeps per node a few
    counts and its latest events, never the trace."""

    def __init__(
        self, run: dict[str, Any], resource: str = CS, idle: str = IDLE_STATE, workload_key: str = "requests"
    ) -> None:
        self.resource, self.idle, self.key = resource, idle, workload_key
        self.names = list((run.get("processes") or {}).values())
        workload = (run.get("params") or {}).get(workload_key, 0)
        self.workload = workload if isinstance(workload, int) and not isinstance(workload, bool) else 0
        self.requests: Counter[str] = Counter()
        self.enters: Counter[str] = Counter()
        self.last_request: dict[str, dict[str, Any]] = {}
        self.last_state: dict[str, dict[str, Any]] = {}
        self.holding: dict[str, dict[str, Any]] = {}

    def feed(self, event: dict[str, Any]) -> None:
        kind, pid = event["event"], event["pid"]
        if kind == "request":
            self.requests[pid] += 1
            self.last_request[pid] = event
        elif kind == "enter" and event.get("resource") == self.resource:
            self.enters[pid] += 1
            self.holding[pid] = event
        elif kind == "exit" and event.get("resource") == self.resource:
            self.holding.pop(pid, None)
        elif kind == "state":
            self.last_state[pid] = event
        if pid not in self.names and kind in EVENTS:
            self.names.append(pid)

    def finish(self) -> list[Violation]:
        requests, enters, holding, resource = self.requests, self.enters, self.holding, self.resource
        found: list[Violation] = []
        for name in self.names:
            asked, served = requests[name], enters[name]
            if asked > served:
                found.append(
                    Violation(
                        "request-unserved",
                        f"{name} asked for {resource} {count(asked, 'time')} but entered {count(served, 'time')}: "
                        f"{count(asked - served, 'request')} left waiting",
                        [self.last_request[name]],
                    )
                )
            elif served > asked:
                found.append(
                    Violation(
                        "enter-without-request",
                        f"{name} entered {resource} {count(served, 'time')} but asked only {count(asked, 'time')}",
                    )
                )
            if served < self.workload and asked <= served:
                found.append(
                    Violation(
                        "workload-short",
                        f"{name} entered {resource} {count(served, 'time')}; the run header's workload asks "
                        f"{count(self.workload, 'time')} ({self.key} = {self.workload})",
                        [e for e in (self.last_request.get(name) or self.last_state.get(name),) if e],
                    )
                )
            if name in holding:
                found.append(
                    Violation(
                        "held-at-end",
                        f"{name} still holds {resource} at the end of the trace",
                        [holding[name]],
                    )
                )
            state = self.last_state.get(name)
            if state is not None and state.get("state") != self.idle:
                found.append(
                    Violation(
                        "not-idle-at-end",
                        f"{name} ends in state {state.get('state')}, not {self.idle}",
                        [state],
                    )
                )
        return found


# What the classic specs' ``audit`` hook gives the verdict (its rules are core ones: findings.py).
INVARIANTS = Invariants(CHECKS, check, events=EVENTS, stream=Stream, workload="requests")
