"""ShiViz / GoVector logs, read and written (docs/verify-any-log.md).

A log is a sequence of records matched by a regular expression with the named groups ``host``,
``clock`` (a JSON vector clock over host names) and ``event`` (the description), in JavaScript's
``(?<name>…)`` syntax as ShiViz and GoVector write it. The default is GoVector's::

    (?<host>\\S*) (?<clock>{.*})\\n(?<event>.*)

ShiViz's file layout is honoured: when the first line is such a regex it is the log's, and the
second line is the multiple-executions delimiter (blank: one execution). A record spans as many
lines as its regex has ``\\n``; records are read one at a time, so a log of any length streams.

Descriptions ``request R``, ``enter R`` and ``exit R`` (keywords in any case; ``R`` a resource,
then optionally its units and a JSON object of further fields) are the audit's events; any other
description is an ``other`` event, which only carries causality (its clock) and its ``text``. A line
``#mutexlab-run=<JSON>`` before the first record is a mutexlab run header (``export`` writes it:
algorithm, processes, capacities, params); then a description ``KIND {JSON}`` is the mutexlab
event KIND with those fields, so an exported trace reads back event for event.

Unlike ShiViz, which skips text its regex does not match, a record that does not match is an
error naming its line: an ``enter`` the audit did not read could hide a violation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import IO, Any

from ..keywords import lookalike, one_document
from ..limits import (
    DIAGNOSED_LINE,
    MAX_CLOCK_COUNT,
    MAX_CLOCK_ENTRIES,
    MAX_LINE,
    MAX_RECORD_LINES,
    InputError,
    members,
    more_members,
    refused,
    unique_keys,
)
from ..trace import TraceError, bounded_lines, check_event, decode_line
from .clocks import consistent
from .clocktext import DEFAULT_REGEX, LINEAR, default_regex, plain_line, read_clock
from .logregex import LogRegex, compile_log_regex, quoted

# A clock written as RFC 5424 structured data, `[vc@32473 a="3" b="1"]` or its params alone.
_SD = re.compile(r'(\[[^\s\]="]+)?( ?[^\s\]="]+="[^"]*")+\]?')
SD_CLOCK = (
    "a clock is a JSON object of host names to counts: write it so in the message "
    '({"a":3,"b":1} enter cs) and match it with the clock group of --regex'
)
GROUPS = ("host", "clock", "event")
HEADER_PREFIX = "#mutexlab-run="
AUDIT_KINDS = ("request", "enter", "exit")
_AUDIT = re.compile(r"\s*(request|enter|exit)\s+([^\s{]\S*)(?:\s+(\d+))?(?:\s+(\{.*\}))?\s*", re.IGNORECASE)
_EXPORTED = re.compile(r"\s*(\w+) (\{.*\})\s*")
_OWN = ("event", "pid", "vc", "_line")
OTHER_TEXT = 200  # characters of an other event's description kept (the report shows them)


def python_regex(js: str, what: str = "the log's regex") -> LogRegex:
    """``js`` (JavaScript's named groups ``(?<name>…)``, back-references ``\\k<name>``) compiled in
    Python's syntax (``(?P<name>…)``, ``(?P=name)``), multi-line as ShiViz uses it, run with a time
    limit unless it is GoVector's (``logregex.py``); TraceError when it does not compile or lacks a
    group of ``GROUPS``."""
    py = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", js)
    py = re.sub(r"\\k<(\w+)>", r"(?P=\1)", py)
    try:
        label = "--regex" if what.endswith("--regex") else "the log's regex"
        pattern = compile_log_regex(py, re.MULTILINE, trusted=js in LINEAR, shown=js, label=label)
    except ValueError as exc:
        raise TraceError(f"{what} {quoted(js)} is not a regular expression Python reads: {exc}") from None
    missing = [g for g in GROUPS if g not in pattern.groupindex]
    if missing:
        raise TraceError(
            f"{what} {quoted(js)} lacks the named group(s) {', '.join(missing)} (host, clock, event)"
        )
    return pattern


def is_regex_line(line: str) -> bool:
    """Whether a log's first line is its regex (it names a group of the three, either syntax: one
    lacking another is refused as a regex, not misread as a record)."""
    return any(f"(?<{g}>" in line or f"(?P<{g}>" in line for g in GROUPS)


def record_lines(js: str) -> int:
    """How many lines a record of ``js`` spans: one, plus one per ``\\n`` it matches."""
    return 1 + len(re.findall(r"(?<!\\)(?:\\\\)*\\n", js)) + js.count("\n")


def _text_lines(handle: IO[bytes], source: str, first: int = 1) -> Iterator[tuple[int, str]]:
    for number, raw in enumerate(bounded_lines(handle, source, "a line"), first):
        text = decode_line(raw, source, number).rstrip("\r\n")
        yield number, plain_line(text, source, number) if "\x1b" in text else text  # colour codes


def _fields(text: str) -> dict:
    """A description's JSON fields; ValueError (never RecursionError) when they are none."""
    try:
        members(text)  # before parsing: what it would hold is what is refused
        fields = json.loads(text, object_pairs_hook=unique_keys)
    except RecursionError as exc:  # JSON, nested too deep
        raise ValueError(f"its fields {text[:40]!r} are JSON past a limit ({refused(exc)})") from None
    except InputError as exc:  # JSON, but not what this reader takes (a key twice, too many members)
        raise ValueError(f"its fields {text[:40]!r}: {exc}") from None
    except ValueError as exc:
        raise ValueError(f"its fields {text[:40]!r} are not JSON ({exc})") from None
    if not isinstance(fields, dict):
        raise ValueError("its fields must be a JSON object")
    return fields


