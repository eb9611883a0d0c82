"""What a refused log is, when its first lines show a layout ``verify`` does not read: named, with
the command that converts it (docs/verify-any-log.md#other-layouts). Asked only once a reader has
refused the log near its start (``explain``), so no log a reader takes is judged differently;
reads at most ``HEAD_LINES`` lines of at most ``limits.MAX_LINE`` bytes, ``HEAD_BYTES`` in all.

* one JSON object over many lines, then another (log4j2's ``JsonLayout`` without
  ``compact="true" eventEol="true"``, ``json.dumps(indent=2)``): ``jq -c .`` writes one a line;
* a CSV file (a header of column names, then rows): a Python line that writes it in GoVector's
  layout, its clock column turned into a JSON object when it is written ``a:1;b:2``;
* logfmt (``key=value`` pairs): a Python line that writes each as a JSON object;
* fields in another case (``journalctl -o json``: EVENT, PID; Serilog's CLEF: Event, Pid): ``jq``
  lowers them;
* loguru's ``serialize=True`` JSON (the record under ``record``, the program's fields under
  ``record.extra``): ``jq`` writes it in GoVector's layout, or lifts the fields;
* a prefix naming the container on every line (``docker compose logs``: ``lock-1  | …``;
  ``kubectl logs --prefix``: ``[pod/…/…] …``): ``--no-log-prefix``, or ``sed`` removes it;
* text, then JSON events (a warning ``2>&1`` wrote first): ``grep '^{'`` keeps the events;
* java.util.logging's XML and SimpleFormatter layouts, syslog lines (RFC 3164, RFC 5424), a clock
  written as a list of counts by position: ``wrapped.py``;
* a line that repeats another exactly where the reader refused a second sending or a clock that
  does not rise: the same event written twice (two appenders on one file).
"""

from __future__ import annotations

import csv
import json
import re
import shlex
from pathlib import Path

from ..limits import MAX_LINE, MAX_LINE_MEMBERS, lines, more_members
from .clocktext import plain
from .wrapped import jul_simple, jul_xml, list_clock, syslog

HEAD_LINES = 2_000
HEAD_BYTES = 1 << 20
NEAR_START = 3  # a refusal at this line or before may be the layout's (a header line, a blank)

_AT = re.compile(r"(?:.*?):(\d+): ")
_NAME = r"[A-Za-z_@][\w.@ -]*"
# A key starts a pair only at its word's start: tried at each place of a long word, the key's run
# would be read again to its end from each (a line of one 1 MB word: hours, quadratic).
_LOGFMT_PAIR = re.compile(r'(?<![\w.@/-])[\w.@/-]+=(?:"(?:[^"\\]|\\.)*"|[^\s"]*)')
_HOSTS = ("host", "hostname", "pid", "process", "proc", "node", "name", "rank", "actor")
_CLOCKS = ("clock", "vc", "vclock", "vector_clock", "vectorclock", "vector clock")
_EVENTS = ("event", "message", "msg", "description", "action", "text")


def explain(path: str | Path, error: str) -> str | None:
    """``error`` (a reader's refusal of the log at ``path``) told again when the log's first lines
    show why: a layout verify does not read, or an event written twice. None when they show
    nothing more."""
    shown = str(path)
    if "(limits." in error:  # refused for its size (a line, a clock, members): no layout's doing
        return None
    at = _AT.match(error)
    number = int(at.group(1)) if at else 0
    twice = _twice(path, error, number)
    if twice:
        return error + twice
    head = _head(path) if 0 < number <= NEAR_START else []
    if not head:
        return None
    named = "FILE" if shown.startswith("/proc/self/fd/") else shlex.quote(shown)
    readers = (_pretty_json, _csv, _logfmt, _cased, _loguru, jul_xml, jul_simple, syslog, list_clock)
    for reader in (*readers, _prefixed, _text_first):
        said = reader(head, named)
        if said and reader is list_clock and "a vector clock is a JSON object" in error:
            return f"{error} — {said.split(': ', 1)[1]}"  # --regex read the list: its error stays
        if said:
            return f"{shown}:{said}"
    return None


