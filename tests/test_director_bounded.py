"""Systematic search by iterative deviation bounding (``director/strategies.py``, ``Systematic``).

The search runs the schedules of the plain depth-first search — the same ones, each once — in the
order of their deviations (steps that take other than their first choice): a bug a few deviations
from the default order is found in its first few hundred runs, where the plain search spent its whole budget varying the
tail of one long prefix. Shown here on a tree of steps without programs (every schedule run once,
in order, the count unchanged, the memory cap changing the order only) and on two broken MPI
programs the plain search missed on three ranks: ``tests/mpi/kmutex_lamport.c -DBUG_ACK_COUNT``
(a rank counts the ACKs of all its requests: it enters with one missing) and
``tests/mpi/kprint_bsend.c -DBROKEN_STALE_ACK`` (an ACK for an older request is counted).
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import missing
from test_mpi import mpicc, shared_cache

from mutexlab.commands import test as test_command
from mutexlab.director import strategies
from mutexlab.director.strategies import Ran, Systematic

ROOT = Path(__file__).resolve().parent.parent
MPI = ROOT / "tests" / "mpi"
KMUTEX_LINES = r"(?P<enter>>>> CS)|(?P<exit><<< CS)"
KPRINT_LINES = "(?P<enter>ENTER CS)|(?P<exit>EXIT CS)"


def world(chains: dict[int, int]):
    """Steps of nodes that each take ``chains[node]`` steps in turn: what is enabled after
    ``taken`` (node n's next step while it has one left)."""

    def enabled(taken: list[tuple[str, int, str]]) -> list[tuple[str, int, str]]:
        done = {node: sum(1 for step in taken if step[1] == node) for node in chains}
        return [("deliver", node, f"m{done[node]}") for node in sorted(chains) if done[node] < chains[node]]

    return enabled


def run_once(strategy: Systematic, enabled) -> tuple[tuple[str, int, str], ...] | None:
    """The next run the strategy asks for (None: it is done): its schedule."""
    chooser = strategy.next_run()
    if chooser is None:
        return None
    taken: list[tuple[str, int, str]] = []
    trail = []
    while options := enabled(taken):
        action = chooser(len(taken), options)
        if action is None:
            break
        trail.append((options.index(action), len(options)))
        taken.append(action)
    strategy.ran(Ran(trail, ["init"] + [f"{a}" for a in taken]))
    return tuple(taken)


def search_all(strategy: Systematic, enabled) -> list[tuple[tuple[str, int, str], ...]]:
    """Every run the strategy asks for until it is done: their schedules, in order."""
    schedules = []
    while (schedule := run_once(strategy, enabled)) is not None:
        schedules.append(schedule)
    return schedules


def deviations(schedule, enabled) -> int:
    """A schedule's deviations in the unreduced tree: its steps that are not their first choice."""
    return sum(enabled(list(schedule[:i])).index(step) > 0 for i, step in enumerate(schedule))


@pytest.mark.parametrize("reduce", (True, False))
@pytest.mark.parametrize("chains", ({0: 2, 1: 2}, {0: 2, 1: 1, 2: 2}, {0: 3, 1: 3}))
def test_the_bounded_search_runs_the_plain_searchs_schedules_each_once(reduce, chains):
    enabled = world(chains)
    plain = search_all(Systematic(reduce, bounded=False), enabled)
    bounded = search_all(Systematic(reduce), enabled)
    assert sorted(bounded) == sorted(plain) and len(set(bounded)) == len(bounded)
    if not reduce:  # every order, taken by its deviations: never one with more before one with fewer
        costs = [deviations(s, enabled) for s in bounded]
        assert costs == sorted(costs) and costs != [deviations(s, enabled) for s in plain]


def test_the_bound_covered_is_said_and_none_once_the_tree_is_done():
    enabled = world({0: 2, 1: 2, 2: 1})
    strategy = Systematic(reduce=False)
    assert strategy.covered is None  # not even the default schedule yet
    default = ("m0", 0), ("m1", 0), ("m0", 1), ("m1", 1), ("m0", 2)  # every first choice
    assert run_once(strategy, enabled) == tuple(("deliver", node, m) for m, node in default)
    assert strategy.covered == 0  # the default schedule (every first choice): each with no deviation
    search_all(strategy, enabled)
    assert strategy.done and strategy.covered is None  # exhausted: the whole tree, no bound to say


def test_a_bound_is_said_covered_only_when_every_schedule_within_it_ran():
    """Sleep sets prune a schedule as equivalent to one in an earlier sibling's subtree, which may
    deviate more and wait for a higher bound. Here, e.g., node 2's deliveries m4 m0 m2 m3 with node 0's
    m1 between (2 deviations: m4 first, m1 before m3) have no equivalent run when bound 3 begins:
    m1 sleeps under m4, and every order of them that takes m1 first deviates 3 times. Before, the
    search said bound 2 covered then; with sleep sets it now says no bound, without them it does."""
    m = {i: ("deliver", 0 if i == 1 else 2, f"m{i}") for i in range(5)}
    order = [m[2], m[0], m[3], m[1], m[4]]  # m2 is sent once m1 is delivered

    def enabled(taken):
        return [a for a in order if a not in taken and (a != m[2] or m[1] in taken)]

    def per_node(schedule):
        return tuple(tuple(a for a in schedule if a[1] == node) for node in (0, 2))

    def every(prefix=()):
        options = enabled(list(prefix))
        return [s for o in options for s in every((*prefix, o))] if options else [prefix]

    for reduce in (True, False):
        strategy, ran, said = Systematic(reduce), [], set()
        while (schedule := run_once(strategy, enabled)) is not None:
            ran.append(schedule)
            if strategy.covered is not None:
                said.add(strategy.covered)
                done = {per_node(r) for r in ran if len(r) == len(order)}
                for each in every():
                    if deviations(each, enabled) <= strategy.covered:
                        assert per_node(each) in done, (reduce, strategy.covered, each)
        assert said == (set() if reduce else {0, 1, 2, 3}), (reduce, said)


def test_past_the_memory_cap_a_step_is_searched_at_once_and_nothing_is_lost(monkeypatch):
    enabled = world({0: 2, 1: 2, 2: 2})
    plain = search_all(Systematic(False, bounded=False), enabled)
    monkeypatch.setattr(strategies, "MAX_KEPT", 2)
    capped = search_all(Systematic(False), enabled)
    assert sorted(capped) == sorted(plain) and len(set(capped)) == len(capped)


# -- two broken MPI programs the plain search missed on three ranks ----------------------------


class Plain(Systematic):
    """The search before deviation bounding: depth-first, the deepest untried choice next."""

    def __init__(self, reduce: bool = True) -> None:
        super().__init__(reduce, bounded=False)


@pytest.fixture(scope="module")
def programs(tmp_path_factory) -> dict[str, str]:
    if shutil.which("gcc") is None:
        missing("gcc is not installed: mutexlab's MPI cannot be built")
    out = tmp_path_factory.mktemp("bounded")
    made = {}
    for name, source, flags in (
        ("kmutex", "kmutex_lamport.c", []),
        ("kmutex-acks", "kmutex_lamport.c", ["-DBUG_ACK_COUNT"]),
        ("kprint-stale", "kprint_bsend.c", ["-DBROKEN_STALE_ACK"]),
    ):
        built = mpicc(shared_cache(tmp_path_factory), "-O2", *flags, "-o", str(out / name), str(MPI / source))
        assert built.returncode == 0, built.stderr
        made[name] = str(out / name)
    return made


def kmutex(cli, program: str, *flags: str, np: str = "3"):
    return cli(
        "test", "mutex", "--np", np, "--entries", "1", "--regex", KMUTEX_LINES, "--strategy", "systematic",
        *flags, "--mpi", program, "1", "1",
    )  # fmt: skip


def kprint(cli, program: str, *flags: str):
    return cli(
        "test", "kmutex", "-o", "k=2", "--np", "3", "--entries", "2", "--regex", KPRINT_LINES,
        "--strategy", "systematic", *flags, "--mpi", program, "2", "2",
    )  # fmt: skip


@pytest.mark.parametrize("run", (kmutex, kprint), ids=("miscounted-ack", "stale-ack"))
def test_a_shallow_ack_bug_missed_by_the_plain_search_is_found(cli, programs, monkeypatch, run):
    program = programs["kmutex-acks" if run is kmutex else "kprint-stale"]
    found = run(cli, program, "--no-shrink")  # the default budget, 10,000 runs
    assert found.returncode == 1 and "[capacity] cs (capacity" in found.stdout, found.stdout
    runs = int(found.stdout.split("found by systematic: ")[1].split(" run")[0])
    # docs/test-any-program.md#strategies (the MPI rank's landings: 32 where 18 before them; its
    # lingers while other ranks move: 36)
    assert runs == (314 if run is kmutex else 36), found.stdout
    monkeypatch.setattr(test_command, "Systematic", Plain)  # before: 2,000 runs and no finding
    plain = run(cli, program, "--no-shrink", "--runs", "2000")
    assert plain.returncode == 3 and "the budget ended before the search did" in plain.stdout, plain.stdout
    assert "nothing proven" in plain.stdout and "deviation bound" not in plain.stdout, plain.stdout


def test_a_correct_program_says_the_bound_it_covered_or_searched_exhaustively(cli, programs):
    small = kmutex(cli, programs["kmutex"], np="2")
    assert small.returncode == 0 and "PASS — searched exhaustively: " in small.stdout, small.stdout
    cut = kmutex(cli, programs["kmutex"], "--runs", "60", "--no-reduction")
    assert cut.returncode == 3, cut.stdout
    assert "the budget ended before the search did: systematic: 60 runs" in cut.stdout, cut.stdout
    said = "no finding within deviation bound 1 (every schedule with at most 1 deviation from the default"
    assert said in cut.stdout, cut.stdout
    reduced = kmutex(cli, programs["kmutex"], "--runs", "60")  # sleep sets: no bound is covered
    assert reduced.returncode == 3 and "; nothing proven" in reduced.stdout, reduced.stdout
    assert "deviation bound" not in reduced.stdout, reduced.stdout


@pytest.mark.slow
def test_a_stale_reply_of_a_rust_node_is_found_on_three_nodes(cli, tmp_path):
    """Depth-first search ran its 10,000 runs without a finding here; random finds it too."""
    if shutil.which("rustc") is None:
        missing("rustc is not installed: the Rust outsider node cannot be built")
    node = str(tmp_path / "kmutex-stale")
    source = str(ROOT / "tests" / "outsiders" / "o6_kmutex_ra.rs")
    subprocess.run(["rustc", "-O", "--cfg", "stale", "-o", node, source], check=True)
    found = cli(
        "test", "kmutex", "--node", node, "-N", "3", "-R", "2", "--strategy", "systematic", "--no-shrink"
    )
    assert found.returncode == 1 and "[capacity] cs (capacity 2) held by" in found.stdout, found.stdout
    assert "found by systematic: 1367 runs" in found.stdout, found.stdout
