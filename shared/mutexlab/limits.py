"""What the readers of outside input take at most (docs/faults.md#hostile-input).

Every reader of a file or a request body is bounded, so hostile or broken input is refused with
a message naming the limit, never read into memory without end: a trace line is at most
``MAX_LINE`` bytes (``lines``), a scenario or options file at most ``MAX_FILE`` bytes
(``read_file``), JSON nested at most ``MAX_DEPTH`` arrays and objects deep (``loads``). Each
raises ``InputError`` (a ValueError); the reader turns it into its own error type.

A JSON object that names one key twice is refused (``unique_keys``, the ``object_pairs_hook`` of
every reader of a user's JSON: ``loads``, and the trace, log, option and settings readers): Python's
``json`` keeps the last value silently, so ``{"pid": 1, "pid": 2}`` would be read as a process 2
its writer may never have meant. The RabbitMQ wire (bus/wire.py, msgspec) is left as it is: it
carries only frames mutexlab's own participants encode from dicts, which cannot repeat a key.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

MAX_LINE = 8 << 20  # bytes of one trace line (a vector clock of 100,000 processes fits)
MAX_FILE = 16 << 20  # bytes of a scenario or options file (some 400,000 steps)
MAX_DEPTH = 64  # arrays and objects inside each other in one JSON document
# A clock-free log (audit/clockfree.py): its events held waiting for a send further on in the
# file, and the clock entries of the messages sent and not yet received. Beyond either the log is
# refused, naming the line, well before it could hold 600 MB.
MAX_WAITING_EVENTS = 400_000
MAX_IN_FLIGHT_ENTRIES = 4_000_000
# A regex a log supplies (audit/logregex.py): seconds one match may take, and all of them together
# (the base plus so much per record: a log of 10⁶ records may spend 110 s, a hostile one no more).
REGEX_MATCH_SECONDS = 1.0
REGEX_BASE_SECONDS = 10.0
REGEX_RECORD_SECONDS = 100e-6
# Entries of one vector clock a log states (a ShiViz record's clock): counted before it is parsed,
# so a line of 500,000 hosts is refused at once instead of held (781 MB) as a dict and as claims.
MAX_CLOCK_ENTRIES = 100_000
# Members (keys) of all the JSON objects of one line of a JSON log or trace: a vector clock of
# MAX_CLOCK_ENTRIES and a message body as large. Counted before the line is parsed (``members``):
# parsing a 7.9 MB line of 880,000 clock entries held 258 MB.
MAX_LINE_MEMBERS = 2 * MAX_CLOCK_ENTRIES
# The largest count a clock entry may state (a 64-bit signed integer): no log holds more events, and
# the consistency check keeps counts in such integers (audit/clocks.py).
MAX_CLOCK_COUNT = 2**63 - 1
# Lines one ShiViz record spans (its regex's `\n`s, plus one): a record is held whole until matched,
# so a regex of 100,000 `\n`s would hold as many lines; together they may hold MAX_LINE characters.
MAX_RECORD_LINES = 1_000
# A record that does not start where it must is searched for further, to say what stands before it,
# only on a first line this long: a search tries every place, in time quadratic in the line's length.
DIAGNOSED_LINE = 4_096
# A log read from a pipe (`verify /dev/stdin`, a FIFO) is copied to a temporary file first, which
# may live in memory (/tmp a tmpfs): beyond this many bytes without the pipe's end it is refused,
# so a writer that never closes it (`tail -f`) cannot fill the disk or memory (some 14·10⁶ events).
MAX_PIPE_BYTES = 4 << 30
BOM = b"\xef\xbb\xbf"  # UTF-8's byte order mark, which some editors write first


class InputError(ValueError):
    """Input beyond a limit, or JSON this reader does not take; the message says which."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``object_pairs_hook`` of every reader of outside JSON: the object, or InputError naming
    a key it holds twice (``json`` alone keeps the last value, silently)."""
    made = dict(pairs)
    if len(made) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise InputError(f"the key {json.dumps(key)[:80]} appears twice in one JSON object")
            seen.add(key)
    return made


# A number on the command line or in a flag's value: ASCII digits only, as the help shows them.
# Python's int() and float() also take other scripts' digits ("٣"), "1_0" and surrounding blanks.
_WHOLE = re.compile(r"[+-]?[0-9]{1,30}", re.ASCII)
_DECIMAL = re.compile(
    r"[+-]?(?:[0-9]{1,30}(?:\.[0-9]{0,30})?|\.[0-9]{1,30})(?:[eE][+-]?[0-9]{1,4})?", re.ASCII
)


def whole_number(text: str) -> int:
    """``text`` as a whole number written in ASCII digits (an optional sign, at most 30 digits);
    ValueError otherwise. The one reader of every whole number a flag takes."""
    if not isinstance(text, str) or not _WHOLE.fullmatch(text):
        raise ValueError(f"{text!r} is not a whole number (ASCII digits 0-9)")
    return int(text)


def decimal_number(text: str) -> float:
    """``text`` as a number written in ASCII (digits, one point, an exponent); ValueError otherwise
    (``inf``, ``nan``, ``1_0``, other scripts' digits). The one reader of every real a flag takes."""
    if not isinstance(text, str) or not _DECIMAL.fullmatch(text):
        raise ValueError(f"{text!r} is not a number (ASCII digits 0-9, a point, an exponent)")
    return float(text)


def lines(handle: IO[bytes], limit: int = MAX_LINE) -> Iterator[bytes]:
    """The lines of a binary file, each read with at most ``limit`` bytes held: a longer one raises
    InputError naming its number (from 1)."""
    number = 0
    while True:
        line = handle.readline(limit + 1)
        if not line:
            return
        if line.startswith(BOM):  # no part of the text: first, or where files each began with one were
            line = line[len(BOM) :]  # put end to end (`cat *.jsonl` of a Windows program's per-process logs)
        number += 1
        if len(line) > limit:
            raise InputError(f"line {number} is longer than {limit:,} bytes (the limit of a line)")
        yield line


_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|:')  # a JSON string (skipped) or a colon outside one


def more_members(text: str, limit: int) -> bool:
    """Whether the JSON objects in ``text`` have more than ``limit`` members in all (its colons
    outside strings), told without parsing it and counting no further than ``limit + 1``."""
    if text.count(":") <= limit:  # the common case, at C speed: it cannot have more
        return False
    found = 0
    for token in _JSON_TOKEN.finditer(text):
        if token.group() == ":":
            found += 1
            if found > limit:
                return True
    return False


def members(text: str) -> None:
    """InputError when a JSON log's line ``text`` holds more than ``MAX_LINE_MEMBERS`` members in
    all, told before it is parsed (what parsing them would hold is what is refused)."""
    if more_members(text, MAX_LINE_MEMBERS):
        raise InputError(
            f"more than {MAX_LINE_MEMBERS:,} JSON members in one line (limits.MAX_LINE_MEMBERS: a vector "
            f"clock of at most {MAX_CLOCK_ENTRIES:,} entries, limits.MAX_CLOCK_ENTRIES, and a message as "
            "large): refused before it is read"
        )


def clock_entries(vc: object) -> None:
    """InputError when a parsed vector clock ``vc`` has more than ``MAX_CLOCK_ENTRIES`` entries."""
    if isinstance(vc, dict) and len(vc) > MAX_CLOCK_ENTRIES:
        raise InputError(
            f"'vc' has {len(vc):,} entries, more than {MAX_CLOCK_ENTRIES:,} (limits.MAX_CLOCK_ENTRIES)"
        )


def read_file(path: str | Path, what: str, limit: int = MAX_FILE) -> bytes:
    """The bytes of ``path``, at most ``limit`` of them (InputError beyond, naming ``what``: "a
    scenario"); OSError as raised."""
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"larger than {limit:,} bytes, the limit of {what}")
    return data


