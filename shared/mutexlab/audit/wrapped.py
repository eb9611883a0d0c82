"""Layouts that wrap each record ``verify`` reads in another's envelope, or write its clock without
host names: named when a reader refuses the log near its start, with the command that converts it
(``layouts.explain`` asks; docs/verify-any-log.md#other-layouts). Each reader takes the log's first
lines (``layouts._head``: bounded) and the file's name as a shell word; every regex here is linear.

* java.util.logging's ``XMLFormatter`` (``<log>``, a ``<record>`` element an event, its text in
  ``<message>``): a ``python3 -c`` line prints each message, streaming (``iterparse``);
* java.util.logging's ``SimpleFormatter`` (a date and source line, then ``LEVEL: message``):
  ``sed`` drops the first and the level;
* syslog lines (RFC 3164 ``<13>Dec  3 07:00:00 host prog[pid]: …``, with or without ``<PRI>``, or
  an ISO time as rsyslog writes it; RFC 5424 ``<134>1 TIME HOST APP PROCID MSGID SD …``): ``sed``
  removes the prefix when the message is a record (a JSON event, ``HOST {CLOCK} EVENT``); a message
  ``{CLOCK} EVENT``, whose host is the syslog HOSTNAME, is read by the ``--regex`` given;
* a clock written as a list of counts by position (``n0 [1,0,2]``) beside a host's name: which
  position is which host the log does not say; the ``python3 -c`` line takes the names in that
  order, guessed from each host's own entry (rising by one a record) when the first lines show it.
"""

from __future__ import annotations

import json
import re
import shlex

from ..limits import DIAGNOSED_LINE

_JUL_LEVELS = "SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST"
_JUL_DATE = re.compile(r"[A-Z][a-z]{2} \d{2}, \d{4} \d{1,2}:\d{2}:\d{2} [AP]M \S.*")
_JUL_LEVEL = re.compile(rf"(?:{_JUL_LEVELS}): ")
_MESSAGE = re.compile(r"\s*<message>(.*?)(?:</message>|$)")
_BSD = re.compile(
    r"(<\d{1,3}>)?(?:[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}|\d{4}-\d{2}-\d{2}T\S+) \S+ [^\s:\[]+(?:\[\d+\])?: "
)
_RFC5424 = re.compile(r'<\d{1,3}>1 \S+ \S+ \S+ \S+ \S+ (?:-|(?:\[(?:[^\]"\\]|"(?:[^"\\]|\\.)*")*\])+) ?')
_BSD_SED = (
    r"s/^(<[0-9]{1,3}>)?([A-Z][a-z]{2} [ 0-9][0-9] [0-9]{2}:[0-9]{2}:[0-9]{2}|[0-9]{4}-[0-9]{2}-[0-9]{2}T[^ ]+)"
    r" [^ ]+ [^ :[]+(\[[0-9]+\])?: //"
)
_RFC5424_SED = r's/^<[0-9]{1,3}>1 [^ ]+ [^ ]+ [^ ]+ [^ ]+ [^ ]+ (-|(\[([^]"\\]|"([^"\\]|\\.)*")*\])+) ?//'
_CLOCK_FIRST = re.compile(r"\{[^{}]*\} +\S.*")
_RECORD = re.compile(r"\S+ (?:\{[^{}]*\}|map\[[^\]]*\])(?: +\S.*)?")
# two counts at least, each of at most 18 digits (json reads them; a count beyond is no clock's)
_LISTED = re.compile(r"\s*(\S+) \[(\d{1,18}(?:, ?\d{1,18})+)\](?: +(\S.*))?")


def jul_xml(head: list[str], named: str) -> str | None:
    """java.util.logging's XMLFormatter: ``<?xml …?>``, ``<!DOCTYPE log SYSTEM "logger.dtd">``,
    ``<log>``, then a ``<record>`` element per event."""
    shown = [text.strip() for text in head[:8] if text.strip()]
    if not shown or not shown[0].startswith("<?xml") or "<log>" not in shown or "<record>" not in shown:
        return None
    message = next((m.group(1) for text in head if (m := _MESSAGE.match(text)) and "<message>" in text), "")
    return (
        f"1: java.util.logging's XMLFormatter (<log>, a <record> an event{_first(message)}), not a layout "
        "verify reads: each <message> printed on its line is one (a JSON event, GoVector's HOST {CLOCK} "
        'EVENT): python3 -c \'import sys, xml.etree.ElementTree as E; [(print(r.findtext("message", '
        '"")), r.clear()) for _, r in E.iterparse(sys.stdin.buffer) if r.tag == "record"]\' '
        f"< {named} > LOG, and verify LOG (a log whose writer was killed lacks its closing </log>: add it)"
    )


def _first(message: str) -> str:
    text = message.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    return f", the first message {text[:60]!r}" if text else ""


