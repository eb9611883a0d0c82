"""``mutexlab verify`` on a log of any format: mutexlab's own trace, a ShiViz / GoVector log
(shiviz.py), or clock-free JSON Lines (clockfree.py) — decided by the same audit, streamed
(docs/verify-any-log.md).

A foreign log becomes trace events (the run header first, every event with its vector clock and
file line) that ``stream.StreamAudit`` takes exactly as it takes a trace file: bounded, settled
capacity-1 intervals forgotten, when the file is in a causal order; otherwise read again keeping
every interval, as ``verdict.verify_file`` does.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from itertools import chain
from pathlib import Path

from .. import limits
from ..keywords import KEYWORDS, opens_array
from ..limits import unique_keys, whole_number
from ..trace import TraceError, bounded_lines
from .clockfree import read_clockfree
from .clocks import ClockForgotten, consistent
from .clocktext import plain
from .exclusive import InexactStream
from .layouts import explain
from .merge import Stalled, merged
from .shiviz import is_regex_line, read_shiviz
from .stream import StreamAudit
from .verdict import Verdict, feed_events, line_cut_off, verify_file
from .workload import Workload

FORMATS = ("auto", "mutexlab", "shiviz", "jsonl")
SUBJECTS = {"shiviz": "ShiViz log", "jsonl": "JSON Lines log"}


def detect(path: str | Path) -> str:
    """The format of the log at ``path``, from its first lines: ``shiviz`` when the first is a
    regex or no JSON (records of a regex; broken JSON, a line starting ``{`` or ``"``, is a trace's); ``jsonl`` when the first event has no ``vc``, or the
    run header says ``"format": "jsonl"`` (``export --format jsonl`` writes it); else ``mutexlab``
    (whose reader names what is wrong with a file that is none of these)."""
    try:
        with open(path, "rb") as handle:
            lines = (raw for raw in bounded_lines(handle, str(path), "a line") if raw.strip())
            first = next(lines, None)
            if first is None:
                return "mutexlab"
            try:
                text = plain(first.decode("utf-8")).strip()  # `jq -C`'s colours: JSON still
            except UnicodeDecodeError:
                return "mutexlab"
            if is_regex_line(text):
                return "shiviz"
            event = _json(text, told=True)
            # broken JSON is a trace's (its reader names the line), and so is an array of objects
            # over several lines (`[{"event": …},`: its reader says so); another `[` that starts no
            # JSON is a logger's stamp (`[04:00:00.001] rank=0 …`, spdlog's `[info]`): a regex's records
            if event is None and not text.startswith(("{", '"')) and not opens_array(text):
                return "shiviz"
    except OSError as exc:
        if os.path.isdir(path):
            not_a_log(path)  # a directory: named with how to make one log of its files
        raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from None
    if not isinstance(event, dict):
        return "mutexlab"
    if event.get("event") == "run":
        return "jsonl" if event.get("format") == "jsonl" else "mutexlab"
    return "mutexlab" if "vc" in event else "jsonl"


# A compressed file's first bytes, its kind and the command that writes what it holds to stdout.
_PACKED = (
    (b"\x1f\x8b", "gzip", "zcat"),
    (b"BZh", "bzip2", "bzcat"),
    (b"\xfd7zXZ\x00", "xz", "xzcat"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstdcat"),
    (b"PK\x03\x04", "zip", "unzip -p"),
)


def not_a_log(path: str | Path) -> None:
    """TraceError when the file at ``path`` is plainly no log nor trace, told by its first 4 KiB:
    compressed (gzip, bzip2, xz, zstd, zip: the command that unpacks it), an HTML page (mutexlab's
    own report named as such: verify the trace it was drawn from), or other binary bytes (a NUL
    in text that is not UTF-16, whose reader says how to convert it). Otherwise None, the readers
    naming whatever else is wrong. A directory (GoVector's per-host files, a process's file each)
    is named so, with how to put its files together into one log."""
    named = "FILE" if str(path).startswith("/proc/self/fd/") else shlex.quote(str(path))  # a pipe's copy
    if os.path.isdir(path):
        raise TraceError(
            f"{path}: a directory, not a log: verify reads one log of a run; put its processes' files "
            f"together first, each file's lines kept in order (GoVector's per-host files: cat {named}/*-Log.txt "
            f"> run.log; a rotated log's, oldest first: cat app.log.2 app.log.1 app.log; lines stamped with "
            f"times: sort -m {named}/*.log, never plain sort), and verify run.log"
        )
    try:
        with open(path, "rb") as handle:
            head = handle.read(4096)
    except OSError:
        return  # the reader names it
    for magic, kind, unpack in _PACKED:
        if head.startswith(magic):
            raise TraceError(
                f"{path}: a {kind}-compressed file, not a log: unpack it first, "
                f"{unpack} {named} | mutexlab verify /dev/stdin"
            )
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if text.startswith((b"<!doctype html", b"<html")):
        if b"<title>mutexlab report" in text:
            raise TraceError(
                f"{path}: an HTML page (mutexlab's report), not a log or trace: verify the trace it "
                "was drawn from, the TRACE of mutexlab report TRACE -o FILE"
            )
        raise TraceError(
            f"{path}: an HTML page, not a log or trace: verify the log itself, not a page showing it"
        )
    if head.startswith(b"\x00") and head.lstrip(b"\x00")[:1] not in (b"", b"\x00"):
        raise TraceError(
            f"{path}: the file starts with {len(head) - len(head.lstrip(bytes(1)))} NUL bytes, then text (a log "
            "truncated while its writer kept writing at its offset, as logrotate's copytruncate leaves "
            f"one): remove them, tr -d '\\000' < {named} > LOG"
        )
    odd, even = head[1::2].count(0), head[0::2].count(0)
    utf16 = head.startswith((b"\xff\xfe", b"\xfe\xff")) or min(odd, even) * 4 < max(odd, even)
    if b"\x00" in head and not utf16:
        raise TraceError(f"{path}: a binary file (NUL bytes in its first 4 KiB), not a log or trace of text")


def _json(text: str, told: bool = False) -> object:
    """``text`` parsed, or None; ``told``: only to tell the format, so a key held twice (which its
    reader refuses, naming it) is no reason to take the line for another format's. A line of more
    members than a reader takes is not parsed (None: its reader refuses it, naming the limit)."""
    if limits.more_members(text, limits.MAX_LINE_MEMBERS):
        return None
    try:
        return json.loads(text, object_pairs_hook=None if told else unique_keys)
    except (ValueError, RecursionError):
        return None


def read_log(
    path: str | Path,
    fmt: str,
    capacities: dict[str, int] | None = None,
    regex: str | None = None,
    bounded: bool = False,
    cut: list[str] | None = None,
) -> Iterator[dict]:
    """The events of a foreign log (``shiviz`` or ``jsonl``), the run header first. ``bounded``: what
    a causal order lets it forget is forgotten (``InexactStream`` when the order is not causal).
    ``cut`` (``jsonl``): a last line cut mid-write ends the events, named there."""
    with open(path, "rb") as handle:
        if fmt == "shiviz":
            yield from one_spelling(
                read_shiviz(handle, str(path), capacities, regex, prune=bounded), str(path)
            )
        elif fmt == "jsonl":
            yield from one_spelling(read_clockfree(handle, str(path), capacities, cut), str(path))
        else:
            raise ValueError(f"not a foreign format: {fmt}")


SPELLINGS_KEPT = 100_000  # resources whose spelling is compared: beyond, the rest are not


def one_spelling(events: Iterator[dict], source: str) -> Iterator[dict]:
    """``events``, TraceError at the first resource named in another case than before (``enter CS``,
    then ``exit cs``): resource names are case-sensitive, so the two would be two resources — an
    exit of one nobody holds, the other held to the end — where the log meant one."""
    seen: dict[str, tuple[str, int]] = {}  # casefolded → (as first written, its line)
    for event in events:
        resource = event.get("resource")
        if isinstance(resource, str) and event["event"] in KEYWORDS:
            first = seen.get(resource.casefold())
            if first is None and len(seen) < SPELLINGS_KEPT:
                seen[resource.casefold()] = (resource, event.get("_line", 0))
            elif first is not None and first[0] != resource:
                raise TraceError(
                    f"{source}:{event.get('_line', 0)}: resource {resource!r} is {first[0]!r} (line "
                    f"{first[1]}) in another case: resource names are case-sensitive (the keywords are "
                    "not), so these would be two resources; write one the same way throughout"
                )
        yield event


def verify_log(
    path: str | Path,
    fmt: str = "auto",
    capacities: dict[str, int] | None = None,
    regex: str | None = None,
    seer: Callable[[], Callable[[dict], None]] | None = None,
    expected: dict[str, int] | None = None,
) -> Verdict:
    """The verdict of the log at ``path`` in format ``fmt`` (``auto``: ``detect``). ``capacities``
    (resource → K, patterns as in a run header), ``regex`` and ``expected`` (the entries each
    process should have made, ``workload.py``) apply to foreign logs only; ``seer`` as in
    ``verify_file``. TraceError (naming the file, and the line where there is one) when it cannot
    be read. A pipe (``/dev/stdin``) is read once, into a temporary file (``spooled``)."""
    if fmt not in FORMATS:
        raise TraceError(f"unknown log format {fmt!r}; choose one of: {', '.join(FORMATS)}")
    with spooled(path) as readable:
        return _verify_log(readable, fmt, capacities, regex, seer, expected)


def _verify_log(
    path: str | Path,
    fmt: str,
    capacities: dict[str, int] | None,
    regex: str | None,
    seer: Callable[[], Callable[[dict], None]] | None,
    expected: dict[str, int] | None,
) -> Verdict:
    not_a_log(path)
    try:
        return _read_log(path, fmt, capacities, regex, seer, expected)
    except TraceError as exc:  # a layout verify does not read, named with how to convert it
        told = explain(path, str(exc))
        if told is None:
            raise
        raise TraceError(told) from None


def _read_log(
    path: str | Path,
    fmt: str,
    capacities: dict[str, int] | None,
    regex: str | None,
    seer: Callable[[], Callable[[dict], None]] | None,
    expected: dict[str, int] | None,
) -> Verdict:
    if fmt == "auto":
        fmt = detect(path)
    if fmt == "mutexlab":
        foreign = _foreign_flag(path, capacities, regex, expected)
        if foreign is not None and _starts_with_object(path):
            raise TraceError(foreign)
        verdict = verify_file(path, seer)  # a file that is no trace (empty, bytes, no JSON): named
        if foreign is not None:
            raise TraceError(foreign)
        return verdict
    if regex is not None and fmt != "shiviz":
        raise TraceError(f"{path}: --regex is for ShiViz logs, not {fmt}")
    workload = Workload(expected, str(path))
    cut: list[str] = []  # a clock-free log's last line cut mid-write

    def fed(audit: StreamAudit, prune: bool = True) -> StreamAudit:
        see = seer() if seer is not None else None
        workload.restart()
        cut.clear()
        events = read_log(path, fmt, capacities, regex, audit.bounded and prune, cut)
        return feed_events(audit, workload.counted(events), path, see)

    def bounded() -> StreamAudit:
        try:
            return fed(StreamAudit(bounded=True))
        except ClockForgotten:  # a host quiet for long asked for a clock forgotten: keep the clocks
            return fed(StreamAudit(bounded=True), prune=False)

    try:
        audit = bounded()
    except InexactStream:  # not in a causal order: merged, or else keep every interval
        found = _merged(path, fmt, capacities, regex, seer, workload)
        if found is not None:
            return found
        audit = fed(StreamAudit())
    verdict = _judged(audit, path, fmt, workload)
    verdict.violations += [line_cut_off(line) for line in cut]
    return verdict


def _foreign_flag(
    path: str | Path, capacities: dict[str, int] | None, regex: str | None, expected: dict[str, int] | None
) -> str | None:
    """Why a flag for foreign logs does not apply to the mutexlab trace at ``path``, or None."""
    if capacities:
        return f"{path}: a mutexlab trace's run header gives the capacities; --capacity is for foreign logs"
    if regex is not None:
        return f"{path}: --regex is for ShiViz logs, and this is a mutexlab trace"
    if expected:
        return (
            f"{path}: a mutexlab trace's run header states its workload; --expect-entries is for foreign logs"
        )
    return None


def _starts_with_object(path: str | Path) -> bool:
    """Whether the first line of ``path`` that is not blank is a JSON object: a file ``detect``
    calls a trace only because it is no other format (empty, not UTF-8, broken JSON) is no trace a
    foreign flag could be refused for; the trace reader names what is wrong with it instead."""
    with open(path, "rb") as handle:
        first = next((raw for raw in bounded_lines(handle, str(path), "a line") if raw.strip()), None)
    try:
        return first is not None and isinstance(_json(first.decode("utf-8")), dict)
    except UnicodeDecodeError:
        return False


def _judged(audit: StreamAudit, path: str | Path, fmt: str, workload: Workload) -> Verdict:
    try:
        verdict = audit.verdict()
    except TraceError as exc:
        raise TraceError(f"{path}: {exc}") from None
    verdict.subject = verdict.subject or SUBJECTS[fmt]  # a header's problem names it
    return workload.judged(verdict)


def _merged(
    path: str | Path,
    fmt: str,
    capacities: dict[str, int] | None,
    regex: str | None,
    seer: Callable[[], Callable[[dict], None]] | None,
    workload: Workload,
) -> Verdict | None:
    """The verdict of a ShiViz log not in a causal order read as a k-way merge of its hosts' runs
    (``merge.py``), bounded; None when it cannot be, or when it finds a safety violation or the
    log unreadable: which witness (or line) is named first follows the file's order, so the caller
    reads the log again the old way, to name the same ones. (Without a violation the findings are
    sorted by process and resource, whatever the order.)"""
    if fmt != "shiviz" or seer is not None:  # a seer is shown the events in the file's order
        return None
    workload.restart()
    try:
        with ExitStack() as stack:
            records = merged(str(path), capacities, regex, stack)
            run = next(records)
            ids = run["_line"] > 0  # a mutexlab header of its own: checked by ids, as read_shiviz does
            events = one_spelling(
                consistent(chain([run], records), str(path), ids=ids, prune=True), str(path)
            )
            audit = feed_events(StreamAudit(bounded=True), workload.counted(events), path)
        verdict = _judged(audit, path, fmt, workload)
    except (Stalled, InexactStream, TraceError):
        verdict = None
    if verdict is None or not verdict.safe:
        workload.restart()
        return None
    return verdict


@contextmanager
def spooled(path: str | Path) -> Iterator[str | Path]:
    """``path``, or for a pipe, a terminal or a socket (``/dev/stdin``), a temporary copy of what it
    gives: the format is told from the first lines and a log not in a causal order is read twice,
    which a stream would not allow. Copied line by line, each at most ``limits.MAX_LINE`` bytes; an
    error naming the copy names ``path`` instead."""
    try:
        mode = os.stat(path).st_mode
    except OSError:  # the reader names the problem
        mode = stat.S_IFREG
    if not (stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISSOCK(mode)):
        yield path
        return
    fd, name = tempfile.mkstemp(prefix="mutexlab-", suffix=".log")
    os.unlink(name)  # held by its descriptor alone: gone with this process, even SIGKILLed
    copy = f"/proc/self/fd/{fd}"  # opened anew by the readers, each from its start
    handled, previous = _exit_on_sigterm()
    try:
        with open(fd, "wb", closefd=False) as out:
            try:
                with open(path, "rb") as source:
                    copied = 0
                    for line in bounded_lines(source, str(path), "a line"):
                        copied += len(line)
                        if copied > limits.MAX_PIPE_BYTES:
                            raise TraceError(_ENDLESS.format(path=path, limit=limits.MAX_PIPE_BYTES))
                        out.write(line)
            except OSError as exc:
                raise TraceError(f"cannot read {path}: {exc.strerror or exc}") from None
        try:
            yield copy
        except TraceError as exc:
            raise TraceError(str(exc).replace(copy, str(path))) from None
    finally:
        os.close(fd)
        if handled:  # the handler it replaced; None (one not set from Python) as the default
            signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


# Said of a log that never ends and of a large one alike (`zcat` of a big log, as not_a_log
# advises for a compressed one): a file is read without this limit.
_ENDLESS = (
    "{path}: more than {limit:,} bytes came through the pipe without its end "
    "(limits.MAX_PIPE_BYTES): verify judges a whole log, copied first; a log that never ends "
    "(tail -f, a FIFO its writer keeps open) has no verdict: save it to a file (or stop its "
    "writer) and verify that; a log this large, unpacked or written by a program, is read "
    "from a file without this limit (zcat LOG.gz > LOG, then verify LOG)"
)


def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def _exit_on_sigterm() -> tuple[bool, signal.Handlers | Callable | int | None]:
    """While a copy exists, SIGTERM exits through ``finally`` (143), which closes it, as a shell
    reports a process it ended (the copy, nameless, goes with the process anyway). (Whether it was set: never off the
    main thread, where no handler can be; the handler it replaced, to restore.)"""
    if threading.current_thread() is not threading.main_thread():
        return False, None
    return True, signal.signal(signal.SIGTERM, _terminated)


def parse_capacities(pairs: list[str]) -> dict[str, int]:
    """``RESOURCE=K`` pairs (``--capacity``) as a capacities mapping; TraceError for a bad one."""
    capacities: dict[str, int] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        k = _whole(value) if sep and name else None
        if k is None:
            raise TraceError(
                f"--capacity {pair!r}: write RESOURCE=K, K a whole number ≥ 0 (e.g. cs=1, 'reed:*=1')"
            )
        capacities[name] = k
    return capacities


def _whole(text: str) -> int | None:
    """A flag's whole number ≥ 0 in ASCII digits (``limits.whole_number``), or None."""
    try:
        value = whole_number(text)
    except ValueError:
        return None
    return value if value >= 0 and text[:1] not in "+-" else None
