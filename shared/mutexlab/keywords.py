"""The audit's keywords (``request``, ``enter``, ``exit``) and the words that look like them
without being them (docs/verify-any-log.md, docs/trace-format.md).

An event the audit does not read as an ``enter`` could hide a violation, so a description or an
event kind that reads as one of the keywords but is not written so is refused by every reader,
naming the line: inflected (``entering``, ``exited``, ``requests``) or joined to more
(``enter_cs``, ``exit-cs``); and an ``enter`` joined by a change of case (``ENTERcs``, ``enterCS``,
``EnterCriticalSection``) or behind punctuation or a bracketed tag (``[enter cs]``,
``[INFO] enter cs``). Only ``enter`` in these two last forms: a missed ``exit`` or ``request``
shows as a finding (a holding never ended, a request never made), never as SAFE, while programs
write ``exitCode 0``, ``requestQueue: [2]``, ``RequestVote`` and ``-> request to 2`` as ordinary
words. Not another word that merely starts with one (``entertain``, ``exitcode``, ``Entertain``).
"""

from __future__ import annotations

import json
import re

from . import limits

KEYWORDS = ("request", "enter", "exit")
# Inflected or joined to more (`entering`, `enter_cs`), not followed by a letter or digit.
AUDIT_KEYWORD = re.compile(r"\s*(request|enter|exit)(?:s|ed|ing)?(?![^\W_])", re.IGNORECASE)
# `enter` joined to a word by a change of case: `ENTERcs`, `enterCS` (group 2: the next letter).
_CASE_JOIN = re.compile(r"\s*(enter)([^\W\d_])", re.IGNORECASE)
# Punctuation (`[`, `->`, `*`, `"`) or a bracketed tag (`[INFO]`, `(t=5)`, `<3>`) before `enter`.
_BEHIND = re.compile(
    r"\s*(?:[^\w\s]+|\[[^\]]{0,40}\]|\([^)]{0,40}\)|<[^>]{0,40}>)\s*(enter\w*)",
    re.IGNORECASE,
)


def lookalike(text: str) -> str | None:
    """The keyword ``text`` reads as without being written so (``exactly``: the audit's own form,
    checked by the caller first), lower case; None when it reads as none."""
    found = AUDIT_KEYWORD.match(text)
    if found is not None:
        return found.group(1).lower()
    joined = _CASE_JOIN.match(text)
    if joined is not None and joined.group(1)[-1].islower() != joined.group(2).islower():
        return joined.group(1).lower()
    behind = _BEHIND.match(text)
    if behind is not None:
        return lookalike(behind.group(1)) or None
    return None


# Said of a JSON line with none of an event's fields (``event``, ``pid``): another program's JSON,
# a logging handler's, which verify reads only as text through a regex of its own.
# A headerless JSON log whose events carry vector clocks: another program's, read as a trace once
# it says its capacities in a header line of its own
CLOCKED_JSON = (
    "; a JSON log of another program that keeps vector clocks is read with a header line first: "
    '{"event": "run", "pid": "run", "capacities": {"cs": 1}} (docs/trace-format.md)'
)
# A 'vc' that is there but no JSON object (a list of counts by position): what a clock must be
VC_SHAPE = (
    "a vector clock is a JSON object of process names to counts (" + '{"p0": 2, "p1": 0}' + "): "
    "a list's positions name no process"
)
FOREIGN_JSON = (
    ": not mutexlab's event shape (docs/verify-any-log.md#clock-free-json-lines); a JSON log of another "
    "layout that keeps vector clocks is read with --format shiviz --regex naming its host, clock and event"
)


