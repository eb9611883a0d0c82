"""Vector clocks that contradict themselves are refused before any verdict (docs/trace-format.md#consistency).

The capacity audit reads happened-before from the clocks alone, so clocks that could not come from
any run would let it judge a run that never was: two holders may overlap while their clocks say
one knew the other's exit. ``consistent(events, source, ids)`` passes a log's events on unchanged,
checking each process's clock against its previous one (``_Clocks.feed``), and raises TraceError
naming the line of the first contradiction. The rules, per event e of process p:

* p's own entry is exactly one more than at p's previous event (1 at its first): an entry that goes
  back, stands still or skips events is refused;
* no other entry goes back;
* ``ids`` (a trace whose messages are events: a mutexlab trace, an exported log): another entry
  grows only at a ``recv``, to exactly the maximum of p's previous clock and the clock of the
  ``send`` with the same ``id`` (sends and receives paired in any file order), and that send knows
  no event of p from the receive on (a header declaring ``"duplicates": true``: each receive of
  the same ``id`` holds to these, against the one send, kept to the end). Induction over these equations shows every entry k of q
  names q's own k-th event and that happened-before is acyclic: any cycle would need a send that
  knows its own receive.
* without ``ids`` (a ShiViz log: any record may be a receive): an entry of q that grows to k names
  q's k-th event f, which must exist, and e must know everything f knows (f's clock ≤ e's) while
  f knows no event of p from e on. f's clock is q's latest clock that grew another entry ("the
  history"), with its own entry k; a record of f not read yet (a log of one host after another)
  holds the claim until it is. A record whose growth one earlier record explains (its clock
  covers the others grown) costs one comparison.

Time: linear in the clocks read (plus, without ``ids``, one comparison per message source). Memory:
each process's latest clock, the sends not yet received (as ``integrity.py`` holds them) and,
without ``ids``, the clocks of the records that learned something from another host (a ShiViz
log's receives) and the claims waiting for a record further on.
"""

from __future__ import annotations

import os
import shlex
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Iterator

from ..trace import TraceError
from .exclusive import InexactStream


def consistent(events: Iterable[dict], source: str, ids: bool = True, prune: bool = False) -> Iterator[dict]:
    """``events`` (the run header first), each checked as it passes (``_Clocks``); TraceError
    ``source:line: ...`` at the first clock that contradicts the others. ``prune`` (without ``ids``):
    forget the history no host seen so far can ask for, and raise ``InexactStream`` should a host
    seen later ask for it after all (read the log again without ``prune``)."""
    clocks = _Clocks(source, ids, prune)
    for event in events:
        if event["event"] == "run":
            clocks.duplicates = event.get("duplicates") is True  # a message may be received twice
        elif isinstance(event.get("vc"), dict):
            clocks.feed(event)
        yield event
    clocks.finish()


def _rotated(source: str) -> str:
    """How to put a rotated log together, oldest first: its older files named when they are there
    (``LOG.1``, ``LOG.2``, …, as logging's RotatingFileHandler and logrotate name them)."""
    numbered = source.rpartition(".")
    base, first = (numbered[0], int(numbered[2]) + 1) if numbered[2].isdigit() else (source, 1)
    older = [f"{base}.{k}" for k in range(first, first + 99) if os.path.isfile(f"{base}.{k}")]
    if not older or source.startswith("/proc/self/fd/"):
        return "cat app.log.2 app.log.1 app.log > run.log"
    named = [shlex.quote(name) for name in [*reversed(older), source]]
    return f"cat {' '.join(named)} > run.log"


