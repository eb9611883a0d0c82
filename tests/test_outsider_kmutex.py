"""A ``kmutex`` solution in a style of its own (tests/outsiders/kmutex_bank.py: node 1 lends K
permits; a mutable dataclass with a deque as its books, a ``match`` on the message, its own
``snapshot()``), and what its author may get wrong: a count forgotten in a rare interleaving, a
handler raising on one, a field its message does not declare, a mutable default argument, a
random choice or the time in a handler. Each is named with a path that replays to it, or
refused with the fix; never exit 4 and never a PASS."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, edited, said


def variant(where: Path, name: str, *edits: tuple[str, str]) -> Path:
    """kmutex_bank.py with each (old, new) of ``edits`` made, saved as ``name``.py under its own name."""
    return edited(where, "kmutex_bank.py", "k-bank", "k-bank", name, *edits)


@pytest.fixture
def outside(tmp_path) -> Path:
    shutil.copy(OUTSIDERS / "kmutex_bank.py", tmp_path / "kmutex_bank.py")
    return tmp_path


def states(done) -> int:
    line = next(x for x in done.stdout.splitlines() if x.startswith("states:"))
    return int(line.split()[1].replace(",", ""))


def test_the_bank_passes_check_metrics_and_simulates_safe(cli, outside):
    """Its books are a dataclass that is not frozen, so cannot be hashed, kept without a
    ``snapshot()`` of its own. Before: exit 2, "cannot keep the state of node-1 … its attribute
    'vault': cannot snapshot a Vault"; now the default snapshot keeps it by its attributes, and
    merges exactly the worlds a hand-written snapshot of the same books does."""
    path = outside / "kmutex_bank.py"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--cross-check")
    assert done.returncode == 0 and "PASS: agrees" in done.stdout, said(done)
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "1", "-M", "2", "--metrics")
    assert done.returncode == 0 and "cs: messages per entry min 0, max 3" in done.stdout, said(
        done
    )  # ASK, LOAN, REPAY
    done = cli("simulate", "kmutex", "-a", path, "-N", "4", "-k", "2", "-M", "2")
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    own = variant(
        outside,
        "ownsnapshot",
        (
            "    @property\n    def is_bank",
            "    def snapshot(self):\n"
            "        books = None if self.vault is None else (self.vault.free, tuple(self.vault.waiting))\n"
            "        return (self.state, self.requests_left, self.clock.time, books)\n\n"
            "    @property\n    def is_bank",
        ),
    )
    base = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "1", "-M", "2")
    done = cli("check", "kmutex", "-a", own, "-N", "3", "-k", "1", "-M", "2")
    assert base.returncode == done.returncode == 0 and states(base) == states(done), said(base) + said(done)


OWN_ENTRY = (
    "    def _request(self) -> list:\n        self.state = WANTED\n",
    "    def _request(self) -> list:\n        if self.is_bank and self.vault.free > 0:\n"
    "            return self._enter()  # the bank lets itself in, and forgets to count it\n"
    "        self.state = WANTED\n",
)
OWN_EXIT = (
    "    def _release(self) -> list:\n",
    "    def _release(self) -> list:\n        if self.is_bank and self.vault.free == self.k:\n            return []\n",
)


def test_k_plus_one_inside_is_found_and_replayed(cli, outside):
    path = variant(outside, "ownentry", OWN_ENTRY, OWN_EXIT)
    ce = outside / "ce.json"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--counterexample", ce)
    assert done.returncode == 1, said(done)
    assert "VIOLATION — capacity: cs (capacity 2) held by node-1×1, node-2×1, node-3×1" in done.stdout, said(
        done
    )
    assert "replay reproduces it: yes" in done.stdout, said(done)
    replayed = cli("replay", ce, "-a", path)
    assert replayed.returncode == 1 and "[capacity] cs (capacity 2)" in replayed.stdout, said(replayed)


@pytest.mark.parametrize(
    ("name", "edit", "says"),
    [
        (  # a permit back to an empty vault: "someone must wait" — not when both were lent and nobody waits
            "rareraise",
            (
                "            case Repay():\n                vault.free += 1\n",
                "            case Repay():\n                vault.free += 1\n"
                "                if vault.free == 1:\n"
                "                    return [Send(vault.waiting.popleft(), stamp(self, Loan))] if vault.lend() else []\n",
            ),
            "node-1 raised IndexError: pop from an empty deque at ",
        ),
        (  # a field LOAN does not declare
            "extrafield",
            (
                "out.append(Send(vault.waiting.popleft(), stamp(self, Loan)))",
                "out.append(Send(vault.waiting.popleft(), Loan(sender=self.pid, ts=self.clock.tick(), left=vault.free)))",
            ),
            "node-1 raised ValidationError: 1 validation error for Loan",
        ),
    ],
)
def test_a_handler_that_raises_in_one_interleaving_is_a_finding(cli, outside, name, edit, says):
    path = variant(outside, name, edit)
    ce = outside / "ce.json"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "2", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — error:" in done.stdout and says in done.stdout, said(done)
    assert "replay reproduces it: yes — replay stops: step" in done.stdout, said(done)
    replayed = cli("replay", ce, "-a", path)
    assert replayed.returncode == 1 and "RAISED: step" in replayed.stdout, said(replayed)
    done = cli("simulate", "kmutex", "-a", path, "-N", "3", "-k", "2")
    assert done.returncode == 1 and says in done.stderr, said(done)


def test_a_mutable_default_argument_is_refused_naming_the_fix(cli, outside):
    path = variant(
        outside,
        "defaultlist",
        ("k: int = 2) -> None:", "k: int = 2, log: list = []) -> None:"),
        ("self.k = k\n", "self.k = k\n        self.log = log\n"),
    )
    for command in ("check", "simulate"):
        done = cli(command, "kmutex", "-a", path, "-N", "3")
        assert done.returncode == 2, said(done)
        assert "node-1.log and node-2.log are one list" in done.stderr, said(done)
        assert "a mutable default argument" in done.stderr, said(done)


RANDOM = (
    ("from collections import deque", "import random\nfrom collections import deque"),
    (
        "out.append(Send(vault.waiting.popleft(), stamp(self, Loan)))",
        "who = random.choice(list(vault.waiting))\n"
        "            vault.waiting.remove(who)\n"
        "            out.append(Send(who, stamp(self, Loan)))",
    ),
)
CLOCK = (
    ("from collections import deque", "import time\nfrom collections import deque"),
    ("        vault = self.vault\n", "        self.seen_at = time.time()\n        vault = self.vault\n"),
)


@pytest.mark.parametrize(
    ("name", "edits", "what"), [("random", RANDOM, "effects"), ("clock", CLOCK, "state")]
)
def test_a_nondeterministic_handlers_counterexample_replays_to_the_same_step(cli, outside, name, edits, what):
    """check takes its first inputs twice and names a process that does not do the same. Before:
    its counterexample's replay took each step once and ran past it ("replay reproduces it: NO —
    the replay runs past it"; ``replay`` exit 3, INCOMPLETE); now replay and explore take each
    step again on copies of the process as it was, and stop where check did."""
    path = variant(outside, name, *edits)
    ce = outside / "ce.json"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "1", "--counterexample", ce)
    says = "is not deterministic: one input, taken twice from one state"
    assert done.returncode == 1 and says in done.stdout and f"gave different {what}" in done.stdout, said(
        done
    )
    assert "replay reproduces it: yes — replay stops: step" in done.stdout, said(done)
    replayed = cli("replay", ce, "-a", path)
    assert replayed.returncode == 1 and "RAISED: step" in replayed.stdout and says in replayed.stdout, said(
        replayed
    )
    steps = json.loads(ce.read_text())["steps"]
    assert f"step {len(steps)} (" in replayed.stdout, said(replayed)  # the scenario's last step


def test_explore_stops_at_the_nondeterministic_step_and_stays_usable(outside):
    """Before: the explorer took the step once, as replay did, and said nothing."""
    from mutexlab.explore.session import Config, Session

    path = variant(outside, "random", *RANDOM)
    session = Session(Config(str(path), 3, {"requests": 1, "k": 1}))
    for step in ("request:1", "request:2", "deliver:2-1", "request:3", "deliver:3-1"):
        session.step(step)
    assert session.state()["findings"]["status"] != "violation"
    session.step("exit:1")  # node-1 repays itself and lends to 2 or 3, drawn at random
    state = session.state()
    raised = state["findings"]["raised"]
    assert state["position"] == 5 and state["findings"]["status"] == "violation", state["findings"]
    assert "node-1 is not deterministic" in raised["message"], raised
    assert raised["step"] == {"op": "exit", "pid": 1}


def test_serving_the_smallest_pid_first_starves_only_under_an_endless_workload(cli, outside):
    """A bank that needs no clock (every ``ts`` 0) and lends to the smallest pid waiting: every
    bounded workload ends (PASS), and endless node-3 waits forever while 1 and 2 take turns."""
    path = variant(
        outside,
        "smallest",
        ("ts=node.clock.tick())", "ts=0)  # the bank needs no clock"),
        ("        self.clock.receive(msg.ts)\n        return self._enter()", "        return self._enter()"),
        ("        self.clock.receive(msg.ts)\n        vault = self.vault", "        vault = self.vault"),
        (
            "out.append(Send(vault.waiting.popleft(), stamp(self, Loan)))",
            "who = min(vault.waiting)\n            vault.waiting.remove(who)\n"
            "            out.append(Send(who, stamp(self, Loan)))",
        ),
    )
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "1", "-M", "2")
    assert done.returncode == 0 and "(no cycles: every run ends)" in done.stdout, said(done)
    ce = outside / "starve.json"
    done = cli("check", "kmutex", "-a", path, "-N", "3", "-k", "1", "--endless", "--counterexample", ce)
    assert done.returncode == 1 and "VIOLATION — liveness: node-3 waits forever" in done.stdout, said(done)
    assert "replay reproduces it: yes — the cycle returns to its start" in done.stdout, said(done)


def test_a_table_cell_given_a_function_is_refused_naming_the_cell_and_the_fix(cli, outside):
    """Before: "TypeError: attribute name must be string, not 'function'" at the class's line."""
    path = variant(
        outside,
        "lambdacell",
        ('else queue", "_bank")', 'else queue", lambda self, msg: self._bank(msg))'),
    )
    done = cli("check", "kmutex", "-a", path, "-N", "3")
    assert done.returncode == 2, said(done)
    assert (
        "on('bank: lend a permit if one is free, else queue', …) was given function '<lambda>'" in done.stderr
    )
    assert 'a table names its handler by the method\'s name, a string such as "_on_request"' in done.stderr


