"""Solutions written from the docs alone (tests/outsiders/o6_*.py): a waiter for the philosophers,
a k-mutex token carrying a counter of free permits, the elves as a class hierarchy (an abstract
base, the state a ``@property`` with a setter), the bees taking every input in one ``match`` with
a frozen, slotted dataclass in their state, and a coordinator whose GRANT carries a queue
that its receiver keeps and changes in place. Each passes, and the bug its constant plants is
found with a counterexample that replays."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said


def _copy(tmp_path, name):
    path = tmp_path / name
    shutil.copy(OUTSIDERS / name, path)
    return path


@pytest.mark.parametrize(
    "fixture, algorithm, problem, size, bug, found",
    [
        (
            "o6_phil_waiter.py",
            "o6-waiter",
            "philosophers",
            ("-N", "3"),
            ("ONE_FORK = False", "ONE_FORK = True"),
            "VIOLATION — capacity: fork:",
        ),
        (
            "o6_kmutex_token_counter.py",
            "o6-k-token-counter",
            "kmutex",
            ("-N", "3", "-k", "2"),
            ("FORGET_PERMIT = False", "FORGET_PERMIT = True"),
            "VIOLATION — capacity: cs (capacity 2)",
        ),
        (
            "o6_elves_abc.py",
            "o6-elves-abc",
            "elves",
            ("-N", "2", "--pins", "1", "--poison", "10"),
            ("LAX_PINS = False", "LAX_PINS = True"),
            "VIOLATION — capacity: pins (capacity 1)",
        ),
        (
            "o6_bees_match.py",
            "o6-bees-match",
            "bees",
            ("-P", "2", "-T", "2"),
            ("EAGER = False", "EAGER = True"),
            "VIOLATION — capacity: flower (capacity 1)",
        ),
    ],
)
def test_a_solution_passes_and_its_planted_bug_is_found_and_replays(
    cli, tmp_path, fixture, algorithm, problem, size, bug, found
):
    path = _copy(tmp_path, fixture)
    done = cli("check", problem, "-a", path, *size)
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    done = cli("simulate", problem, "-a", path, *size, "--seed", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    broken, ce = edited(tmp_path, fixture, algorithm, "o6", "broken", bug), tmp_path / "ce.json"
    done = cli("check", problem, "-a", broken, *size, "--counterexample", ce)
    assert done.returncode == 1 and found in done.stdout and "replay reproduces it: yes" in done.stdout, said(
        done
    )
    done = cli("replay", ce, "-a", broken)
    assert done.returncode == 1 and "VIOLATION" in done.stdout, said(done)


def test_a_received_message_kept_and_changed_in_place_changes_its_own_world_only(cli, tmp_path):
    """o6_handoff.py keeps the GRANT it was let in with and pops the next node from its queue. A
    message is frozen, not what its list holds; check shared one message object between worlds
    (and between the copies it takes a step again on), so the pop of one world reached the next.
    Before: ``VIOLATION — error: node-2 exit: node-2 is not deterministic``, exit 1."""
    path = _copy(tmp_path, "o6_handoff.py")
    done = cli("check", "mutex", "-a", path, "-N", "3")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
    done = cli("simulate", "mutex", "-a", path, "-N", "4", "-M", "2", "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


def test_a_sent_message_changed_afterwards_is_a_deadlock_that_replays(cli, tmp_path):
    """SHORTCUT appends a late REQUEST to the GRANT the coordinator sent last: over the wire its
    receiver never sees it, and the asker waits for ever. Before: check found the deadlock but its
    counterexample did not replay (``node-1 is not deterministic``: the coordinator's copies shared
    the one GRANT, each appending to it)."""
    path = edited(
        tmp_path, "o6_handoff.py", "o6-handoff", "o6", "shortcut", ("SHORTCUT = False", "SHORTCUT = True")
    )
    ce = tmp_path / "ce.json"
    done = cli("check", "mutex", "-a", path, "-N", "3", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — deadlock" in done.stdout, said(done)
    assert "replay reproduces it: yes" in done.stdout, said(done)
    done = cli("replay", ce, "-a", path)
    assert done.returncode == 1 and "DEADLOCK: nothing can move; waiting: node-3 for cs: " in done.stdout, (
        said(done)
    )


def test_a_counter_kept_in_a_closure_is_named_by_the_attribute_holding_it(cli, tmp_path):
    """The stamps drawn from a closure (``self.stamp = stamper()``, a ``nonlocal`` count): every
    copy of the process shares the one function, so check's worlds shared its count. Before: named
    not deterministic as "a handler reading random numbers, the time or anything outside its
    process", which this node does not do."""
    closure = (
        "class HandoffNode(ClassicNode):",
        "def stamper():\n    count = 0\n\n    def next_stamp():\n        nonlocal count\n"
        "        count += 1\n        return count\n\n    return next_stamp\n\n\nclass HandoffNode(ClassicNode):",
    )
    path = edited(
        tmp_path,
        "o6_handoff.py",
        "o6-handoff",
        "o6",
        "closure",
        closure,
        (
            "super().__init__(pid, n, requests, clock)",
            "super().__init__(pid, n, requests, clock)\n        self.stamp = stamper()",
        ),
        ("ts=self.clock.tick()", "ts=self.stamp()"),
    )
    ce = tmp_path / "ce.json"
    done = cli("check", "mutex", "-a", path, "-N", "3", "--counterexample", ce)
    says = "(its attribute stamp holds a function keeping variables of its own, a closure every copy"
    assert done.returncode == 1 and "is not deterministic" in done.stdout and says in done.stdout, said(done)
    done = cli("replay", ce, "-a", path)
    assert done.returncode == 1 and says in done.stdout, said(done)