def describe_event(text: str, exported: bool) -> dict:
    """The event a description stands for, without pid and clock; ValueError when it starts with
    an audit keyword but is not one (an ``enter`` misread would go unchecked)."""
    found = _EXPORTED.fullmatch(text) if exported else None
    if found is not None:
        fields = _fields(found.group(2))
        return {**fields, "event": found.group(1)}
    found = _AUDIT.fullmatch(text)
    if found is not None:
        kind, resource, units, extra = found.groups()
        words: dict = {"event": kind.lower(), "resource": resource}
        if units is not None:
            try:
                words["units"] = int(units)
            except ValueError:  # more digits than Python converts (4,300)
                raise ValueError(f"{text.strip()[:60]!r}: its units have {len(units)} digits") from None
        fields = _fields(extra) if extra is not None else {}
        for key, said in words.items():  # `exit cs {"event": "enter"}` is no enter, nor an exit
            if key in fields and fields[key] != said:
                raise ValueError(
                    f"{text.strip()[:60]!r}: its fields say {key} {fields[key]!r}, its words {said!r}"
                )
        return {**fields, **words}
    if lookalike(text):  # `enter critical section`, `entering cs`, `ENTERcs`, `[enter cs]`
        raise ValueError(
            f"{text.strip()[:60]!r} starts like an audit event but is not "
            "'request|enter|exit RESOURCE [UNITS] [{JSON}]'"
        )
    return {"event": "other", "text": text.strip()[:OTHER_TEXT]}


def read_shiviz(
    handle: IO[bytes],
    source: str,
    capacities: dict[str, int] | None = None,
    regex: str | None = None,
    prune: bool = False,
) -> Iterator[dict]:
    """The events of a ShiViz log, the run header first (the log's own, or one naming no
    algorithm with ``capacities``: default 1 for every resource, ``*``); each with ``_line``, the
    first line of its record. TraceError naming ``source`` and the line for anything unreadable,
    clocks that contradict each other included (``clocks.consistent``: by the ids of its sends
    and receives when the log has a mutexlab header, else by the clocks alone; ``prune``: as there)."""
    records = _records(handle, source, capacities, regex)
    run = next(records)
    yield run
    yield from consistent(records, source, ids=run["_line"] > 0, prune=prune)  # line 0: no header of its own


