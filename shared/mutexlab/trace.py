"""The trace (docs/architecture.md#trace-format): one JSON object per line, the project's observable record.

``Recorder`` keeps one process's vector clock and turns what the process did into trace
events. Both drivers (simulator and RabbitMQ services) use it, so a trace means the same
whatever produced it. The first line of a trace is a ``run`` event (pid ``run``) carrying the
algorithm and its parameters, so ``mutexlab verify`` knows the capacities to check.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from . import keywords, limits
from .clock import EventClock, LocalEventClocks, VectorClock
from .keywords import CLOCKED_JSON, FOREIGN_JSON, VC_SHAPE, lookalike, not_an_object, not_utf8, run_together


class TraceError(ValueError):
    """A trace that cannot be read (not JSON Lines, or events missing required fields)."""


def event_error(event: dict[str, Any], problem: str) -> TraceError:
    """The error for one event of a trace already read, naming its line: ``line N: problem``."""
    return TraceError(f"line {event.get('_line', '?')}: {problem}")


def whole(value: Any) -> bool:
    """A JSON whole number (not a boolean)."""
    return isinstance(value, int) and not isinstance(value, bool)


class Recorder:
    """One process's view for the trace: its name and vector clock.

    Invariant: every event this process records ticks its own vector entry exactly once.
    """

    __slots__ = ("pid", "vc")

    def __init__(self, pid: str) -> None:
        self.pid = pid
        self.vc: Any = VectorClock(pid)  # an EventClock in a LocalRecorder

    def _send_clock(self) -> Any:
        """The clock a send event carries (and its message with it): ticked, a send is an event."""
        return self.vc.tick()

    def send(
        self, t: float, lamport: int, kind: str, to: str, msg_id: str, body: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        event = {
            "event": "send",
            "pid": self.pid,
            "t": t,
            "lamport": lamport,
            "vc": self._send_clock(),
            "type": kind,
            "to": to,
            "id": msg_id,
        }
        if body is not None:
            event["msg"] = body
        return event

    def recv(
        self, t: float, lamport: int, kind: str, frm: str, msg_id: str, sender_vc: Any
    ) -> dict[str, Any]:
        return {
            "event": "recv",
            "pid": self.pid,
            "t": t,
            "lamport": lamport,
            "vc": self.vc.merge(sender_vc),
            "type": kind,
            "from": frm,
            "id": msg_id,
        }

    def local(self, event: str, t: float, lamport: int, **fields: Any) -> dict[str, Any]:
        return {"event": event, "pid": self.pid, "t": t, "lamport": lamport, "vc": self.vc.tick(), **fields}


class EventSink(Protocol):
    """Where a driver writes trace events: a ``TraceWriter``, or a participant's batch."""

    def write(self, event: dict[str, Any]) -> None: ...


class Tally(Protocol):
    """A sink that only counts some kinds of event (a ``StreamAudit`` and the sends and receives
    its family does not read): a driver may call ``skip(kind)`` instead of building and writing
    such an event — counted and numbered as if it had been written (``count`` of them in a row:
    the driver may gather skips, as long as it hands them over before its next ``write``)."""

    def reads(self, kind: str) -> bool: ...

    def skip(self, kind: str, count: int = 1) -> None: ...


class LocalRecorder(Recorder):
    """A ``Recorder`` whose events carry a ``LocalEventClocks`` token as ``vc`` instead of a full
    vector clock (a send does not tick it): for an audit fed while the run goes
    (``TraceWriter(sink=..., local_clocks=...)``), never for a trace that is written or kept."""

    __slots__ = ()

    def __init__(self, pid: str, clock: EventClock) -> None:
        self.pid = pid
        self.vc = clock

    def _send_clock(self) -> Any:
        return self.vc.token


