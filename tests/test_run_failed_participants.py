"""``mutexlab run``'s verdict never overstates: a participant that failed makes SAFE incomplete."""

from __future__ import annotations

from mutexlab.transport.supervisor import EXIT_INTERNAL, EXIT_NO_VERDICT, with_failed


def test_a_failed_participant_turns_safe_into_incomplete():
    assert with_failed(0, ["node-2"]) == EXIT_NO_VERDICT == 3


def test_a_violation_or_no_verdict_stays_as_the_monitor_said():
    assert with_failed(1, ["node-2"]) == 1  # the monitor found it: a violation is one
    assert with_failed(3, ["node-2"]) == 3
    assert with_failed(EXIT_INTERNAL, ["node-2"]) == EXIT_INTERNAL


def test_without_failures_the_monitors_code_stands():
    assert [with_failed(code, []) for code in (0, 1, 3, 4)] == [0, 1, 3, 4]
