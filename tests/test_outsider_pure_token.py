"""Two outsiders in styles the others do not use: tests/outsiders/bees_pure.py (every decision a
pure function of a NamedTuple view returning (changes, effects) tuples; Lamport's queue as a heapq
for the flowers) and tests/outsiders/elves_ledger_token.py (one ledger token, Suzuki–Kasami, every
field an Enum). Each correct file passes; each one-line bug is a finding; a configuration outside
the statement is refused by the problem, whatever the solution's ``make_setup`` forgot."""

from __future__ import annotations

import pytest
from outsider_edits import OUTSIDERS, said

BEES = ("-P", "2", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
ELVES = ("--pins", "2", "--poison", "3", "--hamsters", "2-2", "--contracts", "3")


def copied(tmp_path, fixture: str, *edit: tuple[str, str], name: str = ""):
    """``fixture`` copied under ``tmp_path`` (as ``name``.py when given: a variant is a file of
    its own), each (old, new) of ``edit`` made."""
    text = (OUTSIDERS / fixture).read_text()
    for old, new in edit:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / (f"{name}.py" if name else fixture)
    path.write_text(text)
    return path


def test_the_pure_bees_pass_and_their_tie_break_bug_is_found_and_replays(cli, tmp_path):
    path = copied(tmp_path, "bees_pure.py")
    done = cli("check", "bees", "-a", path, *BEES[:1], "3", *BEES[2:], "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    broken = copied(
        tmp_path, "bees_pure.py", ("MINE_WINS_TIES = False", "MINE_WINS_TIES = True"), name="ties"
    )
    ce = tmp_path / "ce.json"
    done = cli("check", "bees", "-a", broken, *BEES, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: flower (capacity 1) held by bee-1×1, bee-2×1" in done.stdout, said(done)
    done = cli("replay", ce, "-a", broken)
    assert done.returncode == 1 and "[capacity] flower (capacity 1)" in done.stdout, said(done)


@pytest.mark.parametrize("command", ["check", "simulate"])
def test_cocoons_not_a_multiple_of_eggs_is_refused_by_the_problem(cli, tmp_path, command):
    """bees_pure.py's make_setup never checks that cocoons is a multiple of eggs, as the statement
    says. Before: the problem took the configuration, and `check` called the solution wrong
    (VIOLATION too-few-eggs: 6 eggs owed where a bee lays all of its eggs on one reed), exit 1."""
    path = copied(tmp_path, "bees_pure.py")
    done = cli(command, "bees", "-a", path, "-P", "3", "-T", "2", "-K", "1", "--eggs", "2", "--cocoons", "3")
    assert done.returncode == 2, said(done)
    assert "cocoons per reed (3) must be a multiple of eggs per bee (2)" in done.stderr, said(done)


def test_the_ledger_token_elves_pass_and_their_poison_slack_is_found(cli, tmp_path):
    path = copied(tmp_path, "elves_ledger_token.py")
    done = cli("check", "elves", "-a", path, *ELVES)
    assert done.returncode == 0 and "PASS — every reachable world checked" in done.stdout, said(done)
    done = cli("simulate", "elves", "-a", path, "--seed", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    broken = copied(tmp_path, "elves_ledger_token.py", ("SLACK = 0", "SLACK = 1"), name="slack")
    ce = tmp_path / "ce.json"
    done = cli("check", "elves", "-a", broken, *ELVES, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: poison (capacity 3) held by elf-1×2, elf-2×2" in done.stdout, said(done)
    done = cli("replay", ce, "-a", broken)
    assert done.returncode == 1 and "[capacity] poison (capacity 3)" in done.stdout, said(done)


def test_a_configuration_that_could_never_finish_is_refused_though_make_setup_skips_town(cli, tmp_path):
    """A variant whose make_setup reads ``pins_per_elf`` itself and gives ``town`` the rest: more
    pins per elf than the town has. Before: the problem took it (only ``town`` refused it), and
    `simulate` ran to a stall (exit 3), `check` to its memory limit (4 GB, exit 3)."""
    path = copied(
        tmp_path,
        "elves_ledger_token.py",
        (
            "    params = town(processes, options, seed)",
            "    own = dict(options)\n"
            '    ppe = own.pop("pins_per_elf", 1)\n'
            "    params = town(processes, own, seed)\n"
            '    params["pins_per_elf"] = ppe',
        ),
        name="own_pins",
    )
    done = cli("simulate", "elves", "-a", path, "--pins", "1", "--pins-per-elf", "2")
    assert done.returncode == 2, said(done)
    assert "an elf needs 2 pins but only 1 exist" in done.stderr, said(done)