def _head(path: str | Path) -> list[str]:
    """The first lines of the log (no line ends), at most HEAD_LINES and about HEAD_BYTES."""
    kept: list[str] = []
    size = 0
    try:
        with open(path, "rb") as handle:
            for raw in lines(handle, MAX_LINE):
                kept.append(raw.decode("utf-8", "replace").rstrip("\r\n"))
                size += len(raw)
                if len(kept) >= HEAD_LINES or size >= HEAD_BYTES:
                    break
    except (OSError, ValueError):
        return []
    return kept


def _pretty_json(head: list[str], named: str) -> str | None:
    """One JSON object written over lines, then another: a pretty-printed layout."""
    first = next((i for i, text in enumerate(head) if text.strip()), None)
    if first is not None and head[first].startswith("{") and _is_object(head[first]):
        first = next((i for i in range(first + 1, len(head)) if head[i].strip()), None)  # a run header
    if first is None or head[first].strip() != "{":
        return None
    for i in range(first + 1, len(head)):
        if head[i].rstrip() not in ("}", "},"):
            continue
        after = next((j for j in range(i + 1, len(head)) if head[j].strip()), None)
        if after is None or head[after].strip() != "{":
            return None  # one document alone (a scenario): its reader's error says what it is
        comma = head[i].rstrip() == "},"
        convert = f"sed 's/^}},$/}}/' {named} | jq -c ." if comma else f"jq -c . {named}"
        return (
            f"{first + 1}: one JSON object over lines {first + 1}–{i + 1}, another from line {after + 1}"
            f"{' (after a comma)' if comma else ''}: a pretty-printed JSON layout (log4j2's JsonLayout "
            'without compact="true" eventEol="true", json.dumps(indent=…)), not JSON Lines; verify reads '
            f"one event a line: {convert} > LOG.jsonl writes each on one line (or configure the "
            "logger so)"
        )
    return None


def _is_object(text: str) -> bool:
    return _object(text) is not None


def _object(text: str) -> dict | None:
    """The JSON object ``text`` holds; None when it is no JSON object, or holds more members than a
    line may (not parsed: what it would hold is refused)."""
    if more_members(text, MAX_LINE_MEMBERS):
        return None
    try:
        entry = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return entry if isinstance(entry, dict) else None


def _csv(head: list[str], named: str) -> str | None:
    """A header of at least three column names, then rows of as many cells."""
    rows = [text for text in head if text.strip()][:2]
    if len(rows) < 2 or not re.fullmatch(rf'\s*"?{_NAME}"?(?:,"?{_NAME}"?){{2,}}\s*', rows[0]):
        return None
    try:
        header, row = list(csv.reader(rows))
    except (csv.Error, ValueError):
        return None
    if len(row) != len(header):
        return None
    columns = [name.strip().lower() for name in header]
    host, clock, event = (
        next((c for c in columns if c in names), None) for names in (_HOSTS, _CLOCKS, _EVENTS)
    )
    said = f"1: a CSV file (its header: {','.join(header)[:80]}), not a layout verify reads"
    if host is None or clock is None or event is None:
        return (
            f"{said}: it needs a host, a vector clock and an event column (a header naming them: "
            "host, clock, event) to be written in GoVector's layout, HOST CLOCK then the event on "
            "the next line"
        )
    cell = row[columns.index(clock)].strip()
    value = f'r["{header[columns.index(clock)]}"]'
    if not cell.startswith("{"):  # a:1;b:2 → {"a": 1, "b": 2}
        value = f'json.dumps({{k: int(n) for k, n in (e.split(":") for e in {value}.split(";"))}})'
    host_column, event_column = header[columns.index(host)], header[columns.index(event)]
    write = (
        f'python3 -c \'import csv, json, sys; [print(r["{host_column}"], {value} + "\\n" + '
        f'r["{event_column}"]) for r in csv.DictReader(sys.stdin)]\' < {named} > LOG'
    )
    return f"{said}: write it in GoVector's layout (HOST CLOCK, then the event), {write}, and verify LOG"