class _Clocks:
    def __init__(self, source: str, ids: bool, prune: bool = False) -> None:
        self.source = source
        self.ids = ids
        self.last: dict[str, dict] = {}  # process → the clock of its latest event read
        self.sent: dict[object, dict] = {}  # id → the clock of a send not yet received
        self.waiting: dict[
            object, tuple[dict, dict, str, object]
        ] = {}  # id → (recv clock, previous, pid, line)
        self.duplicates = False  # a send is kept once received: another copy may come
        self.copies: dict[object, list[tuple[dict, dict, str, object]]] = {}  # id → further early recvs
        self.history = _History()  # host → its clocks that grew another entry
        self.prune = prune
        self.prune_at = 1024
        self.claims: dict[
            str, dict[int, list[tuple[dict, str, object]]]
        ] = {}  # host → k → (clock, pid, line)

    def fail(self, line: object, problem: str) -> TraceError:
        return TraceError(f"{self.source}:{line}: the vector clocks contradict each other: {problem}")

    def feed(self, event: dict) -> None:
        pid, vc, line = event["pid"], event["vc"], event.get("_line", "?")
        prev = self.last.get(pid) or {}
        before = prev.get(pid, 0)
        own = vc.get(pid, 0)  # check_event: every entry a whole number ≥ 0, the own one ≥ 1
        if own != before + 1:
            how = "goes back" if own <= before else "skips events"
            lamport = (
                own > before + 1 and not self.ids and len(vc) == 1
            )  # `{"rank-1": 5}` from a Lamport clock?
            raise self.fail(
                line,
                f"{_shown(pid)}'s own entry {how}: {own} after {before} (each of its events adds exactly 1"
                + (
                    "; a Lamport clock is no vector clock: write clock-free JSON Lines instead)"
                    if lamport
                    else f"; the log holds none of its first {own - 1} events: it starts mid-run, as a "
                    f"rotated log's newest file does? put its older files first, oldest first: {_rotated(self.source)})"
                    if before == 0
                    else "; is a record missing, or out of its order? `sort` orders lines that share a "
                    "time stamp by the text after it: merge per-host files with `sort -m`)"
                    if how == "skips events"
                    else ")"
                ),
            )
        self.last[pid] = vc
        if not self.ids:
            self._by_history(pid, vc, prev, own, self._grown(vc, prev, pid, line), line)
            return
        kind, key = event["event"], event.get("id")
        if kind == "send" and key is not None:
            recv = self.waiting.pop(key, None)
            if recv is None or self.duplicates:
                self.sent.setdefault(key, vc)
            if recv is not None:
                self._received(key, vc, *recv)
                for copy in self.copies.pop(key, ()):
                    self._received(key, vc, *copy)
        if kind == "recv" and key is not None:  # checked against its send, when both are read
            sent = self.sent.get(key) if self.duplicates else self.sent.pop(key, None)
            if sent is not None:
                self._received(key, sent, vc, prev, pid, line)
            elif self.duplicates and key in self.waiting:
                self.copies.setdefault(key, []).append((vc, prev, pid, line))
            else:
                self.waiting.setdefault(key, (vc, prev, pid, line))
        elif self._grown(vc, prev, pid, line):
            name = next(n for n in vc if n != pid and vc[n] > prev.get(n, 0))
            raise self.fail(
                line,
                f"{_shown(pid)}'s {kind} knows event {vc[name]} of {_shown(name)} (it knew "
                f"{prev.get(name, 0)}) without receiving a message that tells it"
                + (" (a recv needs the 'id' of its send)" if kind == "recv" else ""),
            )

    def _grown(self, vc: dict, prev: dict, pid: str, line: object) -> list[str]:
        """The processes but ``pid`` whose entries grew; TraceError when one went back."""
        if len(vc) == len(prev) + (pid not in prev):  # the common case: the same names, own ticked
            same = dict(vc)
            if pid in prev:
                same[pid] = prev[pid]
            else:
                del same[pid]
            if same == prev:
                return []
        for name, count in prev.items():
            if name != pid and vc.get(name, 0) < count:
                raise self.fail(
                    line,
                    f"{_shown(pid)}'s entry for {_shown(name)} goes back from {count} to {vc.get(name, 0)}",
                )
        return [name for name, count in vc.items() if name != pid and count > prev.get(name, 0)]

    # -- a trace whose messages are events (ids) -------------------------------------------------
    def _received(self, key: object, sent: dict, vc: dict, prev: dict, pid: str, line: object) -> None:
        """recv clock ``vc`` of ``pid`` (previous clock ``prev``) against the clock of its send:
        every entry but its own the maximum of the two, and the send knows nothing of it."""
        own = vc[pid]
        if sent.get(pid, 0) >= own:
            raise self.fail(
                line,
                f"message {key} was sent knowing event {sent.get(pid, 0)} of {_shown(pid)}, which "
                f"receives it as its own event {own}: a cycle of causality",
            )
        expected = dict(prev)
        for name, count in sent.items():
            if count > expected.get(name, 0):
                expected[name] = count
        expected[pid] = own
        if expected == vc:
            return
        for name in set(vc) | set(expected):  # explicit zeros aside, where they differ
            if vc.get(name, 0) != expected.get(name, 0):
                raise self.fail(
                    line,
                    f"{_shown(pid)}'s recv of message {key} says it knows event {vc.get(name, 0)} of "
                    f"{_shown(name)}; it knew {prev.get(name, 0)} and the message carried "
                    f"{sent.get(name, 0)}",
                )

    # -- a log whose clocks alone carry the messages (ShiViz) ------------------------------------
    def _by_history(self, pid: str, vc: dict, prev: dict, own: int, grown: list[str], line: object) -> None:
        if grown:
            sources: list[dict] = []  # the clocks checked: what they know is known to be consistent
            for name in grown:
                k = vc[name]
                if any(source.get(name, 0) >= k for source in sources):
                    continue
                known = self.last.get(name)
                if known is None or known.get(name, 0) < k:  # not read yet: checked when it is
                    self.claims.setdefault(name, {}).setdefault(k, []).append((vc, pid, line))
                    continue
                source = self.history.clock(name, k)
                self._covers(vc, pid, own, source, name, k, line)
                source[name] = k  # its own entry, which the history leaves out
                sources.append(source)
            self.history.add(pid, own, vc)
            if self.prune and self.history.size >= self.prune_at:
                self.prune_at = max(1024, 2 * self.history.forget(self.last))
        waiting = self.claims.get(pid)
        if waiting:
            for claimant, claimant_pid, claim_line in waiting.pop(own, ()):
                self._covers(claimant, claimant_pid, claimant.get(claimant_pid, 0), vc, pid, own, claim_line)

    def _covers(self, vc: dict, pid: str, own: int, source: dict, name: str, k: int, line: object) -> None:
        """Event ``own`` of ``pid`` (clock ``vc``) knows event k of ``name``, whose clock is ``source``."""
        if source.get(pid, 0) >= own:
            raise self.fail(
                line,
                f"{_shown(pid)}'s event {own} knows event {k} of {_shown(name)}, which knows it in turn: "
                "a cycle of causality",
            )
        for other, count in source.items():
            if other not in (name, pid) and vc.get(other, 0) < source.get(other, 0):
                raise self.fail(
                    line,
                    f"{_shown(pid)}'s event {own} knows event {k} of {_shown(name)} but not what that "
                    f"one knew: event {count} of {_shown(other)}",
                )

    def finish(self) -> None:
        """TraceError for an entry naming an event its process never had."""
        unknown = [
            (line if isinstance(line, int) else 0, k, pid, line, name)
            for name, claims in self.claims.items()
            for k, waiting in claims.items()
            for _, pid, line in waiting
        ]
        if unknown:
            _, k, pid, line, name = min(unknown, key=lambda x: x[0])
            had = self.last.get(name, {}).get(name, 0)
            raise self.fail(
                line,
                f"{_shown(pid)} knows event {k} of {_shown(name)}, which has {had} event{'s' if had != 1 else ''}",
            )


