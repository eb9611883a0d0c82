"""The node protocol's lines, as mutexlab reads them: what a node may write, checked and bounded.

A node answers every input line with zero or more output lines and then ``{"type":"done"}``.
Outputs: ``send`` (``to`` a peer's id, ``body`` any JSON), ``enter`` / ``exit`` (``resource``,
optional ``units``), ``state`` (``state``), ``event`` (a scenario event: ``event`` and its own
fields) and ``pause`` (the node goes on when a later ``wake`` step says). Anything else, a line that is not a JSON object, or one longer than ``MAX_LINE`` bytes is
the node's fault: a ``NodeFault`` naming the node and the line.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from ..limits import BOM, MAX_DEPTH, InputError, loads, loads_shallow
from ..words import PROGRAM_FAULT

MAX_LINE = 65_536  # bytes of one line a node writes, newline excluded
MAX_OUTPUTS = 1_000  # lines a node may write in answer to one input (a flood beyond)
OUTPUTS = frozenset({"send", "enter", "exit", "state", "event", "pause", "done", "log"})
# Events a node may not report as its own ``event``: mutexlab writes these itself.
START = "start"  # the rule of a program that cannot be started at all
RESERVED_EVENTS = frozenset({"run", "send", "recv", "enter", "exit", "request", "state"})
STDOUT_IS_PROTOCOL = (
    'standard output carries protocol lines only: debugging goes to standard error or a {"type":"log"} line'
)


@dataclass
class NodeFault(Exception):
    """What a node did wrong (``rule``: crashed, stalled, garbage, flood, protocol), or could
    not do (``start``: the program cannot be started, bad input)."""

    rule: str
    node: int
    message: str
    line: str | None = None  # the offending line, shortened
    fields: dict[str, Any] = field(default_factory=dict)

    # Where it happened, for a driver that names a handler's line (protocol.raised_at): in what the
    # program did, not in mutexlab's code that noticed it.
    raised_where: ClassVar[str] = PROGRAM_FAULT

    def __str__(self) -> str:
        return self.message + (f": {self.line}" if self.line is not None else "")


def shorten(raw: bytes | str, limit: int = 200) -> str:
    """``raw`` fit to be shown on a terminal: at most ``limit`` characters, every control
    character (a NUL, an escape sequence, the newline of a line) written as ``\\xNN``."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    cut = text if len(text) <= limit else text[:limit]
    shown = "".join(
        c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else f"\\u{ord(c):04x}" for c in cut
    )
    return shown if cut is text else shown + f"… ({len(text)} characters)"


def encode(message: dict[str, Any]) -> bytes:
    """One input line for a node."""
    return json.dumps(message, separators=(",", ":"), sort_keys=True).encode() + b"\n"


# The words every fault of a line written after a done line shares (``process.py`` writes them,
# ``judge.wrote_late`` reads a finding by them, a recorded one too).
PAST_DONE = "its done line (answering"

# The words of a kept node that ended after its last answer (``process.gone``): seen by its end,
# which a run shows only when its end waits a moment (``judge.ended_unasked`` reads them).
UNASKED = "with nothing asked of it"

# The rule of a node that ended, or closed its output, while something was still asked of it
# (``process.py`` raises it; ``runner.replay`` waits for a recorded one's end).
CRASHED = "crashed"


