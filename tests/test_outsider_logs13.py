"""``mutexlab verify`` on logs other programs write (tests/outlogs/o13-*): a k-mutex desk's log from
Go's ``log/slog`` JSON handler (time, level and a ``message`` beside each event, a run header giving
the capacity), and a log saved as one JSON array written over several lines (``[{…},`` first). A
correct one SAFE, a broken one a finding naming the lines, an unreadable one an error naming what
it is; never a traceback, never the wrong reader's error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from outsider_edits import said

OUTLOGS = Path(__file__).resolve().parent / "outlogs"
SLOG = OUTLOGS / "o13-slog-kmutex.jsonl"


def test_a_slog_desk_of_two_permits_is_safe_and_a_third_permit_too_early_is_found(cli, tmp_path):
    done = cli("verify", SLOG, *(f for w in ("w1", "w2", "w3") for f in ("--expect-entries", f"{w}=1")))
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    assert "events: enter 3, exit 3, recv 7, request 3, send 7" in done.stdout, said(done)
    # the desk hands w3 a permit as its ask arrives, before w1 gives one back: three inside
    lines = SLOG.read_text().splitlines(keepends=True)
    back = next(i for i, line in enumerate(lines) if '"message":"back in"' in line)
    early = lines[:]
    early[back], early[back + 1] = lines[back + 1], lines[back]
    path = tmp_path / "early.jsonl"
    path.write_text("".join(early))
    done = cli("verify", path)
    assert done.returncode == 1 and "JSON Lines log: VIOLATION" in done.stdout, said(done)
    assert "cs (capacity 2) held by w1 (1 unit, line 14), w2 (1 unit, line 16), w3 (1 unit, line 22)" in (
        done.stdout
    ), said(done)


EVENTS = [
    {"event": "request", "resource": "cs", "pid": "w1"},
    {"event": "enter", "resource": "cs", "pid": "w1"},
    {"event": "exit", "resource": "cs", "pid": "w1"},
]


@pytest.mark.parametrize("opening", ["[", "[ ", "  ["], ids=["tight", "spaced", "indented"])
@pytest.mark.parametrize("fmt", [None, "jsonl", "mutexlab"])
def test_a_json_array_over_several_lines_is_named_so_by_every_reader(cli, tmp_path, opening, fmt):
    """``[{"event": …},`` then one event a line, ``]`` last. Before: the auto-detection took the
    ``[`` for a logger's stamp and said `not a record of GoVector's regex`; with --format jsonl,
    `another event starts at column 2 (writers sharing one output …)`. Now every reader says the
    file is one JSON document, an array of events, and how to write it one a line."""
    log = tmp_path / "saved.json"
    body = ",\n ".join(json.dumps(e) for e in EVENTS)
    log.write_text(f"{opening}{body}]\n")
    done = cli("verify", log, *(["--format", fmt] if fmt else []))
    assert done.returncode == 2, said(done)
    assert "saved.json:1: not JSON (" in done.stderr, said(done)
    assert "the file is one JSON document over several lines, not JSON Lines" in done.stderr, said(done)
    assert "an array of events" in done.stderr and "jq -c '.[]' FILE" in done.stderr, said(done)
    assert "GoVector" not in done.stderr and "another event starts" not in done.stderr, said(done)


def test_a_loggers_bracketed_stamp_is_still_a_regex_record(cli, tmp_path):
    """``[info]`` or ``[04:00:00.001]`` first is a logger's stamp, not an array: read as records."""
    log = tmp_path / "stamped.log"
    log.write_text("[info] rank 0 starts\n")
    done = cli("verify", log)
    assert done.returncode == 2 and "not a record of GoVector's regex" in done.stderr, said(done)
    assert "an array of events" not in done.stderr, said(done)