class TraceWriter:
    """Writes events as JSON Lines to a file, keeps them in memory (``keep``, or ``path=None``
    without a ``sink``), and hands each to ``sink`` (an audit fed as the run goes).

    Memory: with a ``path`` or a ``sink`` and without ``keep``, nothing is held: each event is
    written and handed on as it comes. ``local_clocks`` (the run's process names; only with a
    sink, no path and no keep) gives the processes ``LocalRecorder``s: their events carry
    local-event clocks, which only the sink sees (``LocalEventClocks``). ``tally`` (with local
    clocks only): the sink as a ``Tally``, so the simulator need not build the events it only counts."""

    _line = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps' text, one encoder for all

    def __init__(
        self,
        path: str | Path | None = None,
        keep: bool = False,
        sink: Callable[[dict[str, Any]], None] | None = None,
        local_clocks: list[str] | None = None,
        tally: Tally | None = None,
    ) -> None:
        if local_clocks is not None and (path is not None or keep or sink is None):
            raise ValueError(
                "local-event clocks are for a sink alone: a written or kept trace has full clocks"
            )
        if tally is not None and local_clocks is None:
            raise ValueError("a tally skips events: only for a sink alone, with local-event clocks")
        self.tally = tally
        self.events: list[dict[str, Any]] | None = [] if (keep or (path is None and sink is None)) else None
        self._file: IO[str] | None = open(path, "w", encoding="utf-8") if path is not None else None  # noqa: SIM115 - the writer owns it until close()
        self._path = os.path.abspath(path) if path is not None else ""  # its key in WRITTEN
        if path is not None:  # a file written anew: not whole (yet), whatever it held before
            WRITTEN[self._path] = (time.time(), False)
        self.sink = sink
        self.clocks = LocalEventClocks(local_clocks) if local_clocks is not None else None

    def recorder(self, pid: str) -> Recorder | LocalRecorder:
        """The recorder of process ``pid`` for this trace."""
        if self.clocks is not None:
            return LocalRecorder(pid, self.clocks.clock(pid))
        return Recorder(pid)

    @property
    def kept(self) -> list[dict[str, Any]]:
        """The events written so far; a ValueError for a writer that keeps none (a path, no ``keep``)."""
        if self.events is None:
            raise ValueError("this TraceWriter writes to a file and keeps no events: make it with keep=True")
        return self.events

    def write(self, event: dict[str, Any]) -> None:
        if self.events is not None:
            self.events.append(event)
        if self._file is not None:
            self._file.write(self._line(event) + "\n")
        if self.sink is not None:
            self.sink(event)

    def close(self, ended: bool = False) -> None:
        """Close the file; ``ended``: the run it records ended (not stopped by an exception or an
        interrupt), so the file holds its whole trace, as ``WRITTEN`` notes."""
        if self._file is not None:
            if ended:
                WRITTEN[self._path] = (WRITTEN[self._path][0], True)
            self._file.close()
            self._file = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, kind: object, *exc: object) -> None:
        self.close(ended=kind is None)


# The trace files this process wrote, by absolute path: when it last opened each (``time.time()``:
# a file's own mtime lags the clock by a tick, so a quick run's may read older than its command)
# and whether it was closed with its run ended (``close(ended=True)``), so holds the whole trace —
# what an interrupt that came afterwards may say of it (``commands.common.cut_short``).
WRITTEN: dict[str, tuple[float, bool]] = {}


REQUIRED = ("event", "pid")
# The run header's params every workload counts with (whole numbers ≥ 0); any other whole-number
# param but the seed is a count or an id too, whatever the problem, so never below 0 either.
COUNTED_PARAMS = ("requests", "nodes")
SIGNED_PARAMS = ("seed",)

