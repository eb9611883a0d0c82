"""``verify`` of a trace that ends early says INCOMPLETE, never VIOLATION for what is only missing.

A run cut short (a participant killed between its messages and their events' batch) leaves events
that later clocks prove happened but the trace lacks: ``verify`` judges by the clock proof alone
(audit/cut.py, every process a suspect), as ``run`` does knowing who sent no final status. A
violation proven among the events present stands. A last line cut mid-write ends the log early:
INCOMPLETE naming the line; a bad line with more after it stays unreadable (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from test_monitor_cut import RUN, WHOLE, ev, lost_after

from mutexlab.audit.foreign import verify_log
from mutexlab.trace import TraceError


def written(tmp_path: Path, events: list[dict], tail: bytes = b"") -> Path:
    path = tmp_path / "cut.trace"
    path.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in events) + tail)
    return path


def test_a_sender_cut_after_its_messages_left_is_incomplete_naming_it(tmp_path):
    verdict = verify_log(written(tmp_path, lost_after("node-2", 1)))
    assert verdict.status == "INCOMPLETE" and verdict.exit_code == 3, verdict.render()
    assert [v.rule for v in verdict.violations if v.kind == "undecided"] == ["audit-incomplete"] * 2
    assert "node-2's events end at its clock 1, others know it at 4" in verdict.render()


def test_a_holder_whose_exit_was_lost_is_not_two_holders(tmp_path):
    """node-2 entered knowing node-1's exit, which the trace lacks: not judged, exit 3."""
    verdict = verify_log(written(tmp_path, lost_after("node-1", 7)))
    assert verdict.exit_code == 3, verdict.render()
    assert "not judged (capacity:" in verdict.render()
    assert "the trace of node-1 is cut short" in verdict.render()


def test_an_overlap_proven_among_the_events_present_is_still_a_violation(tmp_path):
    """node-2 entered knowing nothing of node-1, which held: node-1's lost exit came after its
    clock 2, so it cannot have come before node-2's enter. VIOLATION; only the receipt without its
    send (which knows the lost part) is not judged."""
    events = [
        RUN,
        ev("request", "node-1", {"node-1": 1}, resource="cs"),
        ev("enter", "node-1", {"node-1": 2}, resource="cs"),
        ev("request", "node-2", {"node-2": 1}, resource="cs"),
        ev("enter", "node-2", {"node-2": 2}, resource="cs"),
        ev("recv", "node-2", {"node-1": 3, "node-2": 3}, type="REQUEST", **{"from": "node-1"}, id="node-1#1"),
    ]
    verdict = verify_log(written(tmp_path, events))
    assert verdict.exit_code == 1 and [v.rule for v in verdict.safety] == ["capacity"], verdict.render()
    assert "not judged (recv-without-send:" in verdict.render()


def test_the_whole_trace_is_still_safe(tmp_path):
    assert verify_log(written(tmp_path, WHOLE)).status == "SAFE"


def test_a_last_line_cut_mid_write_is_incomplete_naming_it(tmp_path):
    for tail in (b'{"event":"enter","pid":"node-1","vc":{"node-', b'{"event":"state","x":"\xc3'):
        path = written(tmp_path, WHOLE, tail)
        done = subprocess.run(
            [sys.executable, "-m", "mutexlab", "verify", str(path)], capture_output=True, text=True
        )
        assert done.returncode == 3, done.stdout + done.stderr
        assert "[line-cut-off] line 22, the last, is cut off mid-write" in done.stdout, done.stdout


def test_a_bad_line_in_the_middle_or_ended_by_its_newline_is_unreadable(tmp_path):
    for events, tail in (
        (WHOLE[:5], b'{"event":"enter","pid":"no\n' + json.dumps(WHOLE[5]).encode() + b"\n"),
        (WHOLE, b'{"event":"enter","pid":"no\n'),
        (WHOLE, b"garbage"),  # no object's start: not a cut
    ):
        path = written(tmp_path, events, tail)
        done = subprocess.run(
            [sys.executable, "-m", "mutexlab", "verify", str(path)], capture_output=True, text=True
        )
        assert done.returncode == 2 and "not JSON" in done.stderr, done.stdout + done.stderr


def test_a_clock_free_logs_last_line_cut_mid_write_is_incomplete_too(tmp_path):
    lines = [json.dumps({k: v for k, v in e.items() if k != "vc"}) for e in WHOLE]
    lines[0] = json.dumps({**RUN, "format": "jsonl"})
    path = tmp_path / "cut.log"
    path.write_text("\n".join(lines) + '\n{"event":"enter","pid":"node-1","reso')
    verdict = verify_log(path)
    assert verdict.exit_code == 3 and [v.rule for v in verdict.violations] == ["line-cut-off"], (
        verdict.render()
    )
    path.write_text("\n".join(lines[:5]) + '\n{"event":"ent\n' + "\n".join(lines[5:]) + "\n")
    with pytest.raises(TraceError, match="cut.log:6: not JSON"):
        verify_log(path)
