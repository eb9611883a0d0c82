"""``mutexlab export TRACE --format shiviz|jsonl [-o FILE]``: a mutexlab trace as another tool's
log, read and written as a stream. ``shiviz``: GoVector's records (ShiViz opens it), the run
header on a line ShiViz skips; ``jsonl``: the events without their clocks. Either reads back with
``mutexlab verify`` to the same verdict. Exit 0 written, 2 when the trace cannot be read (a last
line cut mid-write too: a log of the rest would read as a whole run's) or the file cannot be
written. The log is written to a temporary file beside ``-o`` and renamed once whole: a refusal
half way leaves no partial log (and an older file of that name untouched), nor does SIGKILL (the
watcher removes it)."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import nullcontext, suppress
from pathlib import Path
from typing import Any

from .. import watcher
from ..audit.shiviz import write_shiviz
from ..trace import TraceError, parse_events
from .common import fail
from .registry import Command

EXPORTS = ("shiviz", "jsonl")


def arguments(p) -> None:
    p.add_argument("trace", help="a JSON Lines trace written by simulate, replay, run or the monitor")
    p.add_argument(
        "--format",
        choices=EXPORTS,
        default="shiviz",
        help="shiviz (default: a GoVector-style log for ShiViz) or jsonl (clock-free JSON Lines)",
    )
    p.add_argument("-o", "--output", metavar="FILE", help="where to write the log (default: standard output)")


def _clock_free(events, out) -> int:
    """The events without their clocks; the run header says ``"format": "jsonl"`` (what ``verify``
    tells the format by)."""
    written = 0
    for event in events:
        line = {k: v for k, v in event.items() if k not in ("vc", "_line")}
        if event["event"] == "run":
            line["format"] = "jsonl"
        else:
            written += 1
        out.write(json.dumps(line, separators=(",", ":")) + "\n")
    return written


def run(args) -> int:
    if args.output and Path(args.output).resolve() == Path(args.trace).resolve():
        return fail(f"the log would overwrite its own trace {args.trace}; choose another name with -o")
    write = write_shiviz if args.format == "shiviz" else _clock_free
    partial = None  # the log being written, renamed to --output only once whole
    watched = None  # its name, while the watcher would remove it
    try:
        with open(args.trace, "rb") as source:
            out: Any = nullcontext(sys.stdout)
            if args.output:
                target = Path(args.output)
                watcher.start()  # running before the file is made: told of it at once
                fd, partial = tempfile.mkstemp(
                    prefix=f".{target.name}.", suffix=".partial", dir=target.parent
                )
                watched = partial
                watcher.watch_file(partial)  # removed by the watcher if this process is SIGKILLed
                out = open(fd, "w", encoding="utf-8")  # noqa: SIM115 - closed by the with below
            with out as handle:
                cut: list[str] = []  # a last line cut mid-write: no whole trace to convert
                written = write(parse_events(source, args.trace, cut), handle)
                if cut:
                    raise TraceError(
                        f"{args.trace}: {cut[0]}: export converts a whole trace, and a log of its "
                        f"first part would read as a whole run's (`mutexlab verify {args.trace}` "
                        "judges what it holds: INCOMPLETE)"
                    )
        if partial is not None:
            os.replace(partial, args.output)
            partial = None
    except TraceError as exc:
        message = str(exc)
        return fail(message if message.startswith(args.trace) else f"{args.trace}: {message}")
    except OSError as exc:
        reading = exc.filename == args.trace
        return fail(
            f"cannot {'read' if reading else 'write'} {args.trace if reading else args.output}: {exc.strerror or exc}"
        )
    finally:
        if partial is not None:  # refused or failed: no partial log is left behind
            with suppress(OSError):
                os.unlink(partial)
        if watched is not None:  # renamed or removed: no longer the watcher's
            watcher.unwatch_file(watched)
    if args.output:
        print(f"{args.format} log written to {args.output} ({written:,} events)")
    return 0


COMMAND = Command(
    "export",
    "write a trace as a ShiViz log or as clock-free JSON Lines",
    """Write a mutexlab trace as a GoVector-style log that ShiViz opens (--format shiviz, the default) or as
    clock-free JSON Lines (--format jsonl). mutexlab verify judges either exactly as it judges the trace.
    Exit 2 when the trace cannot be read or the log cannot be written.""",
    run,
    arguments,
)