# Fields the audit and the report rely on, by event kind: name → the type it must have when the
# event has it (``_NEEDED`` lists those it must have). Anything else in an event is kept as is.
_NUMBER = (int, float)
_COMMON: dict[str, type | tuple[Any, ...]] = {
    "t": _NUMBER,
    "lamport": int,
    "units": int,
    "id": str,
}
_KIND_FIELDS: dict[str, dict[str, type | tuple[Any, ...]]] = {
    "enter": {"resource": str},
    "exit": {"resource": str},
    "send": {"type": str, "to": str, "msg": (dict, type(None))},  # a logger's `msg` elsewhere: its own
    "recv": {"type": str, "from": str},
    "state": {"state": str},
    "egg": {"reed": int},
    "contract_done": {"round": int, "contract": int},
    "round": {"round": int},
}
_NEEDED = {
    "enter": ("resource",),
    "exit": ("resource",),
    "send": ("type", "to"),
    "recv": ("type", "from"),
    "state": ("state",),
}
_TYPE_NAMES = {
    str: "a string",
    int: "a whole number",
    _NUMBER: "a number",
    dict: "a JSON object",
    (dict, type(None)): "a JSON object or null",
}


def _type_ok(value: Any, kind: type | tuple[Any, ...]) -> bool:
    if isinstance(value, bool):  # JSON true/false are not numbers here
        return False
    if kind is _NUMBER and isinstance(value, float):
        return value == value and abs(value) != float("inf")
    return isinstance(value, kind)


# The kinds the audits read (docs/trace-format.md), all lower case: one of them written in another
# case (``Enter``, ``EXIT``) would be read as an event of no meaning, an entry never audited.
READ_KINDS = frozenset(
    {
        "run",
        "send",
        "recv",
        "enter",
        "exit",
        "state",
        "request",
        "egg",
        "death",
        "retire",
        "round",
        "contract_done",
    }
)


def _kind_problem(kind: str) -> str | None:
    """Why ``kind``, not one the audits read, would be read wrongly: one of them in another case
    or with blanks around it, or a keyword's look-alike (``keywords.lookalike``); None for another kind."""
    if kind in READ_KINDS:
        return None
    if kind.lower() in READ_KINDS:
        return (
            f"the event kind {kind!r} is {kind.lower()!r} in another case: the kinds the audit reads are "
            "lower case, and written otherwise would go unread (docs/trace-format.md)"
        )
    plain = kind.strip().lower()
    meant = plain if plain in READ_KINDS else lookalike(kind)  # `entering`, `enterCS`, `[enter]`
    if meant is None:
        return None
    return (
        f"the event kind {kind!r} reads as {meant!r} but is not written so: the audit reads exactly "
        f"{meant!r}, and an event written otherwise would go unread (docs/trace-format.md)"
    )


def names_problem(event: dict[str, Any]) -> str | None:
    """Why an event's ``event`` or ``pid`` is no string (a program's rank written as a number,
    ``"pid": 1``), named with its value; None when both are."""
    for field in ("event", "pid"):
        value = event[field]
        if not isinstance(value, str):
            shown = json.dumps(value)[:40]
            number = isinstance(value, int | float) and not isinstance(value, bool)
            hint = (field == "pid" and keywords.os_pid(event)) or (f' (write "{shown}")' if number else "")
            return f"{field!r} must be a string, got {shown}{hint}"
    return None


