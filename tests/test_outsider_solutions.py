"""A solution in a style of its own (tests/outsiders/lamport_heap.py: a heap, a dict of handlers,
no type hints), and what its author may get wrong in the state it keeps: an attribute that cannot
be hashed, a ``snapshot()`` that is no hashable value or raises, a list kept as a module's global
or as a class attribute. Each is named, never exit 4 ("a bug in mutexlab") and never a verdict
on the protocol drawn from a state check could not keep apart."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said


def variant(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """lamport_heap.py with each (old, new) of ``edits`` made, saved as ``name``.py under its own name."""
    return edited(where, "lamport_heap.py", "lamport-heap", "lamport-heap", name, *edits)


@pytest.fixture
def outside(tmp_path) -> Path:
    shutil.copy(OUTSIDERS / "lamport_heap.py", tmp_path / "lamport_heap.py")
    return tmp_path


def test_the_outsiders_solution_passes_check_and_simulates_safe(cli, outside):
    done = cli("check", outside / "lamport_heap.py", "-N", "2", "-M", "2")
    assert done.returncode == 0 and "PASS — every reachable world checked" in done.stdout, said(done)
    done = cli("simulate", outside / "lamport_heap.py", "-N", "3", "-M", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)


NOTES = (
    "ANY = {",
    "class Notes:\n    def __init__(self):\n        self.seen = []\n\n"
    "    def __eq__(self, other):\n        return isinstance(other, Notes) and self.seen == other.seen\n\n\nANY = {",
)


@pytest.mark.parametrize(
    ("name", "edits", "says"),
    [
        (  # a helper object with __eq__ and so no __hash__, kept as an attribute
            "unhashable",
            [
                NOTES,
                ("self.acks = frozenset()\n\n", "self.acks = frozenset()\n        self.notes = Notes()\n\n"),
            ],
            "TypeError: its attribute 'notes': cannot snapshot a Notes",
        ),
        (  # its own snapshot(), a list
            "listsnap",
            [
                (
                    "    def _release(self):",
                    "    def snapshot(self):\n        return [self.state, self.heap]\n\n    def _release(self):",
                )
            ],
            "TypeError: unhashable type: 'list'",
        ),
        (  # its own snapshot(), raising on an empty heap
            "snapraises",
            [
                (
                    "    def _release(self):",
                    "    def snapshot(self):\n        return (self.state, self.heap[0])\n\n    def _release(self):",
                )
            ],
            "IndexError: list index out of range at ",
        ),
    ],
)
def test_a_state_check_cannot_keep_is_named_with_its_file(cli, outside, name, edits, says):
    """Before: exit 4, "internal error (a bug in mutexlab, not in your algorithm)", mutexlab's
    traceback; ``--swarm`` said TOOL ERROR."""
    path = variant(outside, name, *edits)
    for extra in ([], ["--swarm", "--workers", "1", "--time", "5"]):
        done = cli("check", path, "-N", "2", "-M", "1", *extra)
        assert done.returncode == 2, said(done)
        assert f"cannot keep the state of node-1 (LamportHeap, {path})" in done.stderr, said(done)
        assert says in done.stderr and "internal error" not in done.stderr, said(done)
        assert "Traceback" not in done.stderr and "TOOL ERROR" not in done.stdout, said(done)


SEEN = (
    "self.acks = self.acks | {msg.sender}",
    "self.acks = self.acks | {msg.sender}\n        SEEN.append(msg.sender)",
)


def test_a_list_kept_as_a_modules_global_and_changed_is_a_finding(cli, outside, tmp_path):
    """``SEEN = []`` at the top of the file, appended to by a handler: one list for every node (and
    every world check keeps), each node's own over RabbitMQ. Before: check found a "deadlock" that
    the shared list made (node-1 stops entering once it has grown) and simulate said SAFE."""
    path = variant(
        outside,
        "globalstate",
        ("import heapq", "import heapq\nSEEN = []"),
        (SEEN[0], SEEN[1] + "\n        if len(SEEN) > 3 and self.pid == 1:\n            return []"),
    )
    says = f"the global SEEN of {path} is a mutable global of the module, and a handler changed it"
    done = cli("check", path, "-N", "3", "-M", "1", "--counterexample", tmp_path / "g.json")
    assert done.returncode == 1 and says in done.stdout, said(done)
    assert "VIOLATION — deadlock" not in done.stdout and "replay reproduces it: yes" in done.stdout, said(
        done
    )
    done = cli("replay", tmp_path / "g.json", "--algorithm", path)
    assert (
        done.returncode == 1
        and "RAISED: step" in done.stdout + done.stderr
        and says in done.stdout + done.stderr
    ), said(done)
    done = cli("simulate", path, "-N", "3", "-M", "1")
    assert done.returncode == 1 and says in done.stderr, said(done)


def test_a_class_attribute_changed_is_checks_finding_with_a_path_that_replays(cli, outside, tmp_path):
    """Before: check's search found it, then the counterexample's start found the list already
    changed: "protocol error: node-1 cannot start: …", no verdict, no path; and the scenario's
    replay ran past it (INCOMPLETE) while check said it reproduced."""
    path = variant(
        outside,
        "classattr",
        (
            "    def __init__(self, pid, n, requests=0, clock=0):",
            "    seen = []\n\n    def __init__(self, pid, n, requests=0, clock=0):",
        ),
        (SEEN[0], SEEN[0] + "\n        self.seen.append(msg.sender)"),
    )
    done = cli("check", path, "-N", "3", "-M", "1", "--counterexample", tmp_path / "c.json")
    assert done.returncode == 1, said(done)
    assert (
        "verdict:      VIOLATION — error:" in done.stdout
        and "LamportHeap.seen is an attribute of the class" in done.stdout
    ), said(done)
    assert "replay reproduces it: yes — replay stops: step" in done.stdout, said(done)
    done = cli("replay", tmp_path / "c.json", "--algorithm", path)
    assert done.returncode == 1 and "RAISED: step" in done.stdout + done.stderr, said(done)


def test_a_philosopher_without_its_own_snapshot_is_checked_as_a_classic_node_is(cli, tmp_path):
    """tests/outsiders/phil_desks.py: frozen dataclasses, an enum and a heap in its state, and no
    ``snapshot()`` of its own — the kit's ``ClassicNode`` has a default, and so now has its
    ``Philosopher``. Before: exit 2, "DeskPhilosopher defines no snapshot()"."""
    path = tmp_path / "phil_desks.py"
    shutil.copy(OUTSIDERS / "phil_desks.py", path)
    done = cli("check", path, "-N", "3", "-M", "1", "--cross-check")
    assert done.returncode == 0 and "PASS — every reachable world checked" in done.stdout, said(done)
    assert "PASS: agrees" in done.stdout, said(done)
    broken = tmp_path / "phil_desks_left_first.py"  # each asks for its left fork first: a cycle
    broken.write_text(
        path.read_text()
        .replace("(min(self.left, self.right), max(self.left, self.right))", "(self.left, self.right)")
        .replace('"phil-desks"', '"phil-desks-left-first"')
    )
    done = cli("check", broken, "-N", "3", "-M", "1")
    assert done.returncode == 1 and "VIOLATION — deadlock" in done.stdout, said(done)


def test_check_hands_a_message_over_as_the_wire_does(cli, outside):
    """An ACK carrying ``seen: dict = {}`` with int keys: over RabbitMQ its receiver gets the keys
    as strings (JSON) and ``msg.seen[msg.sender]`` raises KeyError (``run`` stops: a handler
    raised). Before: check said PASS, every world checked, handing over the object sent."""
    path = variant(
        outside,
        "intkeys",
        ('    type: Literal["ACK"] = "ACK"\n', '    type: Literal["ACK"] = "ACK"\n    seen: dict = {}\n'),
        (
            "Ack(sender=self.pid, ts=self.clock.tick())",
            "Ack(sender=self.pid, ts=self.clock.tick(), seen={self.pid: msg.ts})",
        ),
        (SEEN[0], SEEN[0] + "\n        assert msg.seen[msg.sender] >= 0"),
    )
    done = cli("check", path, "-N", "2", "-M", "1", "--counterexample", outside / "ik.json")
    assert done.returncode == 1, said(done)
    shown = "replay reproduces it: yes — replay stops: step 3 (deliver): node-1 raised KeyError"
    assert shown in done.stdout, said(done)  # before: "yes — node-1 still holds cs at the end …"
    replayed = cli("replay", outside / "ik.json", "--algorithm", path)
    assert replayed.returncode == 1, said(replayed)
    assert "RAISED: step 3 (deliver): node-1 raised KeyError: 2" in replayed.stdout + replayed.stderr, said(
        replayed
    )
    assert (
        "node-1 raised KeyError: 2 at " in done.stdout
        and "(in ack), taking ACK from process 2" in done.stdout
    ), said(done)
    typed = outside / "typedkeys.py"  # the field says its keys are ints: they come back ints
    typed.write_text(
        path.read_text()
        .replace("seen: dict = {}", "seen: dict[int, int] = {}")
        .replace("-intkeys", "-typedkeys")
    )
    done = cli("check", typed, "-N", "2", "-M", "1")
    assert done.returncode == 0 and "PASS" in done.stdout, said(done)


def test_a_seeded_generator_in_the_state_is_kept_by_its_state_not_its_identity(cli, outside):
    """``self.rng = random.Random(pid)``, drawn from in ``_request``: deterministic, as a handler
    must be. Before: the default snapshot kept the generator by identity, so no two worlds with
    one were ever merged (2 nodes × 2 requests: 1,046 states where the same solution without it
    has 551; 3 nodes: 794,699 against 123,964)."""

    def states(done) -> int:
        line = next(x for x in done.stdout.splitlines() if x.startswith("states:"))
        return int(line.split()[1].replace(",", ""))

    rng = variant(
        outside,
        "rng",
        ("import heapq", "import heapq\nimport random"),
        (
            "        self.acks = frozenset()\n\n",
            "        self.acks = frozenset()\n        self.rng = random.Random(pid)\n\n",
        ),
        (
            "        ts = self.clock.tick()\n        heapq",
            "        ts = self.clock.tick() + self.rng.randint(0, 1)\n        heapq",
        ),
    )
    base = cli("check", outside / "lamport_heap.py", "-N", "2", "-M", "2")
    done = cli("check", rng, "-N", "2", "-M", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    assert states(done) == states(base), said(done) + said(base)
