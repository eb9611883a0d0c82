"""test --mpi's note on a run with no state read knows a --regex's state groups however they are
spelled: the rank's matcher (the ``regex`` module) takes ``(?<state_X>…)`` as well as ``(?P<…>``."""

import pytest

from mutexlab.commands import mpitest
from mutexlab.director.judge import UNFINISHED


@pytest.mark.parametrize("named", ["?P<", "?<"])
def test_a_regex_with_state_groups_is_not_told_to_add_them(named):
    pattern = f"({named}enter>in)|({named}exit>out)|({named}state_DONE>all done)"
    note = mpitest.unreported(UNFINISHED, [{"event": "enter", "pid": "1"}], "deadlock", pattern)
    assert note is not None and "though --regex reads states (DONE)" in note, note


def test_a_regex_without_state_groups_is_told_how_to_read_them():
    note = mpitest.unreported(UNFINISHED, [], "deadlock", "(?<enter>in)|(?<exit>out)")
    assert note is not None and "give --regex groups state_NAME" in note, note
