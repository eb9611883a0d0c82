"""Clock-free JSON Lines: mutexlab's own event shape without ``vc`` (docs/verify-any-log.md).

Each line is one event (``event``, ``pid`` and the kind's fields, as in a trace); a ``send`` and
its ``recv`` carry the same ``id``. The file need only keep each process's lines in that process's
order: the vector clocks are derived here exactly as ``trace.Recorder`` keeps them (every event
ticks its process's own entry once; a ``recv`` first merges the clock of its ``send``). A run
header as the first line is optional (``export --format jsonl`` keeps it); without one the log
names no algorithm and every resource has capacity 1 unless told.

The events come out in a causal order (a ``recv`` after its ``send``), each with its clock and
its file line: in file order when the file is causal, as a single writer makes it. A process
whose ``recv`` comes before its ``send`` in the file waits (its later lines are held) until the
send is read, so a file of per-process logs put end to end is read too, holding what waits. A
``recv`` whose ``send`` never comes is an error naming its line. A ``recv`` marked ``"copy": true``
(a duplicated delivery, docs/trace-format.md) does not consume its send (``_copy``).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterator
from typing import IO

from .. import limits
from ..keywords import FOREIGN_JSON, nested_fields, not_an_object, run_together, uncoloured
from ..trace import (
    REQUIRED,
    TraceError,
    bounded_lines,
    check_event,
    cut_off,
    cut_sentence,
    decode_line,
    names_problem,
    twice,
)
from .shiviz import run_header

_MESSAGE_KINDS = ("send", "recv")


class _Deriver:
    def __init__(self, source: str) -> None:
        self.source = source
        self.clocks: dict[str, dict[str, int]] = {}
        self.in_flight: dict[object, tuple[dict[str, int], int]] = {}  # id → (send's clock, line)
        self.blocked: dict[str, deque[dict]] = {}  # process → its events waiting behind a recv
        self.waiting: dict[object, list[str]] = {}  # id → processes whose next event receives it
        self.held = 0  # events read and not yet given out (those in ``blocked``)
        self.in_flight_entries = 0  # clock entries in ``in_flight``

    def take(self, event: dict) -> Iterator[dict]:
        """``event`` and whatever it unblocks, each with its clock, in a causal order."""
        self.held += 1  # until it is given out
        if self.held > limits.MAX_WAITING_EVENTS:
            raise TraceError(self._too_many(event))
        queue = self.blocked.get(event["pid"])
        if queue is not None:  # its process waits for a send: after the events before it
            queue.append(event)
            return
        work = [(event["pid"], deque([event]))]
        while work:
            pid, queue = work.pop()
            while queue:
                head = queue[0]
                if head["event"] == "recv" and head["id"] not in self.in_flight and not _copy(head):
                    self.blocked[pid] = queue
                    self.waiting.setdefault(head["id"], []).append(pid)
                    break
                queue.popleft()
                self.held -= 1
                yield self._clocked(head)
                if head["event"] == "send":
                    work += [(w, self.blocked.pop(w)) for w in self.waiting.pop(head["id"], [])]

    def _too_many(self, event: dict) -> str:
        """Why the log is refused at ``event``, held beyond ``MAX_WAITING_EVENTS``: the receive that
        waits longest and its sender, which may not have written a line yet (per-process logs put
        end to end, which a clock-free log cannot be read as in bounded memory)."""
        first = min((q[0] for q in self.blocked.values() if q), key=lambda e: e["_line"])
        sender = first.get("from")
        silent = (
            f", which has written nothing before line {event['_line']} (per-process logs put end to end?)"
            if isinstance(sender, str) and sender not in self.clocks and sender not in self.blocked
            else ""
        )
        return (
            f"{self.source}:{event['_line']}: more than {limits.MAX_WAITING_EVENTS:,} events wait for "
            "sends further on in the file (the limit of a clock-free log out of order, "
            f"limits.MAX_WAITING_EVENTS): {first['pid']} waits since line {first['_line']} for message "
            f"{first['id']!r} from {sender}{silent}. A clock-free log is read in one pass, holding "
            "what waits: write it in one order where each send comes before its receive (one writer, "
            "or the processes' files merged so), or write vector clocks (a ShiViz log whose hosts' "
            "logs are put end to end is read as a merge)"
        )

    def _clocked(self, event: dict) -> dict:
        pid, kind, line = event["pid"], event["event"], event["_line"]
        clock = self.clocks.setdefault(pid, {})
        if kind == "recv":
            if not _copy(event):
                sent, _ = self.in_flight.pop(event["id"])
                self.in_flight_entries -= len(sent)
            else:  # the send still in flight (the original comes later), or received already here
                sent = self.in_flight.get(event["id"], ({}, 0))[0]
            for name, count in sent.items():
                if clock.get(name, 0) < count:
                    clock[name] = count
        clock[pid] = clock.get(pid, 0) + 1
        event["vc"] = dict(clock)
        if kind == "send":
            key = event["id"]
            if key in self.in_flight:
                raise TraceError(
                    f"{self.source}:{line}: message id {key!r} is sent again while still in flight "
                    f"(sent at line {self.in_flight[key][1]}): ids must be unique"
                )
            self.in_flight[key] = (event["vc"], line)
            self.in_flight_entries += len(event["vc"])
            if self.in_flight_entries > limits.MAX_IN_FLIGHT_ENTRIES:
                raise TraceError(
                    f"{self.source}:{line}: the messages sent and not yet received carry more than "
                    f"{limits.MAX_IN_FLIGHT_ENTRIES:,} clock entries (the limit of a clock-free log, "
                    "limits.MAX_IN_FLIGHT_ENTRIES)"
                )
        problem = check_event(event)
        if problem:
            raise TraceError(f"{self.source}:{line}: {problem}")
        return event

    def finish(self) -> None:
        """TraceError for the first receive still waiting for its send."""
        waiting = [q[0] for q in self.blocked.values() if q]
        if not waiting:
            return
        recv = min(waiting, key=lambda e: e["_line"])
        later = [
            e for q in self.blocked.values() for e in q if e["event"] == "send" and e["id"] == recv["id"]
        ]
        why = (
            f": its send (line {later[0]['_line']}) waits behind another receive that cannot happen first"
            if later
            else ""
        )
        raise TraceError(
            f"{self.source}:{recv['_line']}: {recv['pid']} receives message {recv['id']!r}, which no send "
            f"of the log carries{why}"
        )


def _copy(event: dict) -> bool:
    """A second delivery of a message the network duplicated (``"copy": true``): it takes its
    send's clock while the send is in flight, and leaves it there for the original; after the
    original, this process has that clock already. It never waits for its send."""
    return event.get("copy") is True


def read_clockfree(
    handle: IO[bytes], source: str, capacities: dict[str, int] | None = None, cut: list[str] | None = None
) -> Iterator[dict]:
    """The events of a clock-free JSON Lines log with their derived clocks, the run header first
    (the log's own, or one naming no algorithm: ``shiviz.run_header``). TraceError naming ``source``
    and the line for anything unreadable. ``cut`` as in ``trace.parse_events``: a last line cut
    mid-write ends the events, named there."""
    deriver = _Deriver(source)
    started = False
    for number, raw in enumerate(bounded_lines(handle, source, "a line"), 1):
        if cut is not None and started and cut_off(raw):
            cut.append(cut_sentence(number))
            break
        line = decode_line(raw, source, number)
        if not line.strip():
            continue
        try:
            line = uncoloured(line)  # `jq -C`'s colour codes: the JSON between them is read
            limits.members(line)  # before parsing: what it would hold is what is refused
            event = json.loads(line, object_pairs_hook=limits.unique_keys)
        except limits.InputError as exc:  # a key twice, too many members: not what this reader takes
            raise TraceError(f"{source}:{number}: {twice(exc)}") from None
        except RecursionError as exc:  # JSON, nested too deep
            raise TraceError(f"{source}:{number}: JSON past a limit ({limits.refused(exc)})") from None
        except ValueError as exc:
            raise TraceError(
                f"{source}:{number}: not JSON ({exc}){run_together(line, not started)}"
            ) from None
        where = f"{source}:{number}"
        problem = _shape(event)
        if problem:
            raise TraceError(f"{where}: {problem}")
        event["_line"] = number
        if event["event"] == "send" and isinstance(event.get("msg"), str):
            if _body_as_text(event["msg"]):
                raise TraceError(
                    f"{where}: send event's 'msg' is a JSON object written as a string "
                    f"({event['msg'][:40]!r}): the message's body; write the object itself, not its text"
                )
            del event["msg"]  # a structured logger's text (pino, zap, slog write it on every line)
        if event["event"] == "run":
            if started:
                raise TraceError(f"{where}: a run header after the first event")
            problem = check_event(event, first=True)
            if problem:
                raise TraceError(f"{where}: {problem}")
            started = True
            yield run_header(event, capacities)
            continue
        if not started:
            started = True
            yield run_header(None, capacities)
        if "vc" in event:
            raise TraceError(
                f"{where}: a clock-free log carries no 'vc' (a trace with clocks is --format mutexlab)"
            )
        if event["event"] in _MESSAGE_KINDS and not isinstance(event.get("id"), (str, int)):
            raise TraceError(f"{where}: a {event['event']} needs the 'id' its {_other(event)} carries too")
        yield from deriver.take(event)
    if not started:
        raise TraceError(f"{source}: the log is empty (no events)")
    deriver.finish()


def _shape(event: object) -> str | None:
    """What keeps a parsed line from being an event (as ``trace.check_event`` words it), or None."""
    if not isinstance(event, dict):
        return not_an_object(event)
    missing = [f for f in REQUIRED if f not in event]
    if missing:
        nested = nested_fields(event, missing)
        if nested:
            return f"event lacks {', '.join(missing)} at the top level{nested}"
        return f"event lacks {', '.join(missing)}" + (FOREIGN_JSON if len(missing) == len(REQUIRED) else "")
    return names_problem(event)


def _body_as_text(text: str) -> bool:
    """Whether a send's string ``msg`` holds a JSON object (``json.dumps(body)`` logged as a
    string): a body, never a logger's text, which set aside would leave the send without it."""
    if not text.lstrip().startswith("{"):
        return False
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def _other(event: dict) -> str:
    return "recv" if event["event"] == "send" else "send"
