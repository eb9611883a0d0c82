"""``mutexlab verify FILE [--algorithm FILE]``: exit 0 SAFE, 1 VIOLATION, 2 unreadable trace, 3
INCOMPLETE (see ``audit.verdict``). FILE is a mutexlab trace, a ShiViz / GoVector log or clock-free
JSON Lines (``audit.foreign``, docs/verify-any-log.md). A trace of an algorithm nobody here declares
(a user's file not named with ``--algorithm``) is at best INCOMPLETE: its invariants were not checked."""

from __future__ import annotations

from ..audit.foreign import FORMATS, parse_capacities, verify_log
from ..audit.workload import parse_expected
from ..setups import ConfigError
from ..trace import TraceError
from .common import add_json_argument, fail, print_json, stdout_to_devnull
from .flags import add_algorithm_argument, disagreement, named_algorithm
from .registry import Command


def arguments(p) -> None:
    p.add_argument(
        "trace",
        help="a JSON Lines trace written by simulate, replay, run or the monitor, or another system's "
        "log (ShiViz / GoVector, clock-free JSON Lines)",
    )
    add_log_arguments(p)
    add_json_argument(p, "verdict")
    add_algorithm_argument(p, "the trace")


def add_log_arguments(p) -> None:
    """The flags that say how to read a log (``verify`` and ``report``)."""
    p.add_argument(
        "--format",
        choices=FORMATS,
        default="auto",
        help="mutexlab (a trace with clocks and a run header), shiviz (GoVector's records), jsonl "
        "(mutexlab's events without clocks); auto (default) tells them apart",
    )
    p.add_argument(
        "--capacity",
        action="append",
        default=[],
        metavar="RESOURCE=K",
        help="a foreign log's resource capacity (repeatable; 'prefix:*' and '*' patterns; default 1 each)",
    )
    p.add_argument(
        "--regex",
        metavar="R",
        help="a ShiViz log's record regex with the groups host, clock, event, JavaScript syntax "
        "(default: the log's first line when it is one, else GoVector's)",
    )
    p.add_argument(
        "--expect-entries",
        action="append",
        default=[],
        metavar="[HOST=]N",
        help="a foreign log's workload: every process (N) or HOST enters N times in all; fewer is "
        "INCOMPLETE (repeatable; without it the workload is not checked, and the verdict says so)",
    )
    p.set_defaults(unknown_hint=one_log)


def one_log(args, unknown: list[str]) -> str:
    """``verify p0.log p1.log``: one log a run, said so with how to make one of a process's files
    each (argparse says only "unrecognized arguments")."""
    files = [token for token in unknown if not token.startswith("-")]
    if not files:
        return ""
    return (
        f"; {args.command} reads one log of a run, not {len(files) + 1} files: put the processes' files "
        "together first (`cat p0.log p1.log > run.log`, each file's lines kept in order; lines stamped "
        "with times: `sort -m`, never plain `sort`), or give each file on its own"
    )


def log_options(args) -> dict:
    """The keyword arguments of ``verify_log`` / ``read_window`` from the flags; TraceError."""
    return {
        "fmt": args.format,
        "capacities": parse_capacities(args.capacity),
        "regex": args.regex,
        "expected": parse_expected(args.expect_entries),
    }


def run(args) -> int:
    try:
        found = named_algorithm(args)
        verdict = verify_log(args.trace, **log_options(args))
    except (ConfigError, TraceError) as exc:
        return fail(str(exc))
    wrong = disagreement(found, verdict.algorithm, args.algorithm, args.trace)
    if wrong:
        return fail(wrong)
    try:
        if args.json:
            print_json(verdict.as_dict())
        else:
            print(verdict.render())
    except BrokenPipeError:  # `verify LOG | head -1`: the verdict stands, read whole or not
        stdout_to_devnull()
    return verdict.exit_code


COMMAND = Command(
    "verify",
    "audit a trace or another system's log by happened-before",
    """Decide a trace: capacities by happened-before plus the algorithm's invariants. Exit 0 SAFE (safe and
    finished), 1 VIOLATION (a safety property is broken in what the trace shows), 2 when the trace cannot
    be read, 3 INCOMPLETE (no safety violation, but the trace ends unfinished: cut short or stalled, a
    trace alone cannot tell; or its algorithm is not known here: give --algorithm). Reads mutexlab's
    traces, ShiViz / GoVector logs and clock-free JSON Lines (docs/verify-any-log.md); a foreign log's
    workload is checked only when stated (--expect-entries).""",
    run,
    arguments,
)
