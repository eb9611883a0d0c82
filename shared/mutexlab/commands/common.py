"""Helpers the subcommands share: argument types, errors, JSON output, the common flags.

Every number a flag takes is read by ``count`` or ``real`` (through ``limits.whole_number`` and
``limits.decimal_number``): ASCII digits only, so ``٣``, ``1_0`` and `` 3 `` are refused."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any

from ..limits import decimal_number, whole_number


def count(minimum: int, maximum: int | None = None):
    """An argparse type: a whole number ≥ ``minimum`` (and ≤ ``maximum``), with a clear error otherwise."""

    def parse(text: str) -> int:
        try:
            value = whole_number(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum}, got {value}")
        return value

    parse.__name__ = f"whole number ≥ {minimum}"
    return parse


positive = count(1)
non_negative = count(0)


def real(
    name: str, unit: str, ok: Callable[[float], bool], rule: str, maximum: float | None = None
) -> Callable[[str], float]:
    """An argparse type: a finite number (``{text} is not a number`` + ``unit``; infinities and
    NaN refused) that ``ok`` accepts, else the error ``must be <rule>, got <text>``, and at most
    ``maximum``."""

    def parse(text: str) -> float:
        try:
            value = decimal_number(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number{unit}") from None
        if not math.isfinite(value):
            raise argparse.ArgumentTypeError(f"must be a finite number, got {text}")
        if not ok(value):
            raise argparse.ArgumentTypeError(f"must be {rule}, got {text}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:g}, got {text}")
        return value

    parse.__name__ = name
    return parse


# The largest duration a flag takes (seconds over RabbitMQ, mean message delays in a simulation):
# beyond it a simulated clock loses its precision (sums overflow to inf, then NaN).
MAX_SECONDS = 1e6
MAX_MEGABYTES = 1e9
seconds = real("seconds", " of seconds", lambda v: v >= 0, "≥ 0", MAX_SECONDS)  # a duration, ≥ 0
probability = real("probability", "", lambda v: 0 <= v <= 1, "a probability between 0 and 1")
megabytes = real("megabytes", " of MB", lambda v: v > 0, "> 0", MAX_MEGABYTES)
port_number = count(0, 65535)  # 0: a free one


def cut_short(path: str | None, since: float) -> str:
    """The sentence naming ``path``, the trace a command was writing when Ctrl-C or a signal
    stopped it, so that nobody takes it for more than it is; "" when there is none or it is older
    than ``since`` (a ``time.time()``: the stop came before the run opened it).

    True in every window: a file this process closed with its run ended (``trace.WRITTEN``) holds
    the whole trace; any other may lack the run's last events — and a prefix can read SAFE (the
    last receipts of a run that served everyone), so it is never promised to be judged otherwise:
    it is only said to be no whole run's."""
    if path is None:
        return ""
    from ..trace import WRITTEN  # imported by whoever wrote a trace; not at start-up

    opened, whole = WRITTEN.get(os.path.abspath(path), (-1.0, False))
    try:
        written = opened >= since or os.stat(path).st_mtime >= since
    except OSError:
        return ""
    if not written:
        return ""
    if whole:
        return f"{path} holds the whole trace: the run ended before the interrupt"
    return (
        f"{path} holds the trace up to the interrupt, cut short: it may lack the run's last events "
        f"(`mutexlab verify {path}` judges what it holds, not the whole run)"
    )


def fail(message: str, code: int = 2) -> int:
    print(f"mutexlab: error: {message}", file=sys.stderr)
    return code


def format_number(value: float | None, digits: int = 2) -> str:
    """A measured figure for a summary line or table: ``digits`` decimals, "—" when there is none."""
    return "—" if value is None else f"{value:.{digits}f}"


def print_json(data: Any) -> None:
    """``data`` as JSON every reader loads (``--json``): a float that is not finite (NaN, an
    infinity: no JSON number) is null, a key that is no JSON key (a tuple) its text, like any
    value JSON cannot hold (``default=str``)."""
    json.dump(jsonable(data), sys.stdout, indent=2, sort_keys=False, default=str, allow_nan=False)
    sys.stdout.write("\n")


