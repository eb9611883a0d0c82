"""An elves solution in a style mutexlab's examples do not use (tests/outsiders/elves_mayor_arbiter.py:
the mayor keeps the whole ledger in a frozen dataclass and hands out work with its tools), and
what its author may get wrong. Never PASS on a bug, never exit 4 ("a bug in mutexlab")."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said

SMALL = ("-N", "3", "--pins", "1", "--contracts", "3")


def variant(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """elves_mayor_arbiter.py with each (old, new) of ``edits`` made, saved as ``name``.py."""
    return edited(where, "elves_mayor_arbiter.py", "elves-mayor-arbiter", "elves-mayor", name, *edits)


def test_the_mayor_arbiter_passes_check_and_simulates_safe(cli, tmp_path):
    path = tmp_path / "elves_mayor_arbiter.py"
    shutil.copy(OUTSIDERS / "elves_mayor_arbiter.py", path)
    done = cli("check", "elves", "-a", path, *SMALL)
    assert done.returncode == 0 and "PASS — every reachable world checked" in done.stdout, said(done)
    done = cli("simulate", "elves", "-a", path, "--seed", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


# The mayor's Rules (a dataclass, not frozen) given to every elf too, and changed by an elf.
SHARED = [
    (
        "        protocols[pid] = Elf(pid)\n",
        "        protocols[pid] = Elf(pid)\n        protocols[pid].rules = rules\n",
    ),
    (
        "        j, self.job = self.job, None\n",
        "        j, self.job = self.job, None\n        self.rules.pins_per_elf = 0\n",
    ),
]


@pytest.mark.parametrize("command", ["check", "simulate"])
def test_one_writable_object_held_by_two_processes_is_refused(cli, tmp_path, command):
    """Before: check said PASS (each process's state kept apart, the elf's change never reached
    the mayor) while simulate found `elf-2 took 0 pins` (one object in one OS process): two
    verdicts on two programs. Now the setup is refused, exit 2, naming both holders."""
    path = variant(tmp_path, "shared", *SHARED)
    done = cli(command, "elves", "-a", path, *SMALL)
    assert done.returncode == 2, said(done)
    assert "mayor.rules and elf-1.rules are one Rules: processes share no state" in done.stderr, said(done)


def test_a_mayor_that_hands_one_contract_out_forever_gets_a_short_table(cli, tmp_path):
    """It never marks a contract taken: contract 1.1 is done again and again until the event
    limit. The audit finds it (exit 1); the table's cell shows the round's first numbers and how
    many more, the audit's `contract-twice` the first 10 takings. Before, at the default limit: a
    table line of 24,000 contract numbers (49 KB) and an audit line of every taking (1 MB)."""
    path = variant(tmp_path, "twice", ("            taken=self.ledger.taken | {i},\n", ""))
    done = cli("simulate", "elves", "-a", path, "-N", "2", "--contracts", "2", "--max-events", "4000")
    assert done.returncode == 1 and "[contract-twice] contract:1.1 was taken" in done.stdout, said(done)
    assert max(len(line) for line in done.stdout.splitlines()) < 1000, said(done)[:3000]
    assert "more]" in done.stdout


# One object of another module's class held by every process, never set by a handler: a logger,
# a namespace of settings. Shared read-only, as over RabbitMQ where each process builds its own.
READ_ONLY = [
    (
        "        protocols[pid] = Elf(pid)\n",
        "        protocols[pid] = Elf(pid)\n"
        "        protocols[pid].log = __import__('logging').getLogger('elves-mayor')\n"
        "        protocols[pid].settings = __import__('types').SimpleNamespace(verbose=False)\n",
    ),
]


def test_a_shared_logger_or_settings_namespace_is_not_refused(cli, tmp_path):
    """Only an object of the solution's own class whose attributes a handler may set counts as
    shared state; a logging.Logger or a types.SimpleNamespace of settings is not refused."""
    path = variant(tmp_path, "logger", *READ_ONLY)
    done = cli("check", "elves", "-a", path, *SMALL)
    assert done.returncode == 0 and "PASS — every reachable world checked" in done.stdout, said(done)