def test_the_default_snapshot_keeps_a_message_holding_a_list_by_its_fields(cli, tmp_path):
    """Without a snapshot() of its own the node's kept GRANT (a list in it) is frozen by value, as
    a dataclass is. Before: exit 2, ``unhashable type: 'list'`` at a line of pydantic's."""
    path = edited(
        tmp_path, "o6_handoff.py", "o6-handoff", "o6", "default", ("def snapshot(self)", "def _mine(self)")
    )
    done = cli("check", "mutex", "-a", path, "-N", "3")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)


def test_a_coordinator_elected_from_a_set_of_names_at_the_first_request_is_named(cli, tmp_path):
    """o5_roster_central.py electing ``next(iter(names))`` when a node first asks, not when it is
    built: every node of one interpreter agrees, processes started anew (compose, exec) do not.
    Before: ``PASS`` — a handler's reading of a set's order was compared nowhere."""
    path = edited(
        tmp_path,
        "o5_roster_central.py",
        "o5-roster-central",
        "o6",
        "lazy",
        ('ELECTION = "sorted"', 'ELECTION = "first"'),
        ("self.boss = ROSTER[elect(names)]", "self.names, self.boss = names, 0  # elected when I first ask"),
        (
            "        return [Send(self.boss, Ask(",
            "        self.boss = self.boss or ROSTER[elect(self.names)]\n        return [Send(self.boss, Ask(",
        ),
    )
    done = cli("check", "mutex", "-a", path, "-N", "3")
    assert done.returncode == 1 and "VIOLATION — interpreter: what node-1's first steps" in done.stdout, said(
        done
    )
    assert "or takes their first steps" in done.stdout and "nothing searched" in done.stdout, said(done)


def test_a_message_holding_a_set_of_names_is_the_same_in_every_interpreter(cli, tmp_path):
    """central.py's REQUEST carrying a frozenset of strings: its JSON lists them in each
    interpreter's order, but the message is one value (decoded, the same set). Before: the first
    steps compared by the message's JSON, ``VIOLATION — interpreter``, nothing searched."""
    central = Path(__file__).resolve().parents[1] / "examples" / "protocols" / "central.py"
    tags = 'frozenset({"alpha", "beta", "gamma", "delta", "epsilon", "zeta"})'
    text = central.read_text().replace(
        '    type: Literal["REQUEST"] = "REQUEST"\n',
        '    type: Literal["REQUEST"] = "REQUEST"\n    tags: frozenset[str] = frozenset()\n',
    )
    text = text.replace(
        "Request(sender=self.pid, ts=self.clock.tick())",
        f"Request(sender=self.pid, ts=self.clock.tick(), tags={tags})",
    )
    assert tags in text, "central.py changed: the edit above no longer applies"
    path = tmp_path / "central_tagged.py"
    path.write_text(text)
    done = cli("check", "mutex", "-a", path, "-N", "2", "--requests", "1")
    assert done.returncode == 0 and "verdict:      PASS" in done.stdout, said(done)
