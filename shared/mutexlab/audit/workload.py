"""The workload of a foreign log, stated by its reader (``verify --expect-entries [HOST=]N``).

A log without a run header names no plan, so one cut short at a moment when every process
happened to be idle looks finished. ``Workload`` counts each process's entries (``enter`` events,
any resource) as the events stream by and, when a workload is stated, makes every process with
fewer entries a ``workload-short`` finding (unfinished: INCOMPLETE, never SAFE). When none is
stated the verdict says so: the workload is listed as not checked. A log whose header names an
algorithm, or a built-in problem, is left to its checks (its header states the workload).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import replace

from ..findings import Violation
from ..limits import whole_number
from ..trace import TraceError
from ..words import count
from .verdict import Verdict, named_problem

EVERY = "*"  # the key of the entries every process should make
CHECK = "entries per process as stated (--expect-entries)"
UNCHECKED = (
    "the workload (the log states none, so a log cut short while everyone is idle reads as "
    "finished: --expect-entries N states it)"
)

NO_ENTRIES = (
    "no process entered a resource: the log has no 'enter' the audit reads, so mutual exclusion "
    "was never put to the test (are its descriptions 'enter R' and 'exit R', or its events' 'event' "
    'exactly "enter" and "exit"?)'
)


# What a capacity finding of a clock-free log without a single message adds: any two holdings by
# two processes overlap there, whatever their stamps say (a lock shared in memory, not logged).
NO_MESSAGES = (
    "; the log records no message (no send, no recv), so no event of one process happened-before "
    "another's: its time stamps are not causality. Log each hand-over of the resource as a send and "
    "its recv (docs/verify-any-log.md, clock-free JSON Lines)"
)


def unordered(v: Violation) -> Violation:
    """``v``, a capacity finding saying why in a log without messages (``NO_MESSAGES``)."""
    return replace(v, message=v.message + NO_MESSAGES) if v.rule == "capacity" else v


class Workload:
    """``counted`` wraps a log's events (run header first); ``judged`` completes its verdict."""

    def __init__(self, expected: dict[str, int] | None, source: str) -> None:
        self.expected = dict(expected or {})
        self.source = source
        self.restart()

    def restart(self) -> None:
        """Forget the counts: the log is read again."""
        self.entries: Counter[str] = Counter()
        self.last: dict[str, dict] = {}  # process → its latest entry (what a finding cites)
        self.algorithm: object = None

    def counted(self, events: Iterable[dict]) -> Iterator[dict]:
        for event in events:
            kind, pid = event["event"], event["pid"]
            if kind == "run":
                self.algorithm = event.get("algorithm")
                named = f"the algorithm {self.algorithm!r}"
                if self.algorithm is None and named_problem(event.get("problem")) is not None:
                    self.algorithm, named = event["problem"], f"the problem {event['problem']!r}"
                if self.expected and self.algorithm is not None:
                    raise TraceError(
                        f"{self.source}: its run header names {named}, whose checks take the "
                        "workload from the header; --expect-entries is for logs without one"
                    )
            else:
                self.entries[pid] += 0  # every process seen, entering or not
                if kind == "enter":
                    self.entries[pid] += 1
                    self.last[pid] = event
            yield event

    def judged(self, verdict: Verdict) -> Verdict:
        """``verdict`` with the workload's findings and its check, or a note that it was not checked;
        undecided (``no-entries``) when nobody entered anything, unless no entry was expected."""
        if self.algorithm is not None:
            return verdict
        if verdict.subject == "JSON Lines log" and not (
            verdict.counts.get("send") or verdict.counts.get("recv")
        ):
            verdict.violations[:] = [unordered(v) for v in verdict.violations]
        if not any(self.entries.values()) and not (self.expected and not any(self.expected.values())):
            verdict.violations.append(Violation("no-entries", NO_ENTRIES))
        if not self.expected:
            verdict.unchecked.append(UNCHECKED)
            return verdict
        verdict.checks.append(CHECK)
        every = self.expected.get(EVERY)
        wanted = {pid: every for pid in self.entries} if every is not None else {}
        wanted.update((pid, n) for pid, n in self.expected.items() if pid != EVERY)
        for pid in sorted(wanted):
            made, asked = self.entries.get(pid, 0), wanted[pid]
            if made < asked:
                seen = "" if pid in self.entries else " (it never appears in the log)"
                if not made and pid in self.entries and pid not in self.expected:
                    # N is every process's: a server that only answers was never meant to enter
                    seen += f" (N is per process: one that never enters is stated --expect-entries {pid}=0)"
                verdict.violations.append(
                    Violation(
                        "workload-short",
                        f"{pid} entered {count(made, 'time')}{seen}; --expect-entries states "
                        f"{count(asked, 'entry')}",
                        [self.last[pid]] if pid in self.last else [],
                    )
                )
        return verdict


def parse_expected(pairs: list[str]) -> dict[str, int]:
    """``--expect-entries`` values (``N``: every process; ``HOST=N``: that one) as a mapping;
    TraceError for a bad one."""
    expected: dict[str, int] = {}
    for pair in pairs:
        name, sep, value = pair.rpartition("=")
        n = _whole(value)
        if (sep and not name) or n is None:
            raise TraceError(
                f"--expect-entries {pair!r}: write N (entries of every process) or HOST=N, N a whole number"
            )
        expected[name if sep else EVERY] = n
    return expected


def _whole(text: str) -> int | None:
    """A whole number ≥ 0 in ASCII digits (``limits.whole_number``: not ``²`` nor ``1_0``), or None."""
    try:
        value = whole_number(text)
    except ValueError:
        return None
    return value if text[:1] not in "+-" else None
