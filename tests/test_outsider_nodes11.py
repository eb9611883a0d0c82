"""``mutexlab test`` on node programs written elsewhere from the docs alone, with the mistakes
students make (tests/outsiders/, ``o11_*``):

* ``o11_kmutex_condvar.c`` — K-mutual exclusion (Raymond's Ricart–Agrawala) in C with a reader
  pthread that fgets() stdin into a queue and a worker waiting on a condition variable; exits 1 on
  end of input; ``-DBROKEN_TIE`` forgets the tie-break on ids;
* ``o11_phil_waiter_queue.py`` — philosophers with a waiter (philosopher 1), threading and
  queue.Queue; ``--left-only`` looks at one neighbour alone, ``--lazy`` flushes only after a send;
* ``o11_elves_arbiter_batch.py`` — the hamster killers, the mayor arbitrating jobs with their
  tools, every answer one os.write, exit 3 at the end of input; ``--pins-only`` forgets the poison;
* ``o11_bees_keeper_crlf.py`` — mason bees, bee 1 keeping the flowers, input cut by hand from
  os.read, CRLF output; ``--greedy`` lets bees out uncounted, ``--crlf`` cuts input at \\r\\n;
* ``o11_mutex_scanf.c`` — a central coordinator in C reading stdin with scanf("%s");
  ``-DBROKEN_SELF`` forgets the coordinator's own hold, ``-DDEBUG_STDOUT`` prints debugging to
  stdout, ``-DFLUSH_ON_SEND`` flushes only after a send.

Each correct one passes every strategy, each bug is found, shrunk and replayed. What they showed
of mutexlab: a node whose answer sat unflushed was "stalled or unresponsive" (now: it waits for
its next input, so its answer is in its buffer); a debugging line echoing the init was "not shown
on 1 or 2 nodes" after 123 test runs (the line differs with the nodes: now the same fault); a
deadlock's unfinished said "a trace alone cannot tell" of a run mutexlab itself brought to rest;
shrinking a node that ends after its last answer waited 1.5 s after every candidate.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

from mutexlab.cli import main
from mutexlab.director.problem import make_problem
from mutexlab.director.process import Pool
from mutexlab.director.world import Faults, Run


def tool(name: str) -> str:
    if shutil.which(name) is None:
        missing(f"{name} is not installed")
    return name


def found(cli, tmp_path, node: str, *args: str, rule: str) -> str:
    scenario = tmp_path / "ce.json"
    ran = cli("test", *args, "--node", node, "--seed", "1", "--counterexample", scenario)
    assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout, said(ran)
    again = cli("replay", scenario, "--node", node)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)
    return ran.stdout


def build(where, source: str, *flags: str) -> str:
    out = where / ("-".join([source.split(".")[0], *[f.strip("-D").lower() for f in flags]]))
    subprocess.run(
        [tool("gcc"), "-O2", "-pthread", *flags, "-o", str(out), str(OUTSIDERS / source)], check=True
    )
    return str(out)


@pytest.fixture(scope="module")
def c_nodes(tmp_path_factory):
    where = tmp_path_factory.mktemp("c")
    return {
        "kmx": build(where, "o11_kmutex_condvar.c"),
        "kmx-tie": build(where, "o11_kmutex_condvar.c", "-DBROKEN_TIE"),
        "central": build(where, "o11_mutex_scanf.c"),
        "central-self": build(where, "o11_mutex_scanf.c", "-DBROKEN_SELF"),
        "central-debug": build(where, "o11_mutex_scanf.c", "-DDEBUG_STDOUT"),
        "central-lazy": build(where, "o11_mutex_scanf.c", "-DFLUSH_ON_SEND"),
    }


def test_a_condvar_kmutex_in_c_passes_and_a_missing_tie_break_is_found(cli, tmp_path, c_nodes):
    ran = cli("test", "kmutex", "--node", c_nodes["kmx"], "-N", "2", "-o", "k=1", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 9 schedules" in ran.stdout, said(ran)
    for strategy in ("random", "pct"):
        ran = cli(
            "test",
            "kmutex",
            "--node",
            c_nodes["kmx"],
            "-N",
            "4",
            "-R",
            "2",
            "--strategy",
            strategy,
            "--runs",
            "30",
        )
        assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, c_nodes["kmx-tie"], "kmutex", "-N", "4", rule="violation")
    assert "cs (capacity 2) held by" in out and "on 3 nodes" in out, out


def test_a_scanf_coordinator_passes_and_forgetting_its_own_hold_is_found(cli, tmp_path, c_nodes):
    ran = cli("test", "mutex", "--node", c_nodes["central"], "-N", "3", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 51 schedules" in ran.stdout, said(ran)
    ran = cli(
        "test",
        "mutex",
        "--node",
        c_nodes["central"],
        "-N",
        "4",
        "-R",
        "3",
        "--strategy",
        "pct",
        "--runs",
        "30",
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, c_nodes["central-self"], "mutex", "-N", "3", rule="violation")
    assert "to 4 steps on 2 nodes" in out, out


def phil(*flags: str) -> str:
    return " ".join([sys.executable, str(OUTSIDERS / "o11_phil_waiter_queue.py"), *flags])


def test_queue_philosophers_with_a_waiter_pass_and_a_one_sided_waiter_is_found(cli, tmp_path):
    ran = cli("test", "philosophers", "--node", phil(), "-N", "3", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 51 schedules" in ran.stdout, said(ran)
    ran = cli(
        "test", "philosophers", "--node", phil(), "-N", "5", "-R", "2", "--strategy", "pct", "--runs", "20"
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, phil("--left-only"), "philosophers", "-N", "3", rule="violation")
    assert "fork:3 (capacity 1) held by" in out and "to 6 steps on 3 nodes" in out, out


def test_a_done_left_in_the_buffer_is_named_so(cli, c_nodes):
    ran = cli("test", "mutex", "--node", c_nodes["central-lazy"], "-N", "3", "--seed", "1", "--timeout", "1")
    # before: "node 1 did not answer request within 1 s (no done line): stalled or unresponsive"
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    assert "it waits for its next input (blocked reading its standard input)" in ran.stdout, said(ran)
    assert (
        "most likely still in its output buffer" in ran.stdout
        and "must flush it after each done" in ran.stdout
    )


def test_a_threaded_node_whose_answer_sits_in_its_buffer_is_told_both_ways(cli, monkeypatch):
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)  # print into a pipe: block-buffered
    ran = cli("test", "philosophers", "--node", phil("--lazy"), "-N", "3", "--seed", "1", "--timeout", "1")
    # before: "… (no done line): stalled or unresponsive"
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    assert "a thread of it waits for its next input" in ran.stdout, said(ran)
    assert "either its answer sits in its output buffer" in ran.stdout, said(ran)


def test_a_busy_node_is_not_told_its_output_is_buffered(cli, tmp_path):
    node = tmp_path / "spin.py"
    node.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    if json.loads(line)['type'] == 'request':\n"
        "        while True:\n"
        "            pass\n"
        "    print(json.dumps({'type': 'done', 'reinit': True}), flush=True)\n"
    )
    ran = cli(
        "test", "mutex", "--node", f"{sys.executable} {node}", "-N", "1", "--timeout", "1", "--no-shrink"
    )
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    assert "it is running, not waiting for input" in ran.stdout and "buffer" not in ran.stdout, said(ran)


def test_debugging_on_stdout_that_echoes_the_init_shrinks_to_one_node(cli, c_nodes):
    ran = cli("test", "mutex", "--node", c_nodes["central-debug"], "-N", "3", "--seed", "1")
    assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout, said(ran)
    assert "standard output carries protocol lines only" in ran.stdout, said(ran)
    # before: "not shrunk: no smaller run showed [garbage] (123 test runs); not shown on 1 or 2 nodes"
    assert "shrunk from 0 steps on 3 nodes to 0 steps on 1 node (1 test run)" in ran.stdout, said(ran)


def test_a_deadlock_reads_as_one(cli, tmp_path):
    built = tmp_path / "phil-greedy"
    subprocess.run(
        [tool("gcc"), "-O2", "-DBROKEN_GREEDY", "-o", str(built), "examples/nodes/philosopher.c"], check=True
    )
    ran = cli("test", "philosophers", "--node", str(built), "--seed", "1")
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, said(ran)
    # before: "unfinished (2): the trace ends unfinished — cut short or stalled, a trace alone cannot tell"
    assert "a trace alone cannot tell" not in ran.stdout, said(ran)
    assert "unfinished (2): left undone when the run came to rest (nothing could move" in ran.stdout, said(
        ran
    )


def test_a_run_waits_for_the_end_only_of_a_node_that_answered_the_input_named(tmp_path):
    node = tmp_path / "leave.py"
    node.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    kind = json.loads(line)['type']\n"
        "    if kind == 'request':\n"
        "        print(json.dumps({'type': 'enter', 'resource': 'cs'}))\n"
        "    print(json.dumps({'type': 'done', 'reinit': True}), flush=True)\n"
    )
    problem = make_problem("mutex", 1, 1, {}, 1)
    pool = Pool([sys.executable, str(node)], 5.0)
    try:
        run = Run(problem, pool, Faults(), 1, [sys.executable, str(node)])
        run.do(("request", 1, ""))
        start = time.monotonic()
        run.settle(0.0, 1.5, "release")  # its last answer was to a request: its end is not awaited
        quick = time.monotonic() - start
        start = time.monotonic()
        run.settle(0.0, 1.5)
        full = time.monotonic() - start
    finally:
        pool.close()
    # before: settle took no `after` (TypeError); every candidate of a shrinking waited 1.5 s
    assert quick < 0.5 and full >= 1.4, (quick, full)


@pytest.mark.slow  # some 5 s: a Node.js node shrunk
def test_shrinking_a_node_that_leaves_waits_only_where_it_can_show(cli, tmp_path):
    node = f"{tool('node')} {OUTSIDERS / 'o10_phil_keepers.mjs'} --leave"
    start = time.monotonic()
    out = found(cli, tmp_path, node, "philosophers", "-N", "2", rule="crashed")
    # before: 25 s (15 test runs, most waiting 1.5 s for an end that could not be this one)
    assert time.monotonic() - start < 15, out
    assert "schedule: request 1, deliver philosopher-1#1→2, deliver philosopher-2#1→1, release 1" in out, out


def test_a_node_that_exits_1_at_the_end_of_its_input_is_no_finding(cli, c_nodes):
    # the C node says "unexpected EOF" and exits 1 when its input ends: between runs it is kept
    # (reinit), and at the test's end it is killed, so its exit is never the program's fault
    ran = cli("test", "kmutex", "--node", c_nodes["kmx"], "-N", "3", "--runs", "5")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)


def bees(*flags: str) -> str:
    return " ".join([sys.executable, str(OUTSIDERS / "o11_bees_keeper_crlf.py"), *flags])


HIVE = ("-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=4")


def test_windows_bees_pass_and_a_greedy_keeper_is_found(cli, tmp_path):
    small = ("-N", "3", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2")
    ran = cli("test", "bees", "--node", bees(), *small, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 7 schedules" in ran.stdout, said(ran)
    ran = cli("test", "bees", "--node", bees(), "-N", "5", *HIVE, "--strategy", "pct", "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, bees("--greedy"), "bees", "-N", "5", *HIVE, rule="violation")
    assert "flower (capacity 1) held by" in out and "to 8 steps on 3 nodes" in out, out


def test_a_node_cutting_its_input_at_crlf_is_told_its_lines_end_otherwise(cli):
    ran = cli("test", "bees", "--node", bees("--crlf"), "-N", "2", "--timeout", "1", "--start-timeout", "2")
    # before: buffered, reads all its input, or slow to start — not a word of line ends
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    assert "it has read its input and waits for more" in ran.stdout, said(ran)
    assert "every input ends with \\n alone" in ran.stdout and "--start-timeout" not in ran.stdout, said(ran)


def elves(*flags: str) -> str:
    return " ".join([sys.executable, str(OUTSIDERS / "o11_elves_arbiter_batch.py"), *flags])


def test_an_arbiter_mayor_writing_each_answer_at_once_passes_and_a_pins_only_check_is_found(cli, tmp_path):
    town = ("-o", "contracts=2", "-o", "rounds=1")
    ran = cli("test", "elves", "--node", elves(), "-N", "2", *town, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 108 schedules" in ran.stdout, said(ran)
    ran = cli("test", "elves", "--node", elves(), "-N", "3", "--strategy", "pct", "--runs", "10")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(
        cli,
        tmp_path,
        elves("--pins-only"),
        "elves",
        "-N",
        "3",
        "-o",
        "pins=3",
        "-o",
        "poison=6",
        rule="violation",
    )
    assert "poison (capacity 6) held by" in out and "on 2 nodes" in out, out


@pytest.mark.broker
@pytest.mark.slow  # RabbitMQ runs of C and Python nodes
def test_the_eleventh_outsiders_run_over_rabbitmq(amqp_url, capsys, c_nodes):
    def run(*argv: str) -> tuple[int, dict]:
        code = main(["run", *argv, "--amqp-url", amqp_url, "--dwell", "0", "--json"])
        return code, json.loads(capsys.readouterr().out)

    code, summary = run("kmutex", "--node", c_nodes["kmx"], "-N", "4", "-k", "2", "--requests", "2")
    assert code == 0 and summary["safe"], summary
    code, summary = run("mutex", "--node", c_nodes["central"], "-N", "3", "--requests", "2")
    assert code == 0 and summary["safe"], summary
    code, summary = run("philosophers", "--node", phil(), "-N", "4", "-M", "2")
    assert code == 0 and summary["safe"], summary
    code, summary = run("elves", "--node", elves(), "-N", "3", "--contracts", "3")
    assert code == 0 and summary["safe"], summary
    code, summary = run(
        "bees", "--node", bees(), "-P", "5", "-T", "2", "-K", "1", "--eggs", "2", "--cocoons", "4"
    )
    assert code == 0 and summary["safe"], summary
    code, summary = run("elves", "--node", elves("--pins-only"), "-N", "3", "--pins", "3", "--poison", "6")
    assert code == 1 and "poison (capacity 6)" in json.dumps(summary), summary