def one_document(line: str, first: bool = True) -> str:
    """What to add to "not JSON" when ``line`` holds NULs (UTF-16: ``UTF16``), or when it is the
    ``first`` line and opens a JSON document written over several lines (``{`` or ``[`` alone, as
    ``json.dump(..., indent=1)`` writes one): a scenario of ``check --counterexample``, or a log
    saved as one pretty-printed array, is no JSON Lines."""
    if "\x00" in line:  # UTF-16 without its byte-order mark decodes as UTF-8, a NUL every other byte
        return UTF16
    if first and opens_array(line):
        return (
            ": the file is one JSON document over several lines, not JSON Lines (one event a line): "
            "an array of events, which a log is not (`jq -c '.[]' FILE` writes its events one a line)"
        )
    if not first or line.strip() != "{":
        return ""
    return (
        ": the file is one JSON document over several lines, not JSON Lines (one event a line). A "
        "scenario (check --counterexample, explore's saves) is played by `mutexlab replay FILE "
        "--trace T`, whose trace T this reads; a log saved as one array: write each event on a line"
    )


def opens_array(line: str) -> bool:
    """Whether ``line`` (a log's first, not JSON by itself) opens a JSON array of objects written
    over several lines: ``[`` alone, or ``[`` then an object (``[{"event": …},`` as
    ``json.dump(events, indent=None)`` with line breaks writes it) — not a logger's ``[info]``."""
    return re.match(r"\s*\[\s*(?:\{|$)", line) is not None


def not_an_object(event: object) -> str:
    """Why a parsed line is no event; a JSON array of objects on one line (a log saved as one array,
    ``json.dumps(events)``) said so, with how to write it as JSON Lines."""
    if isinstance(event, list) and event and all(isinstance(e, dict) for e in event):
        return (
            f"the line is a JSON array of {len(event)} event{'s' * (len(event) != 1)}, not one event: a log is "
            "JSON Lines, one "
            "event a line (`jq -c '.[]' FILE` writes an array so)"
        )
    return f"an event must be a JSON object, not {type(event).__name__}"


def not_utf8(source: str, number: int, raw: bytes, at: int) -> str:
    """The error for line ``number`` of ``source``, ``raw``, not UTF-8 from its byte ``at`` (0-based):
    a file in UTF-16 (Windows PowerShell's ``>`` writes it, a byte-order mark first) said so."""
    said = f"{source}:{number}: not UTF-8 text (byte {at + 1} of the line)"
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")) or raw.count(b"\x00") * 3 > len(raw):
        said += UTF16
    return said


UTF16 = (
    ": it reads as UTF-16 (Windows PowerShell's `>` and Out-File write it): write UTF-8 "
    "(`Out-File -Encoding utf8`), or convert it (`iconv -f UTF-16 -t UTF-8 LOG > LOG8`)"
)


def run_together(line: str, first: bool = False) -> str:
    """What to add to "not JSON" when ``line`` is an event cut off mid-write followed by a whole
    one (``{"event": "exit", "resource": "c{"event": "recv", …}``: processes sharing one output,
    one stopped in the middle of a line); ``one_document``'s first (``[{"event": …},`` opening an
    array holds its objects, not events run together). Tries the first 8 ``{"`` after it."""
    opened = one_document(line, first)
    if opened:
        return opened
    start = 0
    for _ in range(8):
        start = line.find('{"', start + 1)
        if start < 0:
            break
        try:
            rest = json.loads(line[start:], object_pairs_hook=limits.unique_keys)
        except (ValueError, RecursionError):
            continue
        if isinstance(rest, dict):
            return (
                f": {line[:start][:40]!r} is an event cut off mid-write, and a whole one follows on the "
                "same line (processes sharing one output, one stopped mid-line?); only a file's last "
                "line may be cut: remove the cut part, or write each process to a file of its own"
            )
    other = re.search(r'\{\s*"(?:event|pid)"', line[1:])  # `{"pid": "t0", {"pid": "t1", "event"…`
    if other is not None:
        return (
            f": another event starts at column {other.start() + 2} (writers sharing one output, a line "
            "written in pieces: write each line with one call, or under a lock)"
        )
    if not first and not line.lstrip().startswith(("{", "[")):  # after JSON events: another stream's
        return (
            f": text among the JSON events ({line.strip()[:40]!r}): another output written into the log "
            "(stderr by 2>&1: a warning, a traceback)? write it elsewhere, or keep the events only, "
            "grep '^{' FILE > LOG (after a traceback a process may have stopped: its log ends there)"
        )
    return ""


