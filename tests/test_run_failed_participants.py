"""``mutexlab run``'s verdict never overstates: a participant that failed makes SAFE incomplete."""

from __future__ import annotations

import io
import json

import pytest

from mutexlab.transport import service
from mutexlab.transport.outcome import run_summary
from mutexlab.transport.spawn import can_fork
from mutexlab.transport.supervisor import EXIT_INTERNAL, EXIT_NO_VERDICT, execute, make_plan, with_failed


def test_a_failed_participant_turns_safe_into_incomplete():
    assert with_failed(0, ["node-2"]) == EXIT_NO_VERDICT == 3


def test_a_violation_or_no_verdict_stays_as_the_monitor_said():
    assert with_failed(1, ["node-2"]) == 1  # the monitor found it: a violation is one
    assert with_failed(3, ["node-2"]) == 3
    assert with_failed(EXIT_INTERNAL, ["node-2"]) == EXIT_INTERNAL


def test_without_failures_the_monitors_code_stands():
    assert [with_failed(code, []) for code in (0, 1, 3, 4)] == [0, 1, 3, 4]


def test_the_json_summary_agrees_with_the_exit_code():
    monitor = {"complete": True, "safe": True, "exit_code": 0, "verdict": "SAFE"}
    summary = run_summary(monitor, with_failed(0, ["node-2"]), ["node-2"])
    assert summary["exit_code"] == 3 and summary["monitor_exit_code"] == 0
    assert summary["status"] == "incomplete" and summary["participants_failed"] == ["node-2"]
    assert summary["complete"] is False and summary["safe"] is False
    assert summary["verdict"].startswith("INCOMPLETE: participants that failed: node-2")
    assert run_summary(monitor, 0, [])["status"] == "safe"
    violated = {"complete": True, "safe": False, "exit_code": 1, "verdict": "VIOLATION"}
    assert run_summary(violated, with_failed(1, ["node-2"]), ["node-2"])["status"] == "violation"


@pytest.mark.broker
def test_run_json_says_incomplete_when_participants_fail_after_a_safe_verdict(
    amqp_url, monkeypatch, tmp_path
):
    """Every participant serves as ever, then exits 1: the monitor says SAFE, the run exits 3, and
    its JSON says so (it said ``safe`` before). The participants are forked from this process
    (spawn.py), so the patched ``serve`` is theirs."""
    if not can_fork():
        pytest.skip("the participants are forked from this process only where fork is available")
    real = service.serve

    def serve_then_fail(role: str) -> int:
        code = real(role)
        return code if role == "monitor" else 1

    monkeypatch.setattr(service, "serve", serve_then_fail)
    plan = make_plan("ricart-agrawala", 2, {"requests": 1}, amqp_url=amqp_url, dwell=0.0, logs=str(tmp_path))
    out = io.StringIO()
    code = execute(plan, json_out=True, out=out)
    summary = json.loads(out.getvalue())
    assert code == 3, summary
    assert summary["exit_code"] == 3 and summary["status"] == "incomplete", summary
    assert summary["safe"] is False and summary["complete"] is False
    assert len(summary["participants_failed"]) == 2