def jsonable(data: Any) -> Any:
    """``data`` with what strict JSON cannot hold replaced (``print_json``); tuples are lists."""
    if isinstance(data, float):
        return data if math.isfinite(data) else None
    if isinstance(data, dict):
        return {_key(k): jsonable(v) for k, v in data.items()}
    if isinstance(data, list | tuple):
        return [jsonable(v) for v in data]
    return data


def _key(key: Any) -> Any:
    """A dict key JSON writes as it is (a string, a whole or finite number, a bool, None), else its text."""
    if key is None or isinstance(key, str | int) or (isinstance(key, float) and math.isfinite(key)):
        return key
    return str(key)


def add_json_argument(parser, what: str) -> None:
    """``--json``: print ``what`` (the summary, the verdict ...) as one JSON object."""
    parser.add_argument("--json", action="store_true", help=f"print the {what} as one JSON object")


def add_trace_argument(parser) -> None:
    parser.add_argument("--trace", metavar="FILE", help="write the trace (JSON Lines) here")


def add_endless_argument(p, what: str) -> None:
    """``--endless``, for a family with a workload of requests (``check``, ``explore``)."""
    p.add_argument(
        "--endless",
        action="store_true",
        help=f"every node requests forever (instead of --requests): {what}",
    )


def stdout_to_devnull() -> None:
    """Point standard output at /dev/null once its reader has gone (``| head``), so that flushing
    it at exit raises nothing more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no file descriptor (a captured stdout)
        pass


def stopped_json(exc: BaseException, stop: str, alone: str) -> dict:
    """The one JSON shape of a run a stop ended midway, in ``simulate``, ``replay``, ``compare``
    (each row) and ``run`` (docs/exit-codes.md#stopped-json): ``verdict`` ("violation" when the
    trace up to the stop broke safety, else ``alone``: "handler-raised", "rejected-input" or
    "refused"), ``stopped`` (what stopped it, in words), ``seen`` (the safety violations before the
    stop, [] when none) and ``error`` (the stop's message); a handler that raised adds its parts
    (``finding``: "handler-raised", ``process``, ``input``, ``state``, ``exception``, ``where``,
    ``scenario``)."""
    found = seen(exc)
    out = {"verdict": "violation" if found else alone, "stopped": stop, "seen": found, "error": str(exc)}
    parts = getattr(exc, "as_dict", None)  # protocol.HandlerError's
    if callable(parts):
        mine = dict(parts())
        mine["exception"] = mine.pop("error", None)
        out |= mine
    return out


def said_seen(exc: BaseException, stop: str, as_json: bool = False, alone: str | None = None) -> bool:
    """Print the safety violations the run had broken before ``exc`` stopped it (``audit.seen``:
    a stop never hides one), as text or (``as_json``) one JSON object, ``stopped_json``'s — also
    without any when ``alone`` names the stop's own verdict; True when there were any."""
    found = seen(exc)
    if as_json and (found or alone is not None):
        print(json.dumps(stopped_json(exc, stop, alone or "violation"), indent=2))
    elif found:
        print(f"VIOLATION (exit 1), seen before the run stopped ({stop}):", flush=True)
        print("\n".join(f"  {line}" for line in found), flush=True)
    return bool(found)


def seen(exc: BaseException) -> list[str]:
    """What ``audit.seen.note_seen`` put on ``exc`` (read here without importing the audit)."""
    return list(getattr(exc, "seen", None) or [])


def readable(path: str, given: str) -> str:
    """``path`` made absolute (a process may start elsewhere), once it opens for reading;
    ConfigError naming ``given`` (the option) else."""
    from ..setups import ConfigError

    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise ConfigError(f"{given} {path}: {exc.strerror or exc}") from None
    return os.path.abspath(path)
