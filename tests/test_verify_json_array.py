"""A log saved as one JSON array on one line (``json.dumps(events)``) is named so, with how to
write it as JSON Lines, by both readers (mutexlab's trace and the clock-free JSON Lines); it was
only "an event must be a JSON object, not list"."""

from __future__ import annotations

import json

import pytest

EVENTS = [
    {"event": "run", "pid": "run", "t": 0},
    {"event": "enter", "pid": "a", "resource": "cs", "t": 1},
    {"event": "exit", "pid": "a", "resource": "cs", "t": 2},
]


@pytest.mark.parametrize("events", [EVENTS, EVENTS[1:2]], ids=["three", "one"])
@pytest.mark.parametrize("fmt", [None, "jsonl", "mutexlab"])
def test_a_log_saved_as_one_array_on_one_line_is_named_so(cli, tmp_path, events, fmt):
    log = tmp_path / "saved.log"
    log.write_text(json.dumps(events) + "\n")
    ran = cli("verify", log, *(["--format", fmt] if fmt else []))
    assert ran.returncode == 2, ran.stdout + ran.stderr
    n = len(events)
    assert (
        f"saved.log:1: the line is a JSON array of {n} event{'s' if n != 1 else ''}, not one event"
        in ran.stderr
    )
    assert "jq -c '.[]' FILE" in ran.stderr


def test_an_array_of_other_things_is_still_no_event(cli, tmp_path):
    log = tmp_path / "numbers.log"
    log.write_text("[1, 2, 3]\n")
    ran = cli("verify", log)
    assert ran.returncode == 2 and "an event must be a JSON object, not list" in ran.stderr, ran.stderr