def test_a_cell_may_name_the_one_state_it_moves_to():
    """``to=HELD`` for ``to=[HELD]``. Before: the cell allowed the states 'H', 'E', 'L' and 'D'."""
    from mutexlab.protocols.kit import HELD, on

    assert on("enter", "_on_loan", to=HELD).to == (HELD,)
    assert on("enter", "_on_loan", to=[HELD]).to == (HELD,)


def test_a_kmutex_node_that_takes_no_k_is_refused_saying_what_to_write(cli, outside):
    """Before: "building its setup raised TypeError: Banker.__init__() got an unexpected keyword
    argument 'k' at …/mutexlab/protocols/classic.py (in <lambda>)": mutexlab's line, not the fix."""
    path = variant(
        outside,
        "nok",
        ("clock: int = 0, k: int = 2) -> None:", "clock: int = 0) -> None:"),
        ("self.k = k\n", "self.k = 2\n"),
        ("Vault(k)", "Vault(2)"),
    )
    for command in ("check", "simulate"):
        done = cli(command, "kmutex", "-a", path, "-N", "3")
        assert done.returncode == 2, said(done)
        assert f"{path}: a kmutex node is built as Banker(pid, n, requests, clock, k=2)" in done.stderr, said(
            done
        )
        assert "(def __init__(self, pid, n, requests=0, clock=0, k=...))" in done.stderr, said(done)
        assert "classic.py" not in done.stderr, said(done)
