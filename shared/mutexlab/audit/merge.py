"""A ShiViz log whose records are not in a causal order — per-host logs put end to end, as GoVector
writes them — read in one all the same: a k-way merge of its runs (docs/verify-any-log.md).

A first pass (``runs``) reads the log as ``shiviz._records`` does and notes where each run of one
host's consecutive records starts (its line and byte offset). The second (``merged``) keeps one
cursor per host, reading that host's runs in file order from their offsets, and passes on, of the
records whose clocks know only what was passed on already, the one earliest in the file: a
linearization of happened-before, every record with its own line. The bounded audit then reads it
as it reads a single writer's log (``exclusive.py``: settled intervals forgotten), instead of the
whole audit keeping every interval and every record that waits for a source further on.

Memory: the runs (at most ``MAX_RUNS``), one record and one open file per host (at most
``MAX_HOSTS``), the records waiting for another host's event. ``Stalled`` when no record can come
next (a clock naming an event no host has, or a cycle): the caller reads the log the old way,
which names the line.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Iterator
from contextlib import ExitStack
from itertools import islice
from typing import IO

from .shiviz import Layout, _records

MAX_RUNS = 4096  # runs of one host's records: more, and the log is read the old way
MAX_HOSTS = 256  # files open at once


class Stalled(Exception):
    """The log cannot be merged (too many runs or hosts, or no record can come next)."""


class _Marked:
    """A binary file that notes where its latest lines start (line number → byte offset)."""

    def __init__(self, handle: IO[bytes]) -> None:
        self.handle = handle
        self.number = 0
        self.at = handle.tell()
        self.starts: deque[tuple[int, int]] = deque(maxlen=64)

    def readline(self, limit: int = -1) -> bytes:
        line = self.handle.readline(limit)
        if line:
            self.number += 1
            self.starts.append((self.number, self.at))
            self.at += len(line)
        return line

    def offset(self, number: int) -> int:
        for n, at in reversed(self.starts):
            if n == number:
                return at
        raise Stalled(f"line {number} was not noted")  # a record of more than 64 lines


def runs(path: str, regex: str | None) -> tuple[Layout, list[tuple[str, int, int, int]]]:
    """The log's layout and its runs: (host, first line, its byte offset, records). TraceError as
    ``_records`` raises it; ``Stalled`` beyond ``MAX_RUNS`` or ``MAX_HOSTS``."""
    found: list[tuple[str, int, int, int]] = []
    layout: list[Layout] = []
    hosts: set[str] = set()
    with open(path, "rb") as handle:
        marked = _Marked(handle)
        records = _records(marked, str(path), None, regex, layout)  # type: ignore[arg-type]
        next(records)  # the run header
        for event in records:
            host, line = event["pid"], event["_line"]
            if found and found[-1][0] == host:
                last = found[-1]
                found[-1] = (host, last[1], last[2], last[3] + 1)
                continue
            hosts.add(host)
            if len(found) >= MAX_RUNS or len(hosts) > MAX_HOSTS:
                raise Stalled(f"more than {MAX_RUNS:,} runs or {MAX_HOSTS} hosts")
            found.append((host, line, marked.offset(line), 1))
    return layout[0], found


def merged(
    path: str, capacities: dict[str, int] | None, regex: str | None, stack: ExitStack
) -> Iterator[dict]:
    """The run header, then the log's events in a causal order (each host's in its own order);
    ``Stalled`` when none can come next. ``stack`` closes the files."""
    layout, found = runs(path, regex)
    with open(path, "rb") as handle:
        yield next(_records(handle, str(path), capacities, regex))
    queued: dict[str, deque[tuple[int, int, int]]] = {}
    for host, line, offset, count in found:
        queued.setdefault(host, deque()).append((line, offset, count))
    cursors: dict[str, Iterator[dict]] = {}

    def records_of(host: str) -> Iterator[dict]:
        for line, offset, count in queued.pop(host):
            with open(path, "rb") as handle:
                handle.seek(offset)
                yield from islice(layout.records_at(handle, line), count)

    heads: dict[str, dict] = {}
    passed: dict[str, int] = {}  # host → its own count at its latest record passed on
    ready: list[tuple[int, str]] = []  # (line, host) of heads that may come next
    waiting: dict[str, list[tuple[int, int, str]]] = {}  # host q → (k, line, host) heads waiting for q's k

    def place(host: str) -> None:
        event = heads[host]
        for name, k in event["vc"].items():
            if name != host and k > passed.get(name, 0):
                heapq.heappush(waiting.setdefault(name, []), (k, event["_line"], host))
                return
        heapq.heappush(ready, (event["_line"], host))

    def advance(host: str) -> None:
        event = next(cursors[host], None)
        if event is None:
            del heads[host]
            return
        heads[host] = event
        place(host)

    for host in queued:
        cursors[host] = records_of(host)
        stack.callback(cursors[host].close)  # type: ignore[attr-defined]
    for host in list(cursors):
        advance(host)
    while ready:
        _, host = heapq.heappop(ready)
        event = heads[host]
        yield event
        own = event["vc"][host]
        passed[host] = own
        woken = waiting.get(host)
        while woken and woken[0][0] <= own:
            place(heapq.heappop(woken)[2])
        advance(host)
    if heads:
        raise Stalled(f"{len(heads)} hosts wait for events no host has passed on")
