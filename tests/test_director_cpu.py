"""How the director reads a node's process tree and its processor time (director/tree.py), on a
made-up ``/proc``: the tree found whatever its pids, and an MPI rank's stretch judged running by
what its threads used, so a loaded machine never turns a spinning rank into a ``stalled`` finding.

Before: a rank whose program got a pid below its launcher's (pids had wrapped since the launcher
started) was left out of the tree once the pid counter passed the launcher again, and its spin
read as no processor time at all: ``FINDING [stalled]`` in place of the run's ``INCOMPLETE``
(test_mpi_outsiders13.py's undecided test, on a machine at load 30 to 50).
"""

from __future__ import annotations

import pytest

from mutexlab.director import tree


class FakeProc:
    """A ``/proc`` of a few processes: their parent, state and threads' processor time."""

    def __init__(self, root, last_pid: int) -> None:
        self.root = root
        (root / "sys" / "kernel").mkdir(parents=True)
        (root / "sys" / "kernel" / "ns_last_pid").write_text(f"{last_pid}\n")

    def process(self, pid: int, ppid: int, state: str = "S", threads: dict[int, int] | None = None) -> None:
        (self.root / str(pid)).mkdir()
        (self.root / str(pid) / "stat").write_text(f"{pid} (a (b) c) {state} {ppid} {pid} {pid} 0 -1 0\n")
        for tid, ns in (threads if threads is not None else {pid: 0}).items():
            self.thread(pid, tid, ns)

    def thread(self, pid: int, tid: int, ns: int) -> None:
        """Thread ``tid`` of ``pid`` has used ``ns``: to the nanosecond in schedstat, in 10 ms
        ticks (rounded down) in stat, as Linux says them."""
        task = self.root / str(pid) / "task" / str(tid)
        task.mkdir(parents=True, exist_ok=True)
        (task / "schedstat").write_text(f"{ns} 0 1\n")
        ticks = ns // 10_000_000
        (task / "stat").write_text(f"{tid} (t) R {pid} 0 0 0 -1 0 0 0 0 0 {ticks} 0 0 0\n")

    def end_thread(self, pid: int, tid: int) -> None:
        task = self.root / str(pid) / "task" / str(tid)
        for name in ("schedstat", "stat"):
            (task / name).unlink()
        task.rmdir()


@pytest.fixture
def proc(tmp_path, monkeypatch) -> FakeProc:
    monkeypatch.setattr(tree, "PROC", str(tmp_path))
    return FakeProc(tmp_path, last_pid=30_100)


def test_a_descendant_whose_pid_wrapped_below_its_ancestor_is_in_the_tree(proc):
    # the launcher started at 30,000; pids wrapped, the program came at 300, and the counter has
    # since passed 30,000 again (30,100): a pid below the root's is no proof of an older process
    proc.process(30_000, 1)  # the launcher
    proc.process(30_001, 30_000)  # the adapter
    proc.process(300, 30_001)  # the program, after the wrap
    proc.process(301, 300, state="Z")  # a zombie: dead already
    proc.process(29_000, 1)  # a stranger
    assert tree.descendants([30_000]) == {30_001, 300}


def test_a_spinning_rank_below_a_wrapped_pid_runs_on(proc):
    proc.process(30_000, 1)
    proc.process(300, 30_000, threads={300: 10**9})
    running = tree.Running(30_000, allowance=11.0)
    proc.thread(300, 300, 2 * 10**9)  # its thread spun a second more
    assert running.on()


def test_a_few_ms_of_processor_time_under_load_is_running_on(proc):
    # a thread the load lets run 3 ms in a --timeout: less than a clock tick, processor time all the same
    proc.process(400, 1, threads={400: 5_000_000})
    proc.process(401, 400, threads={401: 0, 402: 1_000_000_000})
    running = tree.Running(400, allowance=11.0)
    proc.thread(401, 402, 1_003_000_000)
    assert running.on()
    assert not running.on()  # then nothing more: a rank that uses no processor time is stalled


def test_a_thread_that_ends_does_not_hide_the_others_running(proc):
    # the ended thread's time leaves the total; the one left still ran
    proc.process(500, 1, threads={500: 0, 501: 800_000_000})
    running = tree.Running(500, allowance=11.0)
    proc.end_thread(500, 501)
    proc.thread(500, 500, 20_000_000)
    assert running.on()


def test_a_tree_past_its_allowance_is_not_running_on(proc):
    proc.process(600, 1, threads={600: 0})
    running = tree.Running(600, allowance=2.0)
    proc.thread(600, 600, 1_500_000_000)
    assert running.on()
    proc.thread(600, 600, 2_100_000_000)  # 2.1 s in all: past the 2 s it was given
    assert not running.on()


def test_a_tree_whose_root_ended_is_not_running_on(proc):
    proc.process(700, 1, threads={700: 0})
    running = tree.Running(700, allowance=2.0)
    proc.end_thread(700, 700)
    (proc.root / "700" / "stat").unlink()
    (proc.root / "700" / "task").rmdir()
    (proc.root / "700").rmdir()
    assert not running.on()