def _records(
    handle: IO[bytes],
    source: str,
    capacities: dict[str, int] | None,
    regex: str | None,
    layout: list | None = None,
) -> Iterator[dict]:
    """The run header, then the log's events in file order. ``layout``: a list that gets the
    ``Layout`` the log's first lines set (what ``records_at`` reads a part of the log with)."""
    lines = _text_lines(handle, source)
    pending: list[tuple[int, str]] = []  # lines read but not consumed
    first = next(lines, None)
    js = regex
    delimiter = None
    given = regex is not None or (first is not None and is_regex_line(first[1]))
    if first is not None and is_regex_line(first[1]):
        js = js or first[1]
        second = next(lines, None)
        if second is not None and second[1].strip():
            delimiter = _delimiter(second[1], f"{source}:{second[0]}")
    elif first is not None:
        pending.append(first)
    guessed, guess_said = default_regex(first[1] if first is not None else None)
    js = js or guessed
    named = (
        "--regex"
        if regex is not None
        else f"{source}:{first[0]}: the log's regex"
        if given and first
        else None
    )
    span = record_lines(js)
    if span > MAX_RECORD_LINES:  # each record would be held whole: refused before any is read
        raise TraceError(
            f"{named or source}: a record of {span:,} lines "
            f"(its \\n plus one), more than {MAX_RECORD_LINES:,} (limits.MAX_RECORD_LINES)"
        )
    pattern = python_regex(js, named or "the log's regex")
    what = (
        f"--regex {js}"
        if regex is not None
        else f"the log's regex {js}"
        if given
        else f"{guess_said} (nor a JSON event; records of another layout need --regex)"
        + (one_document(first[1]) if first is not None else "")
    )
    shape = Layout(source, pattern, span, what, delimiter)
    header: dict | None = None
    started = False
    stream = _chain(pending, lines)
    for number, text in stream:
        if not started and text.startswith(HEADER_PREFIX):
            header = _header(text[len(HEADER_PREFIX) :], source, number)
            continue
        if not text.strip() or shape.delimits(text, number, started):
            continue
        started = True
        shape.exported = header is not None
        if layout is not None:
            layout.append(shape)
        yield run_header(header, capacities)
        pending.insert(0, (number, text))
        yield from shape.events(stream, pending)
        return
    raise TraceError(f"{source}: the log is empty (no records)")


class Layout:
    """How a log's records are read (its regex, their lines, the delimiter, whether descriptions
    are exported mutexlab events): ``events`` reads them from any line on."""

    def __init__(
        self, source: str, pattern: LogRegex, span: int, what: str, delimiter: LogRegex | None
    ) -> None:
        self.source, self.pattern, self.span, self.what = source, pattern, span, what
        self.delimiter = delimiter
        self.exported = False

    def delimits(self, text: str, number: int, started: bool) -> bool:
        """Whether line ``number`` is the delimiter (skipped); TraceError for a second execution."""
        if self.delimiter is None or not self.delimiter.search(text, f"{self.source}:{number}"):
            return False
        if started:
            raise TraceError(
                f"{self.source}:{number}: a second execution starts here (the log's delimiter matches): "
                "verify one execution at a time"
            )
        return True

    def events(self, stream: Iterator[tuple[int, str]], pending: list[tuple[int, str]]) -> Iterator[dict]:
        """The events of the records in ``stream`` (after the first record's line: blank lines
        skipped), each host's own clock entry rising from each record to the next."""
        source = self.source
        latest: dict[str, tuple[int, int]] = {}  # host → its own count at its latest record, and the line
        for number, text in stream:
            if not text.strip() or self.delimits(text, number, True):
                continue
            record, size = [(number, text)], len(text)
            while len(record) < self.span:
                more = next(stream, None)
                if more is None:
                    break
                record.append(more)
                size += len(more[1]) + 1
                if size > MAX_LINE:  # held whole until matched: no more than one line may hold
                    raise TraceError(
                        f"{source}:{number}: a record longer than {MAX_LINE:,} characters (the limit of a "
                        f"line), from line {number} to {more[0]} of its {self.span:,}"
                    )
            event = _record(record, self.pattern, self.what, source, self.exported, pending)
            host, own = event["pid"], event["vc"][event["pid"]]
            if own <= latest.get(host, (0, 0))[0]:
                raise TraceError(
                    f"{source}:{number}: {host}'s own clock entry goes from {latest[host][0]} (line "
                    f"{latest[host][1]}) to {own}: a host's records must come in its own order"
                    + (_AFRESH.format(host=host) if own == 1 else "")
                )
            latest[host] = (own, number)
            yield event

    def records_at(self, handle: IO[bytes], number: int) -> Iterator[dict]:
        """The events of the records from line ``number`` on, ``handle`` at that line's start."""
        lines = _text_lines(handle, self.source, number)
        pending: list[tuple[int, str]] = []
        return self.events(_chain(pending, lines), pending)


def _delimiter(line: str, where: str) -> LogRegex:
    py = re.sub(r"\(\?<(?=[A-Za-z_])", "(?P<", line)
    try:
        return compile_log_regex(py, 0, trusted=False, shown=line, label="the log's delimiter")
    except ValueError as exc:
        raise TraceError(
            f"{where}: the log's delimiter {quoted(line)} is not a regular expression Python reads: {exc}"
        ) from None