def check_event(event: Any, first: bool = False) -> str | None:
    """What is wrong with one parsed trace line, or None. ``first``: it must be the run header."""
    if not isinstance(event, dict):
        return not_an_object(event)
    missing = [f for f in REQUIRED if f not in event]
    if missing:
        lift = keywords.nested_fields(event, missing)  # logback's "mdc", Rust tracing's "fields"
        if lift:
            return f"event lacks {', '.join(missing)} at the top level{lift}"
        return f"event lacks {', '.join(missing)}" + (FOREIGN_JSON if len(missing) == len(REQUIRED) else "")
    names = names_problem(event)
    if names is not None:
        return names
    kind, pid = event["event"], event["pid"]
    wrong = _kind_problem(kind)
    if wrong is not None:
        return wrong
    if first and kind != "run":
        return (
            f"the trace has no 'run' header (its first event is {kind!r}): its algorithm and "
            "capacities are unknown" + (CLOCKED_JSON if "vc" in event else "")
        )
    if kind == "run":
        if not isinstance(event.get("capacities"), dict):
            return "the run header lacks 'capacities' (an object: resource → capacity)"
        bad = [r for r, c in event["capacities"].items() if not _type_ok(c, int) or c < 0]
        if bad:
            return (
                f"the run header gives {bad[0]!r} the capacity {json.dumps(event['capacities'][bad[0]])[:40]}, "
                "not a whole number ≥ 0"
            )
        for name in ("processes", "params"):
            if not isinstance(event.get(name, {}), dict):
                return f"the run header's {name!r} must be a JSON object"
        if not all(isinstance(n, str) for n in event.get("processes", {}).values()):
            return "the run header's 'processes' must map pids to names (strings)"
        if not isinstance(event.get("algorithm", ""), (str, type(None))):
            return "the run header's 'algorithm' must be a string"
        params = event.get("params", {})
        bad = [k for k in COUNTED_PARAMS if k in params and (not _type_ok(params[k], int) or params[k] < 0)]
        bad += [
            k
            for k, v in params.items()
            if k not in SIGNED_PARAMS and isinstance(v, int) and not isinstance(v, bool) and v < 0
        ]
        if bad:
            return f"the run header's params.{bad[0]} is {json.dumps(params[bad[0]])[:40]}, not a whole number ≥ 0"
        return None
    vc = event.get("vc")
    if not isinstance(vc, dict):
        return (
            "event lacks its vector clock 'vc'"
            if vc is None
            else f"'vc' is {json.dumps(vc)[:40]}: {VC_SHAPE}"
        )
    if any(not _type_ok(v, int) or v < 0 for v in vc.values()):
        return "vector clock 'vc' must map process names to whole numbers ≥ 0"
    if not _type_ok(vc.get(pid), int) or vc[pid] < 1:
        # quoted when it holds a control character: the error stays on one line
        shown = pid if isinstance(pid, str) and pid.isprintable() else repr(pid)
        return f"vector clock 'vc' lacks {shown}'s own entry"
    for name in _NEEDED.get(kind, ()):
        if name not in event:
            return f"{kind} event lacks {name!r}"
    for name, want in (_COMMON | _KIND_FIELDS.get(kind, {})).items():
        if name in event and not _type_ok(event[name], want):
            shown = json.dumps(event[name])[:40]
            hint = f' (write "{shown}")' if want is str and _type_ok(event[name], _NUMBER) else ""
            hint += ": the message's body; a logger's text needs another field" if name == "msg" else ""
            return f"{kind} event's {name!r} must be {_TYPE_NAMES[want]}, got {shown}{hint}"
    if event.get("units", 1) < 1:
        return f"{kind} event's 'units' must be at least 1"
    return None


def parse_events(
    lines: Iterable[str | bytes] | IO[bytes], source: str = "trace", cut: list[str] | None = None
) -> Iterator[dict[str, Any]]:
    """Parse JSON Lines (text or UTF-8 bytes); blank lines are skipped; the first event must be the
    ``run`` header; anything wrong raises TraceError naming ``source`` and the line. From a binary
    file, a line is read with at most ``limits.MAX_LINE`` bytes held (a longer one is refused).
    ``cut`` (a list): a last line cut mid-write (``cut_off``) ends the events instead, the sentence
    naming it appended to ``cut``; a bad line with a newline after it is refused all the same."""
    first, header = True, 0
    numbered = enumerate(bounded_lines(lines, source) if hasattr(lines, "readline") else lines, 1)
    for number, line in numbered:
        if cut is not None and not first and cut_off(line):
            cut.append(cut_sentence(number))
            return
        if isinstance(line, bytes):
            line = decode_line(line, source, number)
        if not line.strip():
            continue
        try:
            line = keywords.uncoloured(line)  # `jq -C`'s colour codes: the JSON between them is read
            limits.members(line)
            event = json.loads(line, object_pairs_hook=limits.unique_keys)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{source}:{number}: not JSON ({exc.msg}){run_together(line, first)}") from None
        except limits.InputError as exc:  # a key twice: JSON, but not one this reader takes
            raise TraceError(f"{source}:{number}: {twice(exc)}") from None
        except (ValueError, RecursionError) as exc:  # e.g. an integer too long, nesting too deep
            raise TraceError(f"{source}:{number}: JSON past a limit ({limits.refused(exc)})") from None
        if isinstance(event, dict) and isinstance(event.get("vc"), str):  # a Java logger's MDC
            try:
                event["vc"] = limits.string_clock(event["vc"])
            except limits.InputError as exc:
                raise TraceError(f"{source}:{number}: {exc}") from None
        try:
            limits.clock_entries(event.get("vc") if isinstance(event, dict) else None)
        except limits.InputError as exc:
            raise TraceError(f"{source}:{number}: {exc}") from None
        problem = check_event(event, first)
        if problem:
            raise TraceError(f"{source}:{number}: {problem}")
        if not first and event["event"] == "run":  # two runs in one file (`cat a.jsonl b.jsonl`)
            raise TraceError(
                f"{source}:{number}: a run header after the first event: a trace holds one run "
                f"(its header at line {header}); verify each run's trace on its own"
            )
        if first:
            header = number
        first = False
        event["_line"] = number
        yield event


