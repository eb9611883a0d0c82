"""``commands/testtext.py``: the line ``mutexlab test`` prints of a search without a finding."""

from __future__ import annotations

from types import SimpleNamespace

from mutexlab.commands import testtext
from mutexlab.commands.testtext import text


def test_a_bound_covered_says_what_a_jumped_clock_left_out():
    """A systematic search whose budget ended within a deviation bound, where a rank's timeout loop
    jumped the clock: the schedules delivering a message before that deadline never ran, so the
    bound's "every schedule with at most 1 deviation" says what it did not cover, as a PASS does
    (before: the bound alone, an overstatement)."""
    outcome = {
        "strategy": "systematic", "runs": 60, "steps": 900, "seconds": 2.0, "problem": "mutex",
        "program": ["./ra"], "nodes": 3, "verdict": "INCOMPLETE", "undecided_runs": 0,
        "incomplete_runs": 0, "deviations_covered": 1,
    }  # fmt: skip
    tested = SimpleNamespace(finding=None, searched=SimpleNamespace(exhausted=False))
    args = SimpleNamespace(max_steps=1000)
    assert text(outcome, tested, args)[0].endswith("the rest not searched in full")
    testtext.coverage(outcome, 4)
    (line,) = text(outcome, tested, args)
    assert "no finding within deviation bound 1" in line, line
    assert line.endswith(f"the rest not searched in full; not covered: {testtext.NOT_COVERED}"), line
