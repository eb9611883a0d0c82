"""The trace (docs/architecture.md#trace-format): one JSON object per line, the project's observable record.

``Recorder`` keeps one process's vector clock and turns what the process did into trace
events. Both drivers (simulator and RabbitMQ services) use it, so a trace means the same
whatever produced it. The first line of a trace is a ``run`` event (pid ``run``) carrying the
algorithm and its parameters, so ``mutexlab verify`` knows the capacities to check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any, Iterable, Iterator

from .clock import VectorClock


class TraceError(ValueError):
    """A trace that cannot be read (not JSON Lines, or events missing required fields)."""


class Recorder:
    """One process's view for the trace: its name and vector clock.

    Invariant: every event this process records ticks its own vector entry exactly once.
    """

    __slots__ = ("pid", "vc")

    def __init__(self, pid: str) -> None:
        self.pid = pid
        self.vc = VectorClock(pid)

    def send(self, t: float, lamport: int, kind: str, to: str, msg_id: str, body: dict | None = None) -> dict:
        event = {"event": "send", "pid": self.pid, "t": t, "lamport": lamport, "vc": self.vc.tick(),
                 "type": kind, "to": to, "id": msg_id}
        if body is not None:
            event["msg"] = body
        return event

    def recv(self, t: float, lamport: int, kind: str, frm: str, msg_id: str, sender_vc: dict[str, int]) -> dict:
        return {"event": "recv", "pid": self.pid, "t": t, "lamport": lamport, "vc": self.vc.merge(sender_vc),
                "type": kind, "from": frm, "id": msg_id}

    def local(self, event: str, t: float, lamport: int, **fields: Any) -> dict:
        return {"event": event, "pid": self.pid, "t": t, "lamport": lamport, "vc": self.vc.tick(), **fields}


class TraceWriter:
    """Writes events as JSON Lines to a file, or keeps them in memory (``path=None``)."""

    def __init__(self, path: str | Path | None = None, keep: bool = False) -> None:
        self.events: list[dict] | None = [] if (keep or path is None) else None
        self._file: IO[str] | None = open(path, "w", encoding="utf-8") if path is not None else None

    def write(self, event: dict) -> None:
        if self.events is not None:
            self.events.append(event)
        if self._file is not None:
            self._file.write(json.dumps(event, separators=(",", ":")) + "\n")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


REQUIRED = ("event", "pid")


def parse_events(lines: Iterable[str], source: str = "trace") -> Iterator[dict]:
    """Parse JSON Lines; blank lines are skipped; anything else wrong raises TraceError."""
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{source}:{number}: not JSON ({exc.msg})") from None
        if not isinstance(event, dict):
            raise TraceError(f"{source}:{number}: an event must be a JSON object")
        missing = [f for f in REQUIRED if f not in event]
        if missing:
            raise TraceError(f"{source}:{number}: event lacks {', '.join(missing)}")
        if event["event"] != "run" and not isinstance(event.get("vc"), dict):
            raise TraceError(f"{source}:{number}: event lacks its vector clock 'vc'")
        event["_line"] = number
        yield event


def read_trace(path: str | Path) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as handle:
            return list(parse_events(handle, str(path)))
    except OSError as exc:
        raise TraceError(f"cannot read {path}: {exc.strerror}") from None