def jul_simple(head: list[str], named: str) -> str | None:
    """java.util.logging's SimpleFormatter, its default format: ``Dec 03, 2026 7:00:00 AM SOURCE``,
    then ``INFO: MESSAGE`` — two lines an event."""
    shown = [text for text in head[:20] if text.strip()]
    if len(shown) < 2 or not _JUL_DATE.fullmatch(shown[0]) or not _JUL_LEVEL.match(shown[1]):
        return None
    return (
        f"1: java.util.logging's SimpleFormatter (a date and source line {shown[0][:40]!r}, then "
        f"{shown[1].split(':')[0]}: and the message), not a layout verify reads: its messages alone are "
        f"one: sed -E '/^[A-Z][a-z]{{2}} [0-9]{{2}}, [0-9]{{4}} [0-9]{{1,2}}:[0-9]{{2}}:[0-9]{{2}} [AP]M /d; "
        f"s/^({_JUL_LEVELS}): //' {named} > LOG, and verify LOG (or set "
        "java.util.logging.SimpleFormatter.format=%5$s%n)"
    )


def syslog(head: list[str], named: str) -> str | None:
    """Every line behind a syslog prefix: RFC 3164 (BSD) or RFC 5424 (told from each line's first
    ``DIAGNOSED_LINE`` characters: a prefix is short)."""
    shown = [text[:DIAGNOSED_LINE] for text in head[:20] if text.strip()]
    if not shown:
        return None
    kinds = (("RFC 5424", _RFC5424, _RFC5424_SED), ("RFC 3164", _BSD, _BSD_SED))
    found = next((k for k in kinds if all(k[1].match(text) for text in shown)), None)
    if found is None:
        return None
    kind, prefix, sed = found
    first = prefix.match(shown[0])
    assert first is not None
    message = shown[0][first.end() :].strip()
    said = f"1: syslog lines ({kind}: {shown[0][: first.end()].strip()!r} before each message), not a layout verify reads"
    if _CLOCK_FIRST.fullmatch(message):  # no host in the message: the syslog HOSTNAME is it
        host = (
            r'<\d+>1 \S+ (?<host>\S+) \S+ \S+ \S+ (?:-|(?:\[(?:[^\]"\\]|"(?:[^"\\]|\\.)*")*\])+) '
            if kind == "RFC 5424"
            else r"(?:<\d+>)?(?:\w{3} [ \d]\d \S+|\S+) (?<host>\S+) [^\s:\[]+(?:\[\d+\])?: "
        )
        return (
            f"{said} as it is, the message a clock then an event ({message[:40]!r}), its host the "
            f"syslog HOSTNAME: --regex '{host}(?<clock>{{[^{{}}]*}}) +(?<event>.*)' reads it"
        )
    if message.startswith("{"):
        what, out = "a JSON event", "LOG.jsonl"
    elif _RECORD.fullmatch(message):
        what, out = "GoVector's HOST CLOCK [EVENT]", "LOG"
    else:  # no record verify reads (the clock in structured data: the reader's error says so)
        return None
    return f"{said}: its messages ({what}) alone are a log: sed -E '{sed}' {named} > {out}, and verify {out}"


def list_clock(head: list[str], named: str) -> str | None:
    """A clock written as a JSON list of counts beside its host's name (``n0 [1,0,2]``), the event
    after it or on the next line."""
    shown = [text for text in head if text.strip()]
    found = _LISTED.fullmatch(shown[0]) if shown else None
    if found is None:
        return None
    one_line = found.group(3) is not None
    clocks: dict[str, list[list[int]]] = {}
    for text in shown if one_line else shown[::2]:
        record = _LISTED.fullmatch(text)
        if record is None:
            break
        clocks.setdefault(record.group(1), []).append(json.loads(f"[{record.group(2)}]"))
    width = len(clocks[found.group(1)][0])
    names = _order(clocks, width) or [f"NAME{p}" for p in range(width)]
    lines = "" if one_line else "i % 2 or "
    sub = (
        "import json, re, sys; names = sys.argv[1:]; [print(l if "
        f'{lines}not re.match(r"\\S+ \\[", l) else re.sub(r"^(\\S+) (\\[[\\d, ]*\\])", lambda m: '
        'm.group(1) + " " + json.dumps(dict(zip(names, json.loads(m.group(2)), strict=True))), l, count=1), '
        'end="") for i, l in enumerate(sys.stdin)]'
    )
    guessed = (
        "here as each host's own entry shows them, rising by one a record, which verify checks; "
        "a NAMEp where the first lines show no host"
        if not all(name.startswith("NAME") for name in names)
        else "which the first lines do not show: give them"
    )
    return (
        f"1: the clock {'[' + found.group(2) + ']'!r} is a list of counts by position beside the host "
        f'{found.group(1)!r}: verify reads a clock as host names to counts ({{"{found.group(1)}": …}}), and '
        "which position is which host the log does not say; with the names in the positions' order "
        f"({guessed}): python3 -c '{sub}' {' '.join(map(shlex.quote, names))} < {named} > LOG, and verify LOG"
    )


def _order(clocks: dict[str, list[list[int]]], width: int) -> list[str] | None:
    """The hosts at the clock's positions (``NAMEp`` where none is seen), each at the one position
    that counts its own records (1, 2, … from its first); None when a host has no such position, or
    more, or shares it with another."""
    at: dict[int, str] = {}
    for host, seen in clocks.items():
        own = [p for p in range(width) if all(len(c) == width and c[p] == k for k, c in enumerate(seen, 1))]
        if len(own) != 1 or own[0] in at:
            return None
        at[own[0]] = host
    return [at.get(p, f"NAME{p}") for p in range(width)]
