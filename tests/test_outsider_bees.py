"""Bees solutions in a style mutexlab's examples do not use (tests/outsiders/bees_hive_keeper.py:
bee-1 also keeps the hive's books in plain dicts, module-level helpers, no type hints), and what
their authors may get wrong. Each must be judged right: a finding for a bug, a named error for a
file that is no solution, never exit 4 ("a bug in mutexlab") and never PASS on a bug."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said

SMALL = ("-P", "3", "-T", "1", "-K", "1", "--eggs", "1", "--cocoons", "2")


def variant(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """bees_hive_keeper.py with each (old, new) of ``edits`` made, saved as ``name``.py."""
    return edited(where, "bees_hive_keeper.py", "bees-hive-keeper", "bees-hive", name, *edits)


def test_the_hive_keeper_passes_check_and_simulates_safe(cli, tmp_path):
    path = tmp_path / "bees_hive_keeper.py"
    shutil.copy(OUTSIDERS / "bees_hive_keeper.py", path)
    done = cli("check", "bees", "-a", path, *SMALL)
    assert done.returncode == 0 and "PASS — every reachable world checked" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


NO_CLOCK = [
    (
        "self.pid, self.n, self.clock = pid, n, LamportClock(clock)",
        "self.pid, self.n, self.t = pid, n, clock",
    ),
    (
        "return cls(sender=self.pid, ts=self.clock.tick(), **kw)",
        "self.t += 1\n        return cls(sender=self.pid, ts=self.t, **kw)",
    ),
    ("(self.state, self.clock.time, self.laid", "(self.state, self.t, self.laid"),
]


@pytest.mark.parametrize("command", ["check", "simulate"])
def test_a_bee_without_a_clock_is_refused_by_every_command_naming_the_file(cli, tmp_path, command):
    """Before: check passed it (it reads only the snapshot) and simulate died inside mutexlab,
    exit 4 (AttributeError: 'HiveBee' object has no attribute 'clock')."""
    path = variant(tmp_path, "noclock", *NO_CLOCK)
    done = cli(command, "bees", "-a", path, *SMALL)
    assert done.returncode == 2, said(done)
    assert "internal error" not in done.stderr
    assert f"{path}: bee-1, a HiveBee ({path}), has no `clock`" in done.stderr, said(done)


# The keeper's bees send their last LEAVE_REED to pid 0, which this setup does not have.
NO_PID = [
    (
        "        return [Send(KEEPER, self.msg(cls, **kw))]",
        "        return [Send(KEEPER if cls is not LeaveReed else 0, self.msg(cls, **kw))]",
    )
]


def test_a_send_to_no_process_names_the_state_as_the_one_the_step_left(cli, tmp_path):
    """The send is found after the handler ran: the state named is the one it left (DEAD), not
    the one ``exit`` was taken in (ON_FLOWER). Before: `…, in state DEAD` beside `bee-2 exit`,
    read as an exit taken in DEAD."""
    path = variant(tmp_path, "nopid", *NO_PID)
    done = cli("check", "bees", "-a", path, *SMALL)
    assert done.returncode == 1, said(done)
    assert (
        "sent LEAVE_REED to process 0, which is not one of this setup's (1, 2, 3), its step leaving it in state DEAD"
        in done.stdout
    ), said(done)


# The keeper raises when a reed is given back while some bee is queued for one (a rare message).
RAISES = [
    (
        '        b["holder"][r] = None\n',
        '        b["holder"][r] = None\n        if b["reed_q"]:\n            b["holder"][r + 10] += 1\n',
    )
]


@pytest.mark.parametrize("command", ["check", "simulate"])
def test_a_raising_handler_is_named_by_the_process_name_its_setup_gives(cli, tmp_path, command):
    """A bee class without a ``name`` of its own: its finding names it ``bee-1``, as its trace and
    the path do, with the line of the file. Before: `process 1 raised KeyError …`."""
    path = variant(tmp_path, "raises", *RAISES)
    args = (
        ("-P", "5", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "2") if command == "simulate" else SMALL
    )
    done = cli(command, "bees", "-a", path, *args)
    assert done.returncode == 1, said(done)
    assert "bee-1 raised KeyError: 1" in done.stdout + done.stderr, said(done)
    assert f"at {path}:" in done.stdout + done.stderr and "process 1 raised" not in done.stdout + done.stderr