def _chain(pending: list[tuple[int, str]], lines: Iterator[tuple[int, str]]) -> Iterator[tuple[int, str]]:
    """The lines, taking back first what a record did not consume (``pending`` may grow)."""
    while True:
        if pending:
            yield pending.pop(0)
            continue
        line = next(lines, None)
        if line is None:
            return
        yield line


def _found(pattern: LogRegex, text: str, lead: int, width: int, where: str) -> Any:
    """The leftmost match of ``pattern`` in ``text`` that starts on its first line, tried first at
    the ``lead + 1`` places a record may start (each one start: linear in the text); only a first
    line of at most ``DIAGNOSED_LINE`` characters (``width``) is tried further, to say what stands
    before a record: each place costs a match. (Never ``search``: it tries the places of the lines
    after the first too, a time quadratic in their length — a huge second line took hours.)"""
    places = range(lead + 1) if width > DIAGNOSED_LINE else range(width + 1)
    return next((found for at in places if (found := pattern.match(text, at, where)) is not None), None)


def _record(
    record: list[tuple[int, str]],
    pattern: LogRegex,
    what: str,
    source: str,
    exported: bool,
    pending: list[tuple[int, str]],
) -> dict:
    """The event of one record (its lines); ``what``: the regex, as an error names it. Blanks at
    the end of a line say nothing (an editor's, a logger's padding): a clock line ``{…}  `` is read
    as ``{…}``, where GoVector's regex would find no record."""
    record = [(n, text.rstrip(" \t")) for n, text in record]
    number = record[0][0]
    joined = "\n".join(text for _, text in record)
    first = record[0][1]
    lead = len(first) - len(first.lstrip())  # a record may start only after blanks of its first line
    found = _found(pattern, joined, lead, len(first), f"{source}:{number}")
    if found is None or joined.count("\n", 0, found.start()) > 0:
        missing = record_lines(pattern.shown) - len(record)
        # Cut short only if its lines begin a record: with its missing lines empty, it would match.
        if missing > 0 and _found(pattern, joined + "\n" * missing, lead, len(first), f"{source}:{number}"):
            raise TraceError(f"{source}:{number}: the log ends inside a record (not a record of {what})")
        went_on = (  # an indented line that is no record: the event above written over several lines
            f"; indented, it reads as the event above going on: a record is {record_lines(pattern.shown)} "
            "lines (the regex's \\n plus one), so write each event on one line"
            if first[:1].isspace() and number > 1
            else ""
        )
        raise TraceError(f"{source}:{number}: not a record of {what}{went_on}")
    skipped = joined[: found.start()]
    if skipped.strip():  # a prefix (a time stamp) would slide into the next line's description
        raise TraceError(
            f"{source}:{number}: {skipped.strip()[:40]!r} before the record is not matched by the regex "
            f"{pattern.shown} (a prefix on every line, a host name with a space? give --regex that matches it)"
        )
    used = joined.count("\n", 0, found.end()) + 1
    pending[:0] = record[used:]  # lines the record did not reach are read again
    rest = joined[found.end() :].split("\n", 1)[0]
    if rest.strip():  # `enter pins 2` read as `enter pins` would take one unit for two
        raise TraceError(
            f"{source}:{number + used - 1}: {rest.strip()[:40]!r} after the record is not matched by "
            f"the regex {pattern.shown}: the rest of a record's line is part of it (give --regex that matches it)"
        )

    def line_of(group: str) -> str:  # where a group of the record is, for an error about it
        return f"{source}:{number + joined.count(chr(10), 0, max(found.start(group), 0))}"

    host, clock_text, text = found.group("host"), found.group("clock"), found.group("event")
    if more_members(clock_text, MAX_CLOCK_ENTRIES):
        raise TraceError(
            f"{line_of('clock')}: the clock has more than {MAX_CLOCK_ENTRIES:,} entries "
            "(limits.MAX_CLOCK_ENTRIES): refused before it is read"
        )
    try:
        clock = read_clock(clock_text)
    except RecursionError as exc:  # JSON, nested too deep
        raise TraceError(f"{line_of('clock')}: the clock is JSON past a limit ({refused(exc)})") from None
    except ValueError as exc:
        sd = " — RFC 5424 structured data? " + SD_CLOCK if _SD.fullmatch(clock_text.strip()) else ""
        raise TraceError(
            f"{line_of('clock')}: the clock {clock_text[:40]!r} is not JSON ({exc}){sd}"
        ) from None
    try:
        event = describe_event(text or "", exported)
    except ValueError as exc:
        raise TraceError(f"{line_of('event')}: {exc}") from None
    event.update(pid=host, vc=clock, _line=number)
    problem = check_event(event)
    if problem and "'vc'" in problem:  # a log's clock is its regex's group, not mutexlab's field
        shown = f"the clock {clock_text[:40]!r}"
        if problem.endswith("own entry"):
            problem = f"{shown} has no entry of at least 1 for its own host {host!r}"
        else:
            problem = problem.replace("event lacks its vector clock 'vc'", f"{shown} is not a JSON object")
            problem = problem.replace("'vc' is ", "the clock is ")
            problem = problem.replace("vector clock 'vc'", shown).replace("process names", "host names")
        raise TraceError(f"{line_of('clock')}: {problem}")
    if problem:  # a field of the description: its line
        raise TraceError(f"{line_of('event')}: {problem}")
    huge = next((n for n, count in clock.items() if count > MAX_CLOCK_COUNT and n != host), None)
    if huge is not None:  # no record it could name exists (its own entry: the clocks' check names it)
        raise TraceError(
            f"{line_of('clock')}: the vector clocks contradict each other: {host} knows event "
            f"{clock[huge]} of {huge}, more events than any log holds (at most {MAX_CLOCK_COUNT:,})"
        )
    return event


