"""A record's text as a log's writer meant it (docs/verify-any-log.md#shiviz--govector-logs).

* ``plain``: terminal colour and cursor codes (ECMA-48: ``ESC [ … m`` and the like) removed. A
  logger writing to a terminal colours its fields (loguru's ``colorize``, structlog's console,
  docker compose's prefixes); kept in a file by ``tee`` or ``script``, ``\\x1b[1menter cs\\x1b[0m``
  would be an ``other`` event, its holding unread — a violation unseen.
* ``read_clock``: a clock written as a JSON object, as Python prints a dict (``{'a': 3, 'b': 1}``:
  ``str(vc)``, an f-string, loguru's ``{extra[vc]}``) or as Go's ``fmt`` prints a map
  (``map[a:3 b:1]``: ``%v``). Only names to whole numbers are read so; anything else is the JSON
  error it always was.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..limits import unique_keys
from ..trace import TraceError

# CSI (colours, cursor), OSC (a title, a link: ended by BEL or ESC \), and two-byte escapes but
# those that open a string (DCS P, SOS X, OSC ], PM ^, APC _). A string with no end on its line is
# no code: a terminal hides what follows it, so its escape byte is left (and refused).
_ESCAPE = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-OQ-WYZ\\]")
_PY_NAME = r"'(?:[^'\\\n])*'|\"(?:[^\"\\\n])*\""
_PY_PAIR = re.compile(rf"\s*({_PY_NAME})\s*:\s*(\d+)\s*(,|(?=\}}$))")
_GO_MAP = re.compile(r"map\[(.*)\]")
_GO_PAIR = re.compile(r"(\S+):(\d+)")
GO_MAP_LINE = re.compile(r"\s*\S+ map\[[^\]]*\]\s*")  # a GoVector record's first line, Go's %v clock
DEFAULT_REGEX = r"(?<host>\S*) (?<clock>{.*})\n(?<event>.*)"  # GoVector's
GO_MAP_REGEX = r"(?<host>\S*) (?<clock>map\[.*\])\n(?<event>.*)"
# GoVector's record on one line, the clock (a flat object: JSON, a Python dict) between host and event
ONE_LINE = re.compile(r"\s*\S+ \{[^{}]*\} +\S.*")
ONE_LINE_REGEX = r"(?<host>\S*) (?<clock>{[^{}]*}) +(?<event>.*)"
LINEAR = (DEFAULT_REGEX, GO_MAP_REGEX, ONE_LINE_REGEX)  # known not to backtrack: Python's re, no time limit


def default_regex(first: str | None) -> tuple[str, str]:
    """The regex of a log whose first record line is ``first`` when neither the log nor --regex
    gives one, and how an error names it: GoVector's (HOST CLOCK, then the event on the next line),
    with a Go map clock when ``first`` is ``HOST map[…]``, or on one line when ``first`` is
    ``HOST {CLOCK} EVENT`` (which GoVector's regex never matches: its clock ends the line)."""
    if first is not None and GO_MAP_LINE.fullmatch(first):  # Go's %v of a map
        return GO_MAP_REGEX, f"GoVector's regex with a Go map clock {GO_MAP_REGEX}"
    if first is not None and ONE_LINE.fullmatch(first):
        return ONE_LINE_REGEX, f"GoVector's layout on one line (HOST CLOCK EVENT), {ONE_LINE_REGEX}"
    return DEFAULT_REGEX, f"GoVector's regex {DEFAULT_REGEX}"


def plain(text: str) -> str:
    """``text`` without terminal escape codes (most lines have none: returned as they are)."""
    return _ESCAPE.sub("", text) if "\x1b" in text else text


def plain_line(text: str, source: str, number: int) -> str:
    """Line ``number`` of ``source`` without its escape codes; TraceError when an escape byte is
    left that starts no code ``plain`` knows: what it hides cannot be told."""
    shown = plain(text)
    if "\x1b" in shown:
        at = shown.index("\x1b")
        raise TraceError(
            f"{source}:{number}: an escape byte that starts no terminal code verify knows "
            f"({shown[at : at + 12]!r}, column {at + 1}): remove the terminal's codes, "
            "sed -E 's/\\x1b\\[[0-9;]*m//g' FILE > LOG, or log without colour"
        )
    return shown


def read_clock(text: str) -> Any:
    """The clock ``text`` holds: JSON, or a Python dict's or a Go map's print of names to whole
    numbers. ValueError (JSON's, or naming what is wrong) when it is none of these; RecursionError
    and ``InputError`` as from ``json.loads``."""
    try:
        return json.loads(text, object_pairs_hook=unique_keys)
    except ValueError as exc:
        stripped = text.strip()
        if stripped.startswith("{") and "'" in stripped:
            return _python_dict(stripped, exc)
        go = _GO_MAP.fullmatch(stripped)
        if go is not None:
            return _go_map(go.group(1))
        raise


def _python_dict(text: str, error: ValueError) -> dict:
    pairs, at = [], 1
    while at < len(text) - 1:
        found = _PY_PAIR.match(text, at)
        if found is None:
            if not text[at:-1].strip():
                break
            raise error
        pairs.append((found.group(1)[1:-1], int(found.group(2))))
        at = found.end()
    if not text.endswith("}"):
        raise error
    return unique_keys(pairs)


def _go_map(inner: str) -> dict:
    pairs = []
    for token in inner.split():
        found = _GO_PAIR.fullmatch(token)
        if found is None:
            raise ValueError(
                f"Go's map[…] print of a clock, but {token[:40]!r} is no name:count (a host name "
                "with a space cannot be told apart in it: print the clock as JSON, json.Marshal)"
            )
        pairs.append((found.group(1), int(found.group(2))))
    return unique_keys(pairs)