def loads(text: str | bytes, depth: int = MAX_DEPTH) -> Any:
    """``json.loads`` that refuses what cannot be held safely: nesting deeper than ``depth``, an
    integer of more digits than Python converts, NaN and infinities, a key twice in one object. InputError says why;
    ``json.JSONDecodeError`` (a ValueError) for text that is not JSON."""
    try:
        value = json.loads(
            text, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=unique_keys
        )
    except RecursionError:
        raise InputError(f"JSON nested more than {depth} deep") from None
    except (json.JSONDecodeError, InputError):
        raise
    except ValueError as exc:  # an integer longer than sys.get_int_max_str_digits(), not UTF-8
        raise InputError(f"JSON this reader does not take: {refused(exc)}") from None
    if nesting(value) > depth:
        raise InputError(f"JSON nested more than {depth} deep")
    return value


def loads_shallow(text: str | bytes) -> Any:
    """``loads`` without its nesting check, for text that cannot nest deep (a caller counted its
    brackets): NaN, infinities, numbers too large to be finite, an integer of more digits than Python
    converts, bytes that are not UTF-8 and a key twice refused (InputError)."""
    try:
        return json.loads(
            text, parse_constant=_no_constant, parse_float=_finite, object_pairs_hook=unique_keys
        )
    except (json.JSONDecodeError, InputError):
        raise
    except ValueError as exc:
        raise InputError(refused(exc)) from None


def string_clock(text: str) -> Any:
    """A trace event's ``vc`` written as a string holding its JSON, parsed as its line was (a
    Java logger's MDC holds strings only: logback, log4j2 write ``"vc": "{\\"p1\\": 3}"``); what it
    holds is then judged as a ``vc`` written as JSON is. InputError saying what is wrong."""
    if more_members(text, MAX_CLOCK_ENTRIES):  # counted before it is parsed, as a clock in JSON
        raise InputError(
            f"the string 'vc' holds more than {MAX_CLOCK_ENTRIES:,} entries (limits.MAX_CLOCK_ENTRIES): "
            "refused before it is read"
        )
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"'vc' is the string {json.dumps(text)[:40]}, which holds no JSON ({exc.msg}): a vector "
            'clock is a JSON object of process names to counts ({"p0": 2, "p1": 0}), or a string holding one'
        ) from None
    except InputError as exc:
        raise InputError(f"in the string 'vc': {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"'vc' holds JSON past a limit ({refused(exc)})") from None


def refused(exc: BaseException) -> str:
    """What ``json.loads`` refused, other than text that is not JSON, in a user's words: Python's
    own says to call ``sys.set_int_max_str_digits()``, no advice for a user of mutexlab."""
    if isinstance(exc, UnicodeDecodeError):
        return f"bytes that are not UTF-8 text (byte {exc.start + 1}: 0x{exc.object[exc.start]:02x})"
    if isinstance(exc, RecursionError):  # JSON, but nested deeper than json's parser recurses
        return (
            f"arrays and objects nested deeper than its reader goes, some {sys.getrecursionlimit():,} levels"
        )
    if "integer string conversion" in str(exc):
        return f"an integer of more than {sys.get_int_max_str_digits():,} digits"
    return str(exc)


def _no_constant(name: str) -> Any:
    raise InputError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise InputError(f"the number {text[:40]} is too large")
    return value


def nesting(value: Any) -> int:
    """How deep arrays and objects sit inside each other in ``value`` (0 for a scalar); iterative."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, (dict, list)))
    return deepest
