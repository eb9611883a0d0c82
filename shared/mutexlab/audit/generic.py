"""The checks of a trace whose algorithm has no audit of its own: another system's log (ShiViz,
clock-free JSON Lines), or a header naming no algorithm or one mutexlab does not know.

Safety is the capacity audit's (capacity.py). This module checks, per process and resource, that
the run ended well:

* every request was served: a ``request R`` followed by no ``enter R`` is left waiting;
* nobody holds a resource at the end (an ``enter`` without its ``exit``).

It does not require a request before an entry: a log may record entries only.
"""

from __future__ import annotations

from collections import Counter

from ..findings import Invariants, Violation
from ..words import count

CHECKS = ("every request served", "nobody holds a resource at the end")
EVENTS = frozenset({"request", "enter", "exit"})


def check(events: list[dict], run: dict) -> list[Violation]:
    stream = Stream(run)
    for event in events:
        stream.feed(event)
    return stream.finish()


class Stream:
    """``check`` fed one event at a time: per (process, resource) two counts and its latest
    request and entry, never the trace."""

    def __init__(self, run: dict) -> None:
        self.requests: Counter[tuple[str, str]] = Counter()
        self.enters: Counter[tuple[str, str]] = Counter()
        self.last_request: dict[tuple[str, str], dict] = {}
        self.holding: dict[tuple[str, str], dict] = {}

    def feed(self, event: dict) -> None:
        kind, resource = event["event"], event.get("resource")
        if not isinstance(resource, str):
            return  # an enter or exit without one is capacity.py's "malformed"
        key = (event["pid"], resource)
        if kind == "request":
            self.requests[key] += 1
            self.last_request[key] = event
        elif kind == "enter":
            self.enters[key] += 1
            self.holding[key] = event
        elif kind == "exit":
            self.holding.pop(key, None)

    def finish(self) -> list[Violation]:
        found = []
        for key in sorted(self.requests):
            asked, served = self.requests[key], self.enters[key]
            if asked > served:
                pid, resource = key
                found.append(
                    Violation(
                        "request-unserved",
                        f"{pid} asked for {resource} {count(asked, 'time')} but entered "
                        f"{count(served, 'time')}: {count(asked - served, 'request')} left waiting"
                        + self._named(pid, resource),
                        [self.last_request[key]],
                    )
                )
        for (pid, resource), enter in sorted(self.holding.items()):
            found.append(
                Violation("held-at-end", f"{pid} still holds {resource} at the end of the trace", [enter])
            )
        return found

    def _named(self, pid: str, resource: str) -> str:
        """What ``pid`` entered under ``resource:…`` names, when it did (reed:3 is one of the
        reeds): its requests for ``resource`` read as unserved only because they do not name what
        they were served. Each name once, however often it was entered."""
        prefix = resource + ":"
        names = [r for p, r in self.enters if p == pid and r.startswith(prefix)]
        if not names:
            return ""
        more = len(names) - 2
        shown = ", ".join(names[:2]) + (f" and {more:,} other{'s' if more > 1 else ''}" if more > 0 else "")
        return (
            f" (it entered {shown}: a request is served only by an enter of the same resource — "
            f"log it under the name it enters, or log no request)"
        )


# What ``audit/verdict.py`` applies to a trace without a family's own checks (core rules only).
INVARIANTS = Invariants(CHECKS, check, events=EVENTS, stream=Stream)