def _logfmt(head: list[str], named: str) -> str | None:
    """Lines of ``key=value`` pairs only (logfmt: Go's logrus, Heroku's routers)."""
    first = next((text for text in head if text.strip()), "")
    pairs = _LOGFMT_PAIR.findall(first)
    if len(pairs) < 2 or _LOGFMT_PAIR.sub("", first).strip():
        return None
    keys = [pair.split("=", 1)[0] for pair in pairs]
    return (
        f"1: logfmt (key=value pairs: {', '.join(keys[:6])}), not a layout verify reads: as JSON "
        "Lines, one object a line, its fields are read as mutexlab's event shape; python3 -c 'import "
        'json, shlex, sys; [print(json.dumps(dict(p.split("=", 1) for p in shlex.split(line)))) for '
        f"line in sys.stdin]' < {named} > LOG.jsonl"
    )


def _cased(head: list[str], named: str) -> str | None:
    """A JSON line whose event's fields are there in another case: ``journalctl -o json`` (the
    fields a program sent are upper case: EVENT, PID), Serilog's CLEF (PascalCase: Event, Pid)."""
    entry = _object(next((text for text in head if text.strip()), ""))
    if entry is None or {"event", "pid"} <= entry.keys():
        return None
    cased = [key for key in entry if key.lower() in _FIELDS and key != key.lower()]
    if not any(key.lower() in ("event", "pid") for key in cased):
        return None
    what = (
        "a journald export (journalctl -o json), whose fields a program sent are upper case"
        if "__REALTIME_TIMESTAMP" in entry or "__CURSOR" in entry
        else "Serilog's CLEF, whose properties are PascalCase"
        if "@t" in entry
        else "a JSON log whose fields are in another case"
    )
    return (
        f"1: {what} ({', '.join(cased[:6])}): verify reads mutexlab's event shape, its fields lower case "
        f"(event, pid, resource, …); jq -c 'with_entries(.key |= ascii_downcase)' {named} > LOG.jsonl"
    )


def _loguru(head: list[str], named: str) -> str | None:
    """loguru's ``serialize=True`` sink: ``{"text": …, "record": {"message": …, "extra": {…}}}``,
    the program's own fields (``logger.bind``) under ``record.extra``."""
    entry = _object(next((text for text in head if text.strip()), "")) or {}
    record = entry.get("record")
    if not isinstance(record, dict) or "text" not in entry or not isinstance(record.get("extra"), dict):
        return None
    extra = record["extra"]
    said = (
        "1: loguru's serialize=True JSON (each record under 'record', the fields the program bound "
        f"under 'record.extra': {', '.join(list(extra)[:6]) or 'none'}), not a layout verify reads"
    )
    if {"event", "pid"} <= extra.keys():  # mutexlab's event shape, one level down
        return f"{said}; its fields lifted are JSON Lines: jq -c '.record.extra' {named} > LOG.jsonl"
    host = next((key for key in extra if key.lower() in _HOSTS), None)
    clock = next((key for key in extra if key.lower() in _CLOCKS), None)
    if host is None or clock is None:
        return (
            f"{said}: bind each process's name and its vector clock (logger.bind(node=…, vc=…)), "
            "or the event's fields as JSON Lines reads them (event, pid, resource, …)"
        )
    shown = f"(.extra.{clock} | tojson)" if isinstance(extra[clock], dict) else f"(.extra.{clock})"
    return (
        f"{said}; in GoVector's layout (HOST CLOCK, then the message): jq -r '.record | "
        f'"\\(.extra.{host}) \\{shown}\\n\\(.message)"\' {named} > LOG, and verify LOG'
    )


# compose names a container SERVICE-N (v1: PROJECT_SERVICE_N), its bar in one column on every line
_PREFIX = re.compile(r"(?:[A-Za-z][\w.@-]*[-_]\d+\s*\| ?|\[pod/[^\]\s]+\] )\S")