def twice(exc: limits.InputError) -> str:
    """``exc`` (a key held twice in a log's line, ``limits.unique_keys``) in a log reader's words:
    the value meant cannot be told; a "pid" twice is most likely pino's own beside the event's."""
    said = str(exc)
    if not said.startswith('the key "pid" appears twice'):
        return said
    return (
        f"{said} (which is the process's name cannot be told): pino writes its process's number as "
        '"pid" unless its base leaves it out, pino({ base: { hostname } }) with child({ pid: NAME })'
    )


def cut_sentence(number: int) -> str:
    """What a last line cut mid-write (``cut_off``) is called in the verdict."""
    return f"line {number}, the last, is cut off mid-write (no newline ends it, no whole event)"


def cut_off(line: str | bytes) -> bool:
    """Whether ``line`` is the end of a file whose writer stopped mid-line: no newline ends it
    (only a file's last line can lack one), and it is the start of a JSON object that stops
    before its end (or of a UTF-8 character cut in two). A whole last line without its newline,
    or one that is no object's start, is no cut: it is read, or refused, as any other."""
    if not isinstance(line, bytes) or line.endswith(b"\n"):
        return False
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.reason == "unexpected end of data"
    if not text.lstrip().startswith("{") or limits.more_members(text, limits.MAX_LINE_MEMBERS):
        return False  # no object, or one its reader refuses before parsing it
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return exc.msg != "Extra data"  # an object cut before its end, not one with more after it
    except (ValueError, RecursionError):  # whole, but refused by the reader: not a cut
        return False
    return False


def bounded_lines(handle: Any, source: str, kind: str = "a trace line") -> Iterator[bytes]:
    """``handle``'s lines (a binary file), none read with more than ``limits.MAX_LINE`` bytes held:
    a longer one is a TraceError naming ``source``, the line and ``kind`` (whose limit it is)."""
    read = 0
    try:
        for line in limits.lines(handle):
            read += 1
            yield line
    except limits.InputError:
        raise TraceError(
            f"{source}:{read + 1}: a line longer than {limits.MAX_LINE:,} bytes (the limit of {kind})"
            + (": not a trace" if kind == "a trace line" else "")
        ) from None


def decode_line(raw: bytes, source: str, number: int) -> str:
    """Line ``number`` of ``source`` as text; TraceError naming the byte when it is not UTF-8."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TraceError(not_utf8(source, number, raw, exc.start)) from None


def read_trace(path: str | Path) -> list[dict[str, Any]]:
    """Every event of the trace file at ``path``; TraceError (one line, naming the file and the
    line) when it cannot be read, is empty or holds anything but trace events."""
    try:
        with open(path, "rb") as handle:
            events = list(parse_events(handle, str(path)))
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not events:
        raise TraceError(f"{path}: the trace is empty (no events)")
    return events
