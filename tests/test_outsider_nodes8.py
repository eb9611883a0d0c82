"""``mutexlab test`` on node programs written elsewhere from the docs alone, in styles the other
outsider tests do not cover (tests/outsiders/, ``o8_*`` and ``O8LamportQueue.java``):

* ``o8_kmutex_raymond.rb`` — Raymond's K-mutual exclusion in Ruby (enter with N − K
  permissions, each naming the request it answers); ``--stale`` counts a permission for an
  earlier request (K + 1 inside), ``--slow`` sleeps 2 s before reading, ``--chatty`` writes 4 KB
  of debugging to stderr per input;
* ``o8_phil_hierarchy.lua`` — Dijkstra's resource hierarchy for the philosophers in Lua 5.4, forks
  as messages; ``--left-first`` (a cycle: deadlock), ``--give-while-eating``;
* ``o8_suzuki_kasami.mjs`` — Suzuki–Kasami's token in a Node.js ES module, ``for await`` over
  readline, each answer awaiting a timer tick before it is written; ``--eager`` hands the token
  on while inside, ``--late`` writes its enter from a timer after the done;
* ``O8LamportQueue.java`` — Lamport's queue, a reader thread and a worker joined by a
  ``BlockingQueue``; ``-Dargs=racy`` writes the done from the reader, racing the worker;
* ``o8_bee_pause.c`` — a mason bee in C reading with read(2) into a 1 MB buffer, debugging on
  stderr, writing ``pause`` on a flower and collecting its nectar at the ``wake``;
  ``-DBROKEN_HANDOFF`` hands the reed on before leaving it, ``-DBROKEN_RETIRED`` hands a full
  reed to a retired bee;
* ``o8_elves_arbiter.rb`` — the hamster killers, the whole town in Ruby: the mayor deals the
  contracts and grants pins and poison together; ``--overdraw`` grants past what is left,
  ``--count-dealt`` stops a round once its contracts are dealt;
* ``o8_lamport_iostream.cpp`` — Lamport's queue in C++ over ``std::getline``/``std::cout``
  never flushed by hand (``std::cin``'s tie does it), chatter on ``std::cerr``;
  ``-DBROKEN_ACKS`` enters one acknowledgement short.

Each correct one passes, each bug is found, shrunk and replayed. What they showed of mutexlab:
a line written after a done is said two ways by when it arrived — with the done ("wrote past its
done line") or after it ("wrote after its done line …, before its next input") — which timing
decides; the shrinker took the two for different faults, so a timer's late line found on three
nodes stayed on three (``test_a_late_line_is_shrunk_to_fewer_nodes_however_it_arrived``); and
``run --node`` took a ``pause`` line for an ``event`` without its name: a bee that pauses on a
flower stopped every RabbitMQ run at its first visit, "node-1 raised KeyError: 'event'", blamed on
the program, exit 1 (``test_a_pausing_bee_runs_over_rabbitmq``).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

from mutexlab.cli import main
from mutexlab.director.node import ProgramMessage, ProgramNode
from mutexlab.director.shrink import _said
from mutexlab.protocol import ProtocolError, Schedule


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


def test_a_ruby_raymond_kmutex_passes_and_a_stale_permission_is_found(cli, tmp_path):
    ruby = f"{tool('ruby')} {OUTSIDERS / 'o8_kmutex_raymond.rb'}"
    ran = cli("test", "kmutex", "--node", f"{ruby} --chatty", "-N", "4", "-R", "2", "--runs", "40")
    assert ran.returncode == 0 and "PASS — no finding in random: 40 runs" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{ruby} --stale", "kmutex", "-R", "2", "--strategy", "pct", rule="violation")
    assert "cs (capacity 2) held by" in out, out
    ran = cli("test", "kmutex", "--node", f"{ruby} --slow", "--runs", "3", "--timeout", "1")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)  # the first init has 30 s


@pytest.mark.slow  # some 15-20 s: a systematic search, three findings shrunk
def test_lua_philosophers_by_hierarchy_pass_and_their_bugs_are_found(cli, tmp_path):
    lua = f"{tool('lua5.4')} {OUTSIDERS / 'o8_phil_hierarchy.lua'}"
    ran = cli("test", "philosophers", "--node", lua, "-N", "3", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 155 schedules" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{lua} --left-first", "philosophers", rule="deadlock")
    assert "to 4 steps on 2 nodes" in out, out
    out = found(cli, tmp_path, f"{lua} --give-while-eating", "philosophers", "-R", "2", rule="violation")
    assert "[capacity] fork:" in out, out


@pytest.mark.slow  # some 15-20 s: a systematic search, three findings shrunk
def test_a_nodejs_suzuki_kasami_passes_and_its_bugs_are_found(cli, tmp_path):
    node = f"{tool('node')} {OUTSIDERS / 'o8_suzuki_kasami.mjs'}"
    ran = cli("test", "mutex", "--node", node, "-R", "2", "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    # the token handed on from inside: two inside at once, the violation (which a node's later
    # entry without a request pending, the token back at a node it already served, once hid)
    out = found(cli, tmp_path, f"{node} --eager", "mutex", "--strategy", "pct", rule="violation")
    assert "cs (capacity 1) held by" in out and "to 4 steps on 2 nodes" in out, out
    out = found(cli, tmp_path, f"{node} --late", "mutex", rule="protocol")
    assert "its done line (answering recv)" in out and "to 3 steps on 2 nodes" in out, out


@pytest.mark.slow  # javac, and a JVM per node
def test_a_java_blocking_queue_node_passes_and_a_racing_done_is_found(cli, tmp_path):
    subprocess.run([tool("javac"), "-d", tmp_path, OUTSIDERS / "O8LamportQueue.java"], check=True)
    java = f"java -cp {tmp_path} O8LamportQueue"
    ran = cli("test", "mutex", "--node", java, "-R", "2", "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    ran = cli("test", "mutex", "--node", java.replace("java ", "java -Dargs=racy "), "-N", "2")
    assert ran.returncode == 1 and "FINDING [protocol]" in ran.stdout, said(ran)  # timing: either words


def test_a_cpp_iostream_node_passes_and_an_ack_short_entry_is_found(cli, tmp_path):
    source = OUTSIDERS / "o8_lamport_iostream.cpp"
    built = {}
    for name, flags in (("lamport", []), ("broken", ["-DBROKEN_ACKS"])):
        built[name] = tmp_path / name
        subprocess.run([tool("g++"), "-O2", *flags, "-o", built[name], source], check=True)
    ran = cli("test", "mutex", "--node", str(built["lamport"]), "-R", "2", "--runs", "40")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, str(built["broken"]), "mutex", "--strategy", "systematic", rule="violation")
    assert "to 2 steps on 2 nodes" in out, out


# A node whose line after its done comes in the same write on three nodes and a moment later on
# two: what a timer or a thread does by its timing, made certain here by the size.
LATE = textwrap.dedent(
    """\
    import json, sys, time
    peers = []
    for line in sys.stdin:
        m = json.loads(line)
        out = []
        if m["type"] == "init":
            peers = m["peers"]
        elif m["type"] == "request":
            out = [{"type": "send", "to": p, "body": {"type": "ASK"}} for p in peers]
        text = "".join(json.dumps(o) + "\\n" for o in out) + json.dumps({"type": "done"}) + "\\n"
        late = json.dumps({"type": "state", "state": "LATE"}) + "\\n"
        if m["type"] == "recv" and len(peers) >= 2:
            text += late
        sys.stdout.write(text)
        sys.stdout.flush()
        if m["type"] == "recv" and len(peers) < 2:
            time.sleep(0.005)
            sys.stdout.write(late)
            sys.stdout.flush()
    """
)


def test_a_late_line_is_shrunk_to_fewer_nodes_however_it_arrived(cli, tmp_path):
    program = tmp_path / "late.py"
    program.write_text(LATE)
    node = f"{sys.executable} {program}"
    ran = cli("test", "mutex", "--node", node, "--no-shrink")
    assert "wrote past its done line (answering recv)" in ran.stdout, said(ran)  # on three nodes
    out = found(cli, tmp_path, node, "mutex", rule="protocol")
    assert "wrote after its done line (answering recv)" in out, out  # on two
    # before: "shrunk from 3 steps on 3 nodes to 2 steps on 3 nodes" (on two it said "wrote after")
    assert "to 2 steps on 2 nodes" in out, out


def test_the_two_words_of_a_late_line_are_one_fault():
    line = '{"type": "enter", "resource": "cs"}'
    past = f"node 3 wrote past its done line (answering recv): {line}"
    after = (
        "node 2 wrote after its done line (answering recv), before its next input: every output an "
        "input causes must be written before that input's done (a line from a timer or another "
        f"thread is no input's answer): {line}"
    )
    assert _said(past) == _said(after)
    assert _said(past) != _said(past.replace("recv", "request"))
    # node ids do not count, an exit status does (test_director_shrink_nodes: status 7 is not 1)
    assert _said("node 2 exited with status 1") == _said("node 3 exited with status 1")
    assert _said("node 2 exited with status 1") != _said("node 2 exited with status 4")


@pytest.fixture(scope="module")
def bees(tmp_path_factory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("bees")
    built = {}
    for name, flags in (("bee", []), ("handoff", ["-DBROKEN_HANDOFF"]), ("retired", ["-DBROKEN_RETIRED"])):
        built[name] = str(where / name)
        subprocess.run(
            [tool("gcc"), "-O2", *flags, "-o", built[name], OUTSIDERS / "o8_bee_pause.c"], check=True
        )
    return built


HIVE = ("-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=4")


def test_a_pausing_c_bee_passes_and_its_bugs_are_found(cli, tmp_path, bees):
    small = ("-N", "3", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=1")
    ran = cli("test", "bees", "--node", bees["bee"], *small, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 44 schedules" in ran.stdout, said(ran)
    ran = cli("test", "bees", "--node", bees["bee"], "-N", "6", *HIVE, "--runs", "40")  # two retire
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, bees["handoff"], "bees", "-N", "4", *HIVE, rule="violation")
    assert "[capacity] reed:1 (capacity 1) held by" in out and "wake 1" in out, out
    out = found(cli, tmp_path, bees["retired"], "bees", "-N", "5", *HIVE, rule="violation")
    assert "[eggs-per-reed] reed:1 got a 5th egg" in out, out


class Pausing:
    """A program's process that pauses on every message and says so when woken."""

    def ask(self, line: dict) -> tuple[list[dict], bytes, dict]:
        said = [{"type": "pause"}] if line["type"] == "recv" else [{"type": "event", "event": "woke"}]
        return said, b"", {"type": "done"}