class ClockForgotten(InexactStream):
    """A record asked for a clock ``prune`` forgot: read the log again keeping every clock (its
    intervals can still be forgotten: the order of the file is not in question)."""


QUIET_AFTER = 65_536  # clocks held at which a host quiet since the last ``forget`` stops holding them


class _History:
    """Per host, the clocks of its events that grew another host's entry, by own index, each held
    as two arrays (host slots, counts): about 16 bytes an entry instead of a dict's 100."""

    def __init__(self) -> None:
        self.slot: dict[str, int] = {}
        self.names: list[str] = []
        self.kept: dict[str, tuple[list[int], list[tuple[array, array]]]] = {}
        self.forgotten: dict[str, int] = {}  # host → the latest own index whose clock was forgotten
        self.size = 0
        self.spoke: dict[str, int] = {}  # host → its own count at the previous ``forget``

    def add(self, host: str, own: int, vc: dict) -> None:
        slot = self.slot
        for name in vc:
            if name not in slot:
                slot[name] = len(self.names)
                self.names.append(name)
        indices, clocks = self.kept.setdefault(host, ([], []))
        indices.append(own)
        clocks.append((array("l", [slot[n] for n in vc]), array("q", vc.values())))
        self.size += 1

    def clock(self, host: str, k: int) -> dict:
        """The entries of ``host``'s clock at its event k but its own: those of its latest clock
        kept up to k. ``InexactStream`` when that one was forgotten."""
        indices, clocks = self.kept.get(host, ([], []))
        at = bisect_right(indices, k)
        if not at and host in self.forgotten:  # the clock it needs, or an earlier one, is forgotten
            raise ClockForgotten(f"the clock of {host}'s event {k} was forgotten")
        if not at:
            return {}
        slots, counts = clocks[at - 1]
        return dict(zip(map(self.names.__getitem__, slots), counts, strict=True))

    def forget(self, last: dict[str, dict]) -> int:
        """Forget the clocks no host seen so far can ask for (each host's knowledge of another only
        grows); the number kept. Skipped when comparing every host with every other costs more
        than the clocks held. Once ``QUIET_AFTER`` clocks are held, a host that wrote nothing since
        the previous call is left out (a GoVector process that logged ``Initialization Complete``
        and no more would keep every clock): should it ask for a clock forgotten, ``clock`` raises
        ``InexactStream`` and the log is read again keeping them all."""
        hosts = list(last)
        if len(hosts) ** 2 > 16 * self.size:
            return self.size
        spoke = {r: last[r].get(r, 0) for r in hosts}
        if self.size >= QUIET_AFTER:
            hosts = [r for r in hosts if self.spoke.get(r) != spoke[r]]
        self.spoke = spoke
        self.size = 0
        for host, (indices, clocks) in self.kept.items():
            floor = min((last[r].get(host, 0) for r in hosts if r != host), default=0)
            at = bisect_right(indices, floor) - 1  # the clock a claim above the floor may need, and later
            if at > 0:
                self.forgotten[host] = indices[at - 1]
                del indices[:at], clocks[:at]
            self.size += len(indices)
        return self.size


def _shown(name: str) -> str:
    return name if name.isprintable() else repr(name)