def _prefixed(head: list[str], named: str) -> str | None:
    """Every line behind a container's name: ``docker compose logs`` (``lock-1  | …``, the name
    coloured on a terminal), ``kubectl logs --prefix`` (``[pod/lock-5d/lock] …``)."""
    shown = [plain(text) for text in head[:20] if text.strip()]
    if not shown or not all(_PREFIX.match(text) for text in shown):
        return None
    if not shown[0].startswith("[pod/") and len({text.index("|") for text in shown}) > 1:
        return None
    if shown[0].startswith("[pod/"):
        return (
            f"1: each line behind its pod's name ({shown[0].split(']')[0]}], kubectl logs --prefix): "
            "verify reads the program's own lines; leave out --prefix, or remove it: "
            f"sed -E 's/^\\[pod\\/[^]]*\\] //' {named} > LOG, and verify LOG"
        )
    return (
        f"1: each line behind its container's name ({shown[0].split('|')[0].strip()} |, docker compose "
        "logs): verify reads the program's own lines; docker compose logs --no-log-prefix --no-color "
        f"writes them, or remove the prefix: sed -E 's/\\x1b\\[[0-9;]*m//g; s/^[^|]*\\| ?//' {named} > LOG, "
        "and verify LOG"
    )


def _text_first(head: list[str], named: str) -> str | None:
    """A few lines of text, then JSON events: another output (a warning, a banner) that ``2>&1``
    wrote into a JSON Lines log before its first event."""
    shown = [(n, plain(text)) for n, text in enumerate(head[:20], 1) if text.strip()]
    events = [n for n, text in shown if text.startswith("{") and _event(text)]  # an array's are indented
    if (
        not events
        or events[0] == shown[0][0]
        or any(_event(text) is not None for n, text in shown if n < events[0])
    ):
        return None
    first = shown[0][1].strip()
    if first.startswith(("[", "{")):  # JSON over several lines: its reader's error says what it is
        return None
    return (
        f"1: text ({first[:40]!r}) before the JSON events that start at line {events[0]}: another output "
        "written into the log (stderr by 2>&1: a warning)? write it elsewhere, or keep the events only, "
        f"grep '^{{' {named} > LOG"
    )


def _event(text: str) -> bool | None:
    """True: a JSON object with an "event" (a JSON Lines event); None: a line that is no JSON."""
    if more_members(text, MAX_LINE_MEMBERS):
        return False
    try:
        entry = json.loads(text)
    except (ValueError, RecursionError):
        return None
    return isinstance(entry, dict) and "event" in entry


_FIELDS = {"event", "pid", "resource", "units", "type", "to", "from", "id", "vc", "msg", "copy"}
# A reader's refusal of a line that may be another's copy: (its pattern, the group of the other line).
_REPEATS = (
    re.compile(r"message id .* is sent again while still in flight \(sent at line (\d+)\)"),
    re.compile(r"own clock entry goes from \d+ \(line (\d+)\) to \d+"),
)


def _twice(path: str | Path, error: str, number: int) -> str | None:
    """What to add to ``error`` when line ``number`` repeats the line it names exactly: one event
    written twice, as two appenders on one file (log4j's, logback's additivity) write each."""
    other = next((int(m.group(1)) for p in _REPEATS if (m := p.search(error))), None)
    if other is None or not 0 < other < number:
        return None
    wanted: dict[int, bytes] = {}
    try:
        with open(path, "rb") as handle:
            for at, raw in enumerate(lines(handle, MAX_LINE), 1):
                if at in (other, number):
                    wanted[at] = raw.rstrip(b"\r\n")
                if at >= number:
                    break
    except (OSError, ValueError):
        return None
    if len(wanted) < 2 or wanted[other] != wanted[number] or not wanted[number].strip():
        return None
    return (
        f" — line {number} repeats line {other} exactly: one event written twice? (two appenders on "
        "one file, as log4j's and logback's additivity makes them: additivity=\"false\" on the "
        "logger, or one appender)"
    )