# When a host's clock starts again at 1: what else than a file out of order it may be.
_AFRESH = (
    " (or {host} starts afresh here: a second execution appended, or a restart with a new clock; "
    "verify one execution at a time, and give a restarted process a name of its own)"
)


def _header(text: str, source: str, number: int) -> dict:
    try:
        header = json.loads(text, object_pairs_hook=unique_keys)
    except (ValueError, RecursionError) as exc:
        raise TraceError(f"{source}:{number}: the mutexlab header is not JSON ({exc})") from None
    problem = check_event(header, first=True)
    if problem:
        raise TraceError(f"{source}:{number}: {problem}")
    header["_line"] = number
    return header


def run_header(header: dict | None, capacities: dict[str, int] | None) -> dict:
    """The run header: the log's own (``--capacity`` over its capacities), or one for a log
    without: no algorithm, processes learned from the log, 1 per resource unless told."""
    if header is not None:
        run = dict(header)
        run["capacities"] = {**header["capacities"], **(capacities or {})}
        return run
    return {
        "event": "run",
        "pid": "run",
        "algorithm": None,
        "processes": {},
        "capacities": {"*": 1, **(capacities or {})},
        "params": {},
        "_line": 0,
    }


# -- writing ---------------------------------------------------------------------------------


def _json(value: object) -> str:
    """Compact JSON on one line, ASCII only (no character ShiViz's ``.`` would stop at)."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=True)


def description(event: dict) -> str:
    """What ``describe_event`` reads back as ``event`` (without pid and clock)."""
    kind = event["event"]
    if kind in AUDIT_KINDS and isinstance(event.get("resource"), str):
        resource = event["resource"]
        if not resource or resource.startswith("{") or any(c.isspace() for c in resource):
            raise TraceError(
                f"line {event.get('_line', '?')}: the resource {resource!r} cannot be written in a log"
            )
        text = f"{kind} {resource}"
        if "units" in event:
            text += f" {event['units']}"
        extra = {k: v for k, v in event.items() if k not in _OWN and k not in ("resource", "units")}
        return text + (f" {_json(extra)}" if extra else "")
    if not re.fullmatch(r"\w+", kind):
        raise TraceError(
            f"line {event.get('_line', '?')}: the event kind {kind!r} cannot be written in a log"
        )
    return f"{kind} {_json({k: v for k, v in event.items() if k not in _OWN})}"


def write_shiviz(events: Iterable[dict], out: IO[str]) -> int:
    """Write a mutexlab trace (its run header first) as a ShiViz log with GoVector's regex; the
    number of records written."""
    out.write(DEFAULT_REGEX + "\n\n")
    written = 0
    for event in events:
        if event["event"] == "run":
            header = {k: v for k, v in event.items() if k != "_line"}
            out.write(HEADER_PREFIX + _json(header).replace(" ", "\\u0020") + "\n")
            continue
        host = event["pid"]
        if not host or any(c.isspace() for c in host):
            raise TraceError(
                f"line {event.get('_line', '?')}: the process name {host!r} cannot be a ShiViz host"
            )
        out.write(f"{host} {_json(event['vc'])}\n{description(event)}\n")
        written += 1
    return written