def parse(raw: bytes, node: int, peers: frozenset[int]) -> dict[str, Any]:
    """The output line ``raw`` of ``node`` (without its newline) as a checked dict; NodeFault."""

    def fault(why: str) -> NodeFault:
        return NodeFault("garbage", node, f"node {node} wrote {why}", shorten(raw))

    if raw.startswith(BOM):  # json.loads of bytes would skip it silently, on any line
        raise fault(
            "a line that starts with a UTF-8 byte order mark (bytes EF BB BF): JSON sent over a "
            "stream carries none (RFC 8259, 8.1); write UTF-8 without it"
        )
    try:  # nesting is checked (limits.loads) only where it could be deep: 64 brackets or more
        line = loads(raw) if raw.count(b"[") + raw.count(b"{") >= 64 else loads_shallow(raw)
    except InputError as exc:  # NaN, Infinity (Python's json writes them): JSON has none; too deep
        if "nested" in str(exc):  # JSON, but past mutexlab's limit (limits.MAX_DEPTH)
            raise fault(
                f"a line mutexlab does not take: {exc} (at most {MAX_DEPTH} arrays and objects inside each other)"
            ) from None
        if "digits" in str(exc):  # JSON, but past Python's limit
            raise fault(f"a line mutexlab does not take: {exc}") from None
        if "UTF-8" in str(exc):  # no text at all
            raise fault(f"a line of {exc}") from None
        raise fault(f"a line that is not JSON: {exc}") from None
    except json.JSONDecodeError as exc:
        raise fault(f"a line that is not JSON ({_why_not_json(exc)})") from None
    except (ValueError, RecursionError):
        raise fault(f"a line that is not JSON ({STDOUT_IS_PROTOCOL})") from None
    if not isinstance(line, dict):
        raise fault("a line that is not a JSON object")
    if (b"\\u" in raw or b"\xed" in raw) and _lone_surrogate(line):
        raise fault(
            "a line that is not JSON text: a lone surrogate (\\ud800–\\udfff without its pair, as a"
            " UTF-16 string cut in the middle of a character leaves) is no Unicode character"
        )
    kind = line.get("type")
    if kind not in OUTPUTS:
        raise fault(f"a line of unknown type {kind!r} (expected one of {', '.join(sorted(OUTPUTS))})")
    if kind == "send":
        to = line.get("to")
        if isinstance(to, bool) or not isinstance(to, int) or to not in peers:
            what = (
                "a string: an id is a JSON number"
                if isinstance(to, str)
                else "written with a fraction or an exponent: an id is a whole number, as 2"
                if isinstance(to, float)
                else "not one of them"
            )
            raise fault(f"a send to {json.dumps(to)} ({what}); its peers are {sorted(peers)}")
        if "body" not in line:
            raise fault("a send without a body")
    elif kind in ("enter", "exit"):
        units = line.get("units", 1)
        if not isinstance(line.get("resource"), str) or not line["resource"]:
            raise fault(f"an {kind} without a resource name")
        if isinstance(units, bool) or not isinstance(units, int) or units < 1:
            how = "written with a fraction or an exponent: " if isinstance(units, float) else ""
            raise fault(
                f"an {kind} whose units are {json.dumps(units)} ({how}units are a whole number ≥ 1, as 2)"
            )
    elif kind == "state":
        if not isinstance(line.get("state"), str):
            raise fault("a state line without a state name")
    elif kind == "done":
        reinit = line.get("reinit")
        if reinit is not None and not isinstance(reinit, bool):
            raise fault(
                f"a done whose reinit is {json.dumps(reinit)}: it is true or false (a JSON boolean); "
                "anything else would silently start the node anew for every run"
            )
    elif kind == "event":
        name = line.get("event")
        if not isinstance(name, str) or not name or name in RESERVED_EVENTS:
            raise fault(f"an event named {name!r} (a name of its own, not one of {sorted(RESERVED_EVENTS)})")
    return line


def flood(node: int, kind: str, line: bytes) -> NodeFault:
    """The fault of a node writing more than MAX_OUTPUTS lines in answer to one input (``kind``)."""
    return NodeFault(
        "flood",
        node,
        f"node {node} wrote more than {MAX_OUTPUTS} lines in answer to one input ({kind})",
        shorten(line) if line.strip() else "(a blank line)",
    )


def no_protocol_line(raw: bytes, node: int, peers: frozenset[int]) -> str:
    """ "" when the first line of ``raw`` is a protocol line (or there is none); else what it is,
    in the words of its ``garbage`` fault, for a late line's fault (a bare "bye" after a done)."""
    if not (first := raw.strip().split(b"\n", 1)[0].strip()):
        return ""
    try:
        parse(first, node, peers)
    except NodeFault as fault:
        return "; nor is it a protocol line: " + fault.message.removeprefix(f"node {node} wrote ")
    return ""


def unended(buffer: bytes) -> str:
    """What a node that wrote ``buffer`` and no newline after it wrote, in words."""
    if b"\r" in buffer:  # classic Mac OS line ends: the lines are there, their ends are not newlines
        return "lines ended with a carriage return (\\r) alone, no newline (every line ends with \\n; \\r\\n does too)"
    return "part of a line and no newline (every line ends with one; is its output flushed?)"


def said_nothing(buffer: bytes, node: int, peers: frozenset[int]) -> tuple[bytes, list[dict[str, Any]]]:
    """``buffer`` (what a node wrote, unread) without the whole lines at its front that say
    nothing — blank lines and ``log`` lines, which a node may write anywhere, after its ``done``
    too — and those log lines, parsed. What is left starts with a line that says something (or is
    no protocol line), or with a line not ended yet."""
    logs: list[dict[str, Any]] = []
    while (cut := buffer.find(b"\n")) >= 0:
        if line := buffer[:cut].strip():
            try:
                said = parse(line, node, peers)
            except NodeFault:
                break  # a fault when it is read
            if said["type"] != "log":
                break
            logs.append(said)
        buffer = buffer[cut + 1 :]
    return buffer, logs