def nested_fields(event: dict, missing: list[str]) -> str:
    """Where a logger nested the ``missing`` fields one level down (Rust ``tracing``'s JSON writes
    an event's fields in ``fields`` and its span's in ``span``; logback's ``mdc``), and how to lift
    them: a clause for the error, or "" when no object field holds any of them."""
    found = {
        name: key
        for name in missing
        for key, value in event.items()
        if isinstance(value, dict) and name in value
    }
    if not found:
        return ""
    where = ", ".join(f"{name!r} is in {key!r}" for name, key in found.items())
    lift = " + ".join(f".{key}" for key in dict.fromkeys(sorted(found.values(), reverse=True)))
    tracing = (
        " (Rust tracing: fmt().json().flatten_event(true), the process's name a field 'pid')"
        if "fields" in found.values()
        else ""
    )
    return (
        f" ({where}): verify reads an event's fields at the top level of its line; lift them, "
        f"jq -c '. + {lift}' FILE{tracing}"
    )


# Fields a structured logger's child binding may name its process in (pino's child({ name }),
# bunyan's log.child({ actor })): named in the hint, which says how to move it to "pid".
_NAME_FIELDS = ("name", "actor", "node", "process", "proc", "worker", "client", "peer")


def os_pid(event: dict) -> str:
    """The hint for a line whose numeric ``pid`` is a pino or bunyan logger's own (the OS process's
    number; the line has ``level``, ``time`` and ``hostname`` too), naming a field that may hold the
    process's name and how to move it to ``pid``; "" for a line of another shape."""
    pid = event.get("pid")
    if not (
        isinstance(pid, int) and not isinstance(pid, bool) and {"level", "time", "hostname"} <= event.keys()
    ):
        return ""
    said = (
        ": pino's (bunyan's) own 'pid', the OS process's number, not a process's name; verify reads "
        "each process's name from 'pid'"
    )
    held = next((f for f in _NAME_FIELDS if isinstance(event.get(f), str) and event[f]), None)
    if held is not None:
        return f"{said}, and {held!r} holds {json.dumps(event[held])[:40]} here: if that names the process, jq -c '.pid = .{held}' FILE, or in the program child({{ pid: NAME }}) with pid left out of the base, pino({{ base: {{ hostname }} }})"
    return f"{said}: log it there, child({{ pid: NAME }}) with pid left out of the base, pino({{ base: {{ hostname }} }})"


# A JSON string (kept whole: what is in it is the writer's) or a colour code (SGR: ``ESC [ … m``,
# what ``jq -C`` writes around each key, value and bracket) between two tokens. A string left open
# runs to the line's end (unrolled: linear, where an alternation rescanned from every quote).
_STRING_OR_COLOUR = re.compile(r'"[^"\\]*+(?:\\[\s\S][^"\\]*+)*+(?:"|\\?\Z)|\x1b\[[0-9;:]*m')


def uncoloured(line: str) -> str:
    """``line`` without the colour codes (SGR) between its JSON tokens, as ``jq -C`` writes them; a
    line without an escape byte is returned as it is. Sound: JSON holds no escape byte (in a string
    it is written ``\\u001b``), so nothing removed was part of a value. An escape byte left (inside
    a string, or a code other than a colour) raises ``limits.InputError`` naming it and its column."""
    if "\x1b" not in line:
        return line
    kept, at, left = [], 0, -1
    for found in _STRING_OR_COLOUR.finditer(line):
        between, token = line[at : found.start()], found.group()
        if left < 0 and "\x1b" in between:
            left = at + between.index("\x1b")
        kept.append(between)
        if token[0] == '"':
            if left < 0 and "\x1b" in token:
                left = found.start() + token.index("\x1b")
            kept.append(token)
        at = found.end()
    if left < 0 and "\x1b" in line[at:]:
        left = line.index("\x1b", at)
    if left >= 0:
        raise limits.InputError(
            f"an escape byte that is no colour code between JSON tokens ({line[left : left + 12]!r}, "
            f"column {left + 1}): the colours `jq -C` writes around keys and values are read as plain "
            "JSON, never an escape inside a string nor another code; write the log without them (jq -M)"
        )
    return "".join(kept) + line[at:]
