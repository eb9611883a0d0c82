"""Solutions written from the docs alone (tests/outsiders/o8_*.py), each with the bug a module
constant plants: every command judges both right. Small bounds: the whole file runs in seconds."""

from __future__ import annotations

import copy

from outsider_edits import edited, said


def test_a_node_keeping_its_state_in_slots_is_copied_and_told_apart_whole(cli, tmp_path):
    """o8_kmutex_slots.py keeps its votes in ``__slots__`` of a base class and K in a slot of its
    subclass. Before: check copied only ``__dict__`` — node-1's first request raised
    AttributeError ('KVoter' object has no attribute 'k'), a false finding, and cross-check
    blamed an undeclared reduction; the default snapshot left the slots out too."""
    path = edited(tmp_path, "o8_kmutex_slots.py", "o8-kvoter", "o8", "kvoter")
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "1", "--requests", "1", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    assert "raised" not in done.stdout
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--metrics")
    assert done.returncode == 0 and "cs: messages per entry min 3, max 6" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "--requests", "2", "--seed", "3")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    tie = edited(tmp_path, "o8_kmutex_slots.py", "o8-kvoter", "o8", "tie", ("TIE = 1", "TIE = 0"))
    ce = tmp_path / "tie.json"
    done = cli("check", "kmutex", "-a", tie, "-N", "2", "-k", "1", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — deadlock" in done.stdout, said(done)
    done = cli("replay", ce, "-a", tie)
    assert done.returncode != 0 and "DEADLOCK" in done.stdout, said(done)


def test_the_default_snapshot_holds_a_subclass_s_slots():
    from mutexlab.protocols.kit import ClassicNode

    class Slotted(ClassicNode):
        __slots__ = ("votes", "__secret")

        def __init__(self, pid: int, n: int) -> None:
            super().__init__(pid, n)
            self.votes, self.__secret = 0, "a"

    one, two = Slotted(1, 2), Slotted(1, 2)
    assert one.snapshot() == two.snapshot()
    two.votes = 1
    assert one.snapshot() != two.snapshot()
    twin = copy.deepcopy(two)
    assert twin.votes == 1 and dict(twin.snapshot())["_Slotted__secret"] == "a"
    assert twin.snapshot() == two.snapshot()


def test_a_dispatch_dict_of_partials_bound_to_the_node_follows_each_copy(cli, tmp_path):
    """o8_phil_match.py routes every message through one handler that matches on it and calls the
    routine a dict of ``functools.partial`` (bound to the philosopher) holds. Before: check's copy
    of a world recursed through the bound methods — RecursionError, "internal error (a bug in
    mutexlab)", exit 4. ORDER = "left-first" (no hierarchy) deadlocks."""
    path = edited(tmp_path, "o8_phil_match.py", "o8-keepers", "o8", "keepers")
    done = cli("check", "philosophers", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    left = edited(
        tmp_path,
        "o8_phil_match.py",
        "o8-keepers",
        "o8",
        "left",
        ('ORDER = "low-first"', 'ORDER = "left-first"'),
    )
    ce = tmp_path / "left.json"
    done = cli("check", "philosophers", "-a", left, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — deadlock" in done.stdout, said(done)
    done = cli("replay", ce, "-a", left)
    assert done.returncode != 0 and "DEADLOCK" in done.stdout, said(done)


def test_a_slotted_dataclass_bee_passes_everywhere_and_an_extra_place_is_caught(cli, tmp_path):
    """o8_bees_lamport.py is one ``@dataclass(slots=True)`` bee keeping its peers in dicts keyed
    by pid, Lamport's queue for the flowers. Before: check stopped at once (bee-1 raised
    AttributeError: no attribute 'pid', the copy had no slots), and explore's card answered 500
    (``__class__`` assignment: the layout differs). AHEAD = 1 lets K + 1 bees on the flowers."""
    from mutexlab.explore.session import Config, Session

    path = edited(tmp_path, "o8_bees_lamport.py", "o8-bees-lamport", "o8", "lamport")
    small = ("-P", "3", "-T", "2", "-K", "1", "--eggs", "1", "--cocoons", "1")
    done = cli("check", "bees", "-a", path, *small, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "bees", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    session = Session(Config(str(path), 3, {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1}))
    session.run_to_end(seed=0)
    state = session.state()
    assert state["findings"]["status"] == "end", state["findings"]
    assert ["gone", "{2}"] in state["procs"][0]["fields"], state["procs"][0]
    ahead = edited(
        tmp_path, "o8_bees_lamport.py", "o8-bees-lamport", "o8", "ahead", ("AHEAD = 0", "AHEAD = 1")
    )
    ce = tmp_path / "ahead.json"
    done = cli("check", "bees", "-a", ahead, *small, "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: flower (capacity 1)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", ahead)
    assert done.returncode == 1 and "[capacity] flower (capacity 1)" in done.stdout, said(done)


def test_a_quartermaster_mayor_passes_and_its_planted_bugs_are_findings(cli, tmp_path):
    """o8_elves_quartermaster.py: the mayor hands out contracts and tools from heaps, through a
    dispatch dict of partials that raises on a message it has no routine for. SLACK = 1 hands out
    one unit too many; dropping the RELEASE routine is a raise, reported as a finding. Before: check
    stopped with RecursionError copying the partials, "internal error", exit 4."""
    path = edited(tmp_path, "o8_elves_quartermaster.py", "o8-quartermaster", "o8", "qm")
    done = cli("check", "elves", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "elves", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    slack = edited(
        tmp_path, "o8_elves_quartermaster.py", "o8-quartermaster", "o8", "slack", ("SLACK = 0", "SLACK = 1")
    )
    done = cli("check", "elves", "-a", slack)
    assert done.returncode == 1 and "VIOLATION — capacity: pins (capacity 1)" in done.stdout, said(done)
    lost = edited(
        tmp_path,
        "o8_elves_quartermaster.py",
        "o8-quartermaster",
        "o8",
        "lost",
        ('            "RELEASE": partial(self._release),\n', ""),
    )
    ce = tmp_path / "lost.json"
    done = cli("check", "elves", "-a", lost, "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "mayor raised LookupError: the mayor has no routine for RELEASE" in done.stdout, said(done)
    done = cli("replay", ce, "-a", lost)
    assert done.returncode == 1 and "RAISED: step" in done.stdout, said(done)


def test_a_book_of_pages_with_clock_offsets_passes_and_a_slotted_global_tally_is_named(cli, tmp_path):
    """o8_kmutex_book.py: Lamport's queue for K, a dict of slotted dataclass pages keyed by pid,
    declaring clock offsets. LATE = 3 (a request stamped 3 or later enters at once) is found with
    the reduction as without. COUNT = True appends each exit to a module-global object of a
    ``@dataclass(slots=True)`` class. Before: the shared-state check looked into an object's
    ``__dict__`` only — check PASS and simulate SAFE, exit 0, though over RabbitMQ each process
    has its own; a plain dataclass there was named."""
    path = edited(tmp_path, "o8_kmutex_book.py", "o8-book", "o8", "book")
    done = cli("check", "kmutex", "-a", path, "-N", "2", "-k", "1", "--requests", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    assert "applied:      clock-offset normalisation — declared by BookNode" in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "--seed", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    late = edited(tmp_path, "o8_kmutex_book.py", "o8-book", "o8", "late", ("LATE = 0", "LATE = 3"))
    done = cli("check", "kmutex", "-a", late, "-N", "2", "-k", "1", "--requests", "3", "--cross-check")
    assert done.returncode == 1 and "VIOLATION (capacity: cs (capacity 1)" in done.stdout, said(done)
    assert "agrees" in done.stdout, said(done)
    count = edited(tmp_path, "o8_kmutex_book.py", "o8-book", "o8", "count", ("COUNT = False", "COUNT = True"))
    named = f"the global TALLY's attribute seen of {count} is a mutable global of the module"
    done = cli("check", "kmutex", "-a", count, "-N", "2", "-k", "1", "--requests", "2")
    assert done.returncode == 1 and named in done.stdout, said(done)
    done = cli("simulate", "kmutex", "-a", count, "-N", "2", "-k", "1", "--requests", "2")
    assert done.returncode == 1 and named in done.stderr, said(done)


def test_a_handler_calling_sys_exit_is_a_finding_not_a_silent_exit(cli, tmp_path):
    """STRICT = True calls ``sys.exit(3)`` on a late vote (K = 2 of 3: the third vote comes after
    the node has left and asked again). Before: SystemExit passed through every guard — check and
    simulate ended with exit 3 and nothing printed (3: "a limit stopped it, nothing proven"), and
    run said INCOMPLETE; now it is the handler's finding, exit 1, with the line of the file."""
    path = edited(
        tmp_path, "o8_kmutex_slots.py", "o8-kvoter", "o8", "strict", ("STRICT = False", "STRICT = True")
    )
    ce = tmp_path / "strict.json"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--requests", "2", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "raised SystemExit: 3 at " in done.stdout and "(in _on_vote), taking VOTE" in done.stdout, said(
        done
    )
    done = cli("replay", ce, "-a", path)
    assert done.returncode == 1 and "RAISED: step" in done.stdout and "SystemExit: 3" in done.stdout, said(
        done
    )
    done = cli("simulate", "kmutex", "-a", path, "-N", "3", "-k", "2", "--requests", "3", "--seed", "1")
    assert done.returncode == 1 and "raised SystemExit: 3" in done.stderr, said(done)


def test_neighbours_asking_each_other_pass_and_a_pid_only_priority_shares_a_fork(cli, tmp_path):
    """o8_phil_neighbours.py: Ricart–Agrawala between the two neighbours, moods kept in a dict by
    pid. PRIORITY = "pid" drops the timestamp from the priority: a neighbour that answered while
    thinking answers again when hungry and outranked, and two neighbours hold one fork."""
    path = edited(tmp_path, "o8_phil_neighbours.py", "o8-neighbourly", "o8", "neighbourly")
    done = cli("check", "philosophers", "-a", path, "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("simulate", "philosophers", "-a", path, "--seed", "1")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    pid = edited(
        tmp_path,
        "o8_phil_neighbours.py",
        "o8-neighbourly",
        "o8",
        "pid",
        ('PRIORITY = "ts"', 'PRIORITY = "pid"'),
    )
    ce = tmp_path / "pid.json"
    done = cli("check", "philosophers", "-a", pid, "--meals", "2", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — capacity: fork:3 (capacity 1)" in done.stdout, said(done)
    done = cli("replay", ce, "-a", pid)
    assert done.returncode == 1 and "[capacity] fork:3 (capacity 1)" in done.stdout, said(done)