VALUE_STARTS = frozenset('{["-0123456789tfn')  # how a JSON value can begin
# An object printed in a language's own notation, its "type" key spelt as no JSON spells it:
# Python's print(dict) ('type': …), JavaScript's console.log(object) (type: …), Ruby's Hash#to_s
# and Perl's Data::Dumper ("type" => …), Java's Map.toString() (type=…), Go's fmt.Println(map),
# Erlang's io:format("~p") of a map (#{<<"type">> => …}) or a proplist ([{type,…}]), Elixir's
# inspect (%{"type" => …}, %{type: …})
NATIVE = re.compile(
    r"""^[#%]?\{(?:.*?[{,])?\s*(?:['"]type['"]\s*=>|:type\s*=>|'type'\s*:|type\s*[:=]|<<"type">>\s*=>)"""
    r"""|^map\[(?:.*\s)?type:|^\[\{(?:<<"type">>|type)\s*,"""
)
NATIVE_WHY = (
    "an object in its language's own notation, not JSON (Python's print(dict), JavaScript's "
    "console.log(object), Ruby's Hash#to_s, Perl's Data::Dumper, Java's Map.toString(), Go's "
    "fmt.Println(map), Erlang's io:format(\"~p\"), Elixir's inspect): encode a protocol line with a JSON library (json.dumps, JSON.stringify, "
    "to_json, encoding/json) — double quotes, true, false, null; debugging goes to standard error"
)

# PHP's own warning or error, printed on standard output where display_errors is on: the CLI's
# default when no php.ini turns it off (php -n, a container's PHP without one), as the program
# runs on ("\nWarning: Undefined array key "seq" in /srv/node.php on line 59\n")
PHP_DIAGNOSTIC = re.compile(
    r"(?:PHP )?(?:Warning|Notice|Deprecated|Strict Standards|(?:Recoverable )?Fatal error|"
    r"Parse error):\s.*\s(?:on line \d+|in \S+:\d+)$"
)
PHP_WHY = (
    "PHP's own warning or error, which display_errors prints on standard output — the CLI's "
    "default where no php.ini turns it off, as under php -n or in a container's PHP: mend what "
    "it says, or send PHP's messages to standard error with php -d display_errors=stderr"
)


def _why_not_json(exc: json.JSONDecodeError) -> str:
    """What a line that starts as a JSON object but is none most likely is: two objects written
    on one line, or the first line of one written over several (pretty-printed); anything else
    is text that is no protocol line at all (a banner, a debugging print)."""
    text = exc.doc.strip()
    if text.startswith("{") and exc.doc[exc.pos : exc.pos + 1] == "'":
        return (
            f"a single quote at character {exc.pos}: JSON's keys and strings are in double quotes — "
            "a dict printed as it is (Python's print(d)) is no JSON: write json.dumps(d)"
        )
    if exc.msg.startswith("Invalid control character") and exc.pos < len(exc.doc):
        code = ord(exc.doc[exc.pos])
        return (
            f"a control character (\\x{code:02x}) inside a string, at character {exc.pos}: JSON "
            f"writes it escaped (\\u{code:04x})"
        )
    if text.startswith("{"):
        if exc.msg == "Extra data" and exc.doc[exc.pos :].lstrip()[:1] not in VALUE_STARTS:
            return (
                f"text after its JSON object, from character {exc.pos} ({exc.doc[exc.pos :][:1]!r}): "
                "one object per line, each ended by a newline and nothing else"
            )
        if exc.msg == "Extra data":
            return (
                f"two JSON values on one line, the first ending at character {exc.pos}: "
                "one object per line, each ended by a newline"
            )
        if exc.pos >= len(exc.doc.rstrip()):
            return (
                "a JSON object that does not end on its line: one object per line — "
                "pretty-printed JSON, written over several lines, is not"
            )
    if PHP_DIAGNOSTIC.match(text):
        return PHP_WHY
    return NATIVE_WHY if NATIVE.search(text) else STDOUT_IS_PROTOCOL


def _lone_surrogate(line: dict[str, Any]) -> bool:
    """Whether a string of ``line`` (a key or a value) holds half a UTF-16 pair, which JSON's
    ``\\ud800`` escapes (and Python's json, reading bytes, CESU-8) let through but no UTF-8 text
    can hold: the trace, the answer's digest and the wire could not write it."""
    try:
        json.dumps(line, ensure_ascii=False).encode()
    except UnicodeEncodeError:
        return True
    return False
