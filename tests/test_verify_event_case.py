"""An event kind the audit reads, written in another case (``Enter``, ``EXIT``), makes a log
unreadable, exit 2 naming the line and the kind meant: read as written it would be an event of
no meaning, and two overlapping holders passed SAFE (docs/trace-format.md). The lower-case log
is the violation it shows; a ShiViz log's keywords stay any case (docs/verify-any-log.md)."""

from __future__ import annotations

import json

import pytest

HEADER = {"event": "run", "pid": "run", "processes": {"1": "a", "2": "b"}, "capacities": {"cs": 1}}


def overlapping(enter: str, exit_: str, clocks: bool) -> list[dict]:
    """a and b hold cs at once, neither's exit before the other's enter."""
    events = [
        {"event": enter, "pid": "a", "resource": "cs"},
        {"event": enter, "pid": "b", "resource": "cs"},
        {"event": exit_, "pid": "a", "resource": "cs"},
        {"event": exit_, "pid": "b", "resource": "cs"},
    ]
    if not clocks:
        return events
    for e, own in zip(events, (1, 1, 2, 2), strict=True):
        e.update(t=own, vc={e["pid"]: own})
    return [HEADER, *events]


def write(tmp_path, events: list[dict]) -> str:
    path = tmp_path / "mixed.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(path)


@pytest.mark.parametrize("clocks", [True, False], ids=["trace", "clock-free"])
@pytest.mark.parametrize(("enter", "exit_"), [("Enter", "EXIT"), ("ENTER", "Exit")])
def test_a_kind_the_audit_reads_in_another_case_is_refused(cli, tmp_path, clocks, enter, exit_):
    ran = cli("verify", write(tmp_path, overlapping(enter, exit_, clocks)))
    assert ran.returncode == 2, ran.stdout + ran.stderr  # before: SAFE, exit 0, nothing entered
    assert (
        f"mixed.log:{2 if clocks else 1}: the event kind {enter!r} is 'enter' in another case" in ran.stderr
    )
    assert "SAFE" not in ran.stdout


@pytest.mark.parametrize("clocks", [True, False], ids=["trace", "clock-free"])
def test_the_same_log_in_lower_case_is_the_violation(cli, tmp_path, clocks):
    ran = cli("verify", write(tmp_path, overlapping("enter", "exit", clocks)))
    assert ran.returncode == 1 and "[capacity] cs (capacity 1) held by a" in ran.stdout, (
        ran.stdout + ran.stderr
    )