def test_a_program_node_wakes_after_its_pause():
    node = ProgramNode(1, 2, "unused", {}, 0, "")
    node.process = Pausing()  # type: ignore[assignment]
    effects = node.on_message(ProgramMessage(sender=2, ts=1, body={}))  # before: KeyError: 'event'
    assert effects == [Schedule("wake", "cs")], effects  # a wake after the holding dwell
    assert [e.event for e in node.on_local("wake")] == ["woke"]  # the program is told "wake"
    with pytest.raises(ProtocolError):
        node.on_local("wake")  # no pause left: a wake nobody asked for is refused


@pytest.mark.broker
def test_a_pausing_bee_runs_over_rabbitmq(amqp_url, capsys, bees):
    argv = ["run", "bees", "--amqp-url", amqp_url, "-P", "4", "-T", "2", "-K", "1", "--eggs", "2",
            "--cocoons", "4", "--dwell", "0", "--json"]  # fmt: skip
    code = main([*argv, "--node", bees["bee"]])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0, summary  # before: exit 1, "node-1 raised KeyError: 'event'" at its first flower
    code = main([*argv, "--node", bees["handoff"], "--dwell", "0.05"])
    summary = json.loads(capsys.readouterr().out)
    assert code == 1 and "[capacity] reed:" in json.dumps(summary), summary


def test_ruby_elves_with_a_mayor_arbiter_pass_and_their_bugs_are_found(cli, tmp_path):
    town = f"{tool('ruby')} {OUTSIDERS / 'o8_elves_arbiter.rb'}"
    small = ("-N", "2", "-o", "contracts=2", "-o", "rounds=1")
    ran = cli("test", "elves", "--node", town, *small, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 18 schedules" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{town} --overdraw", "elves", rule="violation")
    assert "[capacity] poison (capacity 10) held by" in out, out
    out = found(cli, tmp_path, f"{town} --count-dealt", "elves", rule="violation")
    assert "[stop-before-done] mayor stopped round 1" in out and "to 0 steps on 1 node" in out, out
