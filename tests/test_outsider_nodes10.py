"""``mutexlab test`` on node programs written elsewhere from the docs alone, in languages and I/O
styles the other outsider tests do not cover (tests/outsiders/, ``o10_*``):

* ``o10_bees_keeper.go`` — mason bees in Go: a goroutine feeds stdin's lines to a channel, a
  bufio.Writer flushed after each done, encoding/json's float64 numbers; reeds dealt by rank and
  handed on (NEXT), flowers kept by bee 1; ``-greedy`` grants a flower when none is free;
* ``o10_elves_store.py`` — the hamster killers, the mayor keeping contracts and tools, read by
  select() and os.read() in 7-byte chunks, written with CRLF ends, odd spacing and escaped
  non-ASCII, chatter on standard error; ``--early-stop`` stops a round once its contracts are
  given, ``--lose-poison`` never takes back the poison of a 5-hamster contract;
* ``o10_phil_keepers.mjs`` — philosophers in Node.js (readline's async iterator, awaited
  process.stdout.write), each keeping its left fork and lending it, lower fork first;
  ``--own-first`` drops the hierarchy, ``--leave`` exits after its meals;
* ``o10_kmutex_desk.sh`` — K-mutual exclusion in bash alone (``read -r``, fields by ``[[ =~ ]]``,
  printf), node 1 keeping K permits, a second's start; ``--lenient`` hands out K + 1.

Each correct one passes every strategy, each bug is found, shrunk and replayed. What they showed
of mutexlab: a node that ended after its last answer was named two ways, by when its end was
seen (``test_a_node_that_leaves_after_its_meals_is_named_one_way``), and an interpreter given a
script that is not there was a program that "crashed"
(``test_a_missing_script_is_a_program_that_could_not_run``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

from mutexlab.cli import main
from mutexlab.director.lines import NodeFault
from mutexlab.director.process import NodeProcess


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


@pytest.fixture(scope="module")
def bees(tmp_path_factory) -> str:
    """The Go bees, built once."""
    built = tmp_path_factory.mktemp("go") / "bees"
    subprocess.run(
        [tool("go"), "build", "-o", str(built), str(OUTSIDERS / "o10_bees_keeper.go")],
        check=True,
        env={**os.environ, "GOCACHE": str(built.parent / "cache")},
    )
    return str(built)


HIVE = ("-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=4")


def test_go_bees_pass_and_a_greedy_keeper_is_found(cli, tmp_path, bees):
    small = ("-N", "3", "-o", "reeds=3", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=2")
    ran = cli("test", "bees", "--node", bees, *small, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 48 schedules" in ran.stdout, said(ran)
    ran = cli(
        "test", "bees", "--node", f"{bees} -chatter", "-N", "5", *HIVE, "--strategy", "pct", "--runs", "10"
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{bees} -greedy", "bees", "-N", "5", *HIVE, rule="violation")
    assert "flower (capacity 1) held by" in out and "on 3 nodes" in out, out


def elves() -> str:
    return f"{tool('python3')} {OUTSIDERS / 'o10_elves_store.py'}"


def test_chunked_crlf_elves_pass_and_their_bugs_are_found(cli, tmp_path):
    town = ("-o", "contracts=2", "-o", "rounds=2")
    ran = cli("test", "elves", "--node", elves(), "-N", "1", *town, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 7 schedules" in ran.stdout, said(ran)
    ran = cli(
        "test",
        "elves",
        "--node",
        elves(),
        "-N",
        "3",
        "-o",
        "pins=2",
        "-o",
        "poison=6",
        "--strategy",
        "pct",
        "--runs",
        "10",
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{elves()} --early-stop", "elves", "-N", "2", *town, rule="violation")
    assert "[stop-before-done] mayor stopped round 1 but contract 1.2 was never done" in out, out
    assert "to 5 steps on 1 node" in out, out
    out = found(
        cli,
        tmp_path,
        f"{elves()} --lose-poison",
        "elves",
        "-N",
        "2",
        "-o",
        "contracts=3",
        "-o",
        "poison=9",
        rule="deadlock",
    )
    assert "[contract-not-done] contract 1.3 was never done" in out, out


def phil() -> str:
    return f"{tool('node')} {OUTSIDERS / 'o10_phil_keepers.mjs'}"


def test_node_js_philosophers_pass_and_dropping_the_hierarchy_deadlocks(cli, tmp_path):
    ran = cli("test", "philosophers", "--node", phil(), "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 10 schedules" in ran.stdout, said(ran)
    ran = cli(
        "test", "philosophers", "--node", phil(), "-N", "4", "-R", "2", "--strategy", "pct", "--runs", "10"
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{phil()} --own-first", "philosophers", "-N", "3", rule="deadlock")
    assert "philosopher-1, philosopher-2 still wait" in out and "to 4 steps on 2 nodes" in out, out


def desk(*flags: str) -> str:
    return " ".join([tool("bash"), str(OUTSIDERS / "o10_kmutex_desk.sh"), *flags])


def test_a_bash_permit_desk_passes_and_a_lenient_one_is_found(cli, tmp_path):
    ran = cli("test", "kmutex", "--node", desk("--sleepy", "0"), "-N", "3", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 143 schedules" in ran.stdout, said(ran)
    # a slow starter: each of its processes takes 4 s to its first answer, more than --timeout (3 s:
    # a bash node's later answers under a loaded CI took more than 1 s)
    ran = cli(
        "test",
        "kmutex",
        "--node",
        desk("--sleepy", "4"),
        "-N",
        "3",
        "-R",
        "2",
        "--timeout",
        "3",
        "--runs",
        "3",
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, desk("--lenient", "--sleepy", "0"), "kmutex", "-N", "4", rule="violation")
    assert "cs (capacity 2) held by" in out and "to 7 steps on 3 nodes" in out, out


@pytest.mark.slow  # some 5 s (30 s before the shrinking waited only where the end can show)
def test_a_node_that_leaves_after_its_meals_is_named_one_way(cli, tmp_path):
    out = found(cli, tmp_path, f"{phil()} --leave", "philosophers", "-N", "2", rule="crashed")
    # before: "node 1 exited with status 0 while handling recv" when a neighbour's message came
    # before its end was seen (here: not shrunk, "no smaller run showed [crashed]"), "after
    # answering release, with nothing asked of it" when its end came first
    assert "node 1 exited with status 0 after answering release, with nothing asked of it" in out, out
    assert "schedule: request 1, deliver philosopher-1#1→2, deliver philosopher-2#1→1, release 1" in out, out


def test_an_end_seen_at_the_next_input_is_worded_as_an_end_seen_after_the_last(tmp_path):
    node = tmp_path / "leave.py"
    node.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    m = json.loads(line)\n"
        "    print(json.dumps({'type': 'done', 'reinit': True} if m['type'] == 'init' else {'type': 'done'}), flush=True)\n"
        "    if m['type'] == 'release':\n"
        "        break\n"
    )
    proc = NodeProcess(["python3", str(node)], 1, frozenset({2}), 5.0)
    try:
        proc.reusable = proc.ask({"type": "init", "id": 1})[2].get("reinit") is True  # as a run does
        proc.ask({"type": "request", "resource": "cs"})
        proc.ask({"type": "release", "resource": "cs"})
        proc.proc.wait(5)  # its end, before the next input: seen by that input (a race in a run)
        with pytest.raises(NodeFault) as seen:
            proc.ask({"type": "recv", "from": 2, "body": {"type": "REPLY"}})
        by_input = str(seen.value)
    finally:
        proc.kill()
    proc = NodeProcess(["python3", str(node)], 1, frozenset({2}), 5.0)
    try:
        proc.reusable = proc.ask({"type": "init", "id": 1})[2].get("reinit") is True  # as a run does
        proc.ask({"type": "request", "resource": "cs"})
        proc.ask({"type": "release", "resource": "cs"})
        proc.late(2.0)  # its end, seen between inputs
        with pytest.raises(NodeFault) as seen:
            proc.gone()
        by_end = str(seen.value)
    finally:
        proc.kill()
    # before: "node 1 exited with status 0 while handling recv" against "… after answering release,
    # with nothing asked of it: …"
    assert by_input == by_end, (by_input, by_end)
    assert "exited with status 0 after answering release, with nothing asked of it" in by_end, by_end


@pytest.mark.parametrize(
    ("interpreter", "script"),
    (("python3", "missing.py"), ("node", "missing.mjs"), ("perl", "lib/missing.pl")),
)
def test_a_missing_script_is_a_program_that_could_not_run(cli, tmp_path, interpreter, script):
    ran = cli("test", "mutex", "--node", f"{tool(interpreter)} {tmp_path / script}", "-N", "2", "--runs", "1")
    # before: exit 1, "FINDING [crashed]: node 1 exited with status 2 while handling init; …"
    assert ran.returncode == 2 and "FINDING" not in ran.stdout, said(ran)
    assert f"cannot start {interpreter!r} on '{tmp_path / script}': no such file" in ran.stderr, said(ran)


def test_a_script_that_exits_naming_a_missing_file_of_its_own_still_crashed(cli, tmp_path):
    node = tmp_path / "reads_config.py"
    node.write_text("import sys\nsys.stdin.readline()\nopen('settings.py')\n")
    ran = cli(
        "test", "mutex", "--node", f"python3 {node} settings.py", "-N", "2", "--runs", "1", "--no-shrink"
    )
    # the script is there: it ran, and its own missing file is its fault
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, said(ran)
    assert "No such file or directory: 'settings.py'" in ran.stdout, said(ran)


@pytest.mark.broker
@pytest.mark.slow  # RabbitMQ runs of Go, Python and Node.js
def test_the_tenth_outsiders_run_over_rabbitmq(amqp_url, capsys, bees):
    def run(*argv: str) -> tuple[int, dict]:
        code = main(["run", *argv, "--amqp-url", amqp_url, "--dwell", "0", "--json"])
        return code, json.loads(capsys.readouterr().out)

    code, summary = run(
        "bees", "--node", bees, "-P", "5", "-T", "2", "-K", "1", "--eggs", "2", "--cocoons", "4"
    )
    assert code == 0 and summary["safe"], summary
    code, summary = run("elves", "--node", elves(), "-N", "3", "--contracts", "3")
    assert code == 0 and summary["safe"], summary
    code, summary = run("philosophers", "--node", phil(), "-N", "4", "-M", "2")
    assert code == 0 and summary["safe"], summary
    code, summary = run("kmutex", "--node", desk(), "-N", "4", "-k", "2", "--requests", "2")
    assert code == 0 and summary["safe"], summary
    code, summary = run("elves", "--node", f"{elves()} --early-stop", "-N", "2", "--contracts", "2")
    assert code == 1 and "stop-before-done" in json.dumps(summary), summary


def test_an_exit_of_fewer_units_than_entered_is_named_so(cli, tmp_path):
    node = tmp_path / "two_units.py"
    node.write_text(
        "import json, sys\n"
        "for line in sys.stdin:\n"
        "    kind = json.loads(line)['type']\n"
        "    if kind == 'request':\n"
        "        print(json.dumps({'type': 'enter', 'resource': 'cs', 'units': 2}))\n"
        "    elif kind == 'release':\n"
        "        print(json.dumps({'type': 'exit', 'resource': 'cs'}))\n"
        "    print(json.dumps({'type': 'done'}), flush=True)\n"
    )
    ran = cli("test", "mutex", "--node", f"python3 {node}", "-N", "1", "--runs", "1", "--no-shrink")
    # before: "node 1 did not exit cs when asked to release it", though it wrote its exit; its
    # 2 units of a cs of capacity 1 are a violation already, the finding, the fault said after it
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, said(ran)
    assert "node-1 took 2 units of cs, more than its capacity 1" in ran.stdout, said(ran)
    assert (
        "then, in step 2: node 1 exited 1 of the 2 units of cs it held when asked to release it" in ran.stdout
    ), said(ran)


def test_run_refuses_a_missing_script_before_it_starts(cli, tmp_path):
    script = tmp_path / "missing.py"
    ran = cli(
        "run", "mutex", "--node", f"python3 {script}", "--amqp-url", "amqp://127.0.0.1:1/", "--dwell", "0"
    )
    # before: it went on to the broker (here none: exit 3); with one, every node's "cannot start"
    # ended the run "PROGRAM FAILED", exit 1
    assert ran.returncode == 2, said(ran)
    assert f"--node: 'python3' is to run '{script}': no such file" in ran.stderr, said(ran)
