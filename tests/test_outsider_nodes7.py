"""``mutexlab test`` (and ``run --node``) on node programs written elsewhere from the docs alone, in
languages and styles the other outsider tests do not cover (tests/outsiders/, ``o7_*``):

* ``o7_ra_threads.rb`` — Ricart–Agrawala in Ruby: a reader thread feeding a ``Queue``, each
  answer written in one burst; ``--tie`` (a wrong tie-break), ``--lost`` (the last deferred
  REPLY never sent), ``--timer`` (a retry thread writing behind ``done``), ``--debug`` (a debugging
  line on stdout), ``--assert`` (exit 3 on a legal input), ``--payload`` (nested unicode
  payloads of 34 KB), ``--huge`` (58 KB: a line ``test`` takes, too large for RabbitMQ);
* ``o7_kmutex_coord.lua`` — a K-permit coordinator in plain Lua 5.4 with its own JSON code;
  ``--offbyone`` (K + 1 inside), ``--lostgrant`` (a permit given back without serving the
  queue: a deadlock at K = 1), ``--fifo-bug`` (LIFO: still correct), ``--noflush``;
* ``o7_bees_keeper.rb`` — the mason bees in Ruby, bee 1 also the keeper of reeds and flowers, one
  ``puts`` per line; ``--flower-offbyone``, ``--crowded`` (a bee too many on a reed),
  ``--no-visit`` (an egg without a flower);
* ``o7_phil_cm.awk`` — Chandy–Misra's philosophers in gawk, fields cut out with ``match()``;
  ``bug=greedy`` (deadlock), ``bug=onefork``, ``bug=wrap`` (the wrong neighbour across the wrap),
  ``bug=twolines`` (an answer and its done on one line).

Each correct one passes, each bug is found (and shrunk, and replayed). A missing interpreter is a
skip, a failure under CI (.ci/run installs ruby and lua5.4).
"""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS

from mutexlab.cli import main


def interpreter(name: str) -> str:
    if shutil.which(name) is None:
        missing(f"{name} is not installed")
    return name


@pytest.fixture(scope="module")
def ruby() -> str:
    return f"{interpreter('ruby')} {OUTSIDERS / 'o7_ra_threads.rb'}"


@pytest.fixture(scope="module")
def lua() -> str:
    return f"{interpreter('lua5.4')} {OUTSIDERS / 'o7_kmutex_coord.lua'}"


@pytest.fixture(scope="module")
def gawk() -> str:
    return f"{interpreter('gawk')} -f {OUTSIDERS / 'o7_phil_cm.awk'}"


def found(cli, tmp_path, node: str, *args: str, rule: str, replay: bool = True) -> str:
    scenario = tmp_path / "ce.json"
    ran = cli("test", *args, "--node", node, "--seed", "1", "--counterexample", scenario)
    assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout, ran.stdout
    if replay:
        again = cli("replay", scenario, "--node", node)
        assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    return ran.stdout


def test_a_threaded_ruby_node_passes_and_each_planted_bug_is_found(cli, tmp_path, ruby):
    ran = cli("test", "mutex", "--node", f"{ruby} --payload", "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 9 schedules" in ran.stdout, ran.stdout
    out = found(cli, tmp_path, f"{ruby} --tie", "mutex", rule="violation")
    assert "[capacity] cs (capacity 1)" in out and "on 2 nodes" in out, out
    out = found(cli, tmp_path, f"{ruby} --lost", "mutex", rule="deadlock")
    assert "still waits for the resource" in out, out
    out = found(cli, tmp_path, f"{ruby} --timer", "mutex", rule="protocol")
    assert "wrote past its done line (answering request)" in out, out
    out = found(cli, tmp_path, f"{ruby} --debug", "mutex", rule="garbage")
    assert "DEBUG request from" in out and "to 2 steps on 2 nodes" in out, out  # before: on 3 nodes
    out = found(cli, tmp_path, f"{ruby} --deep", "mutex", rule="garbage", replay=False)
    # before: "wrote a line that is not JSON: JSON nested more than 64 deep" (it is JSON)
    assert "wrote a line mutexlab does not take: JSON nested more than 64 deep (at most 64 arrays" in out, out
    out = found(cli, tmp_path, f"{ruby} --assert", "mutex", rule="crashed")
    assert "exited with status 3" in out and "assertion failed: a REQUEST while inside" in out, out
    assert "steps on 2 nodes" in out, out  # a node's own fault is shrunk to fewer nodes too


def test_a_lua_coordinator_passes_and_its_off_by_one_and_lost_grant_are_found(cli, tmp_path, lua):
    ran = cli("test", "kmutex", "--node", lua, "-N", "3", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 143 schedules" in ran.stdout, ran.stdout
    ran = cli("test", "kmutex", "--node", f"{lua} --fifo-bug", "-N", "4", "--requests", "2", "--runs", "60")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout  # LIFO serves everyone too
    out = found(cli, tmp_path, f"{lua} --offbyone", "kmutex", "-N", "4", "--requests", "2", rule="violation")
    assert "cs (capacity 2) held by" in out and "on 3 nodes" in out, out
    out = found(cli, tmp_path, f"{lua} --lostgrant", "kmutex", "-o", "k=1", rule="deadlock")
    assert "on 2 nodes" in out, out
    ran = cli(
        "test", "kmutex", "--node", f"{lua} --noflush", "-N", "2", "--timeout", "1", "--start-timeout", "1"
    )
    assert ran.returncode == 1 and "FINDING [stalled]: node 1 wrote nothing at all" in ran.stdout, ran.stdout


def test_ruby_bees_with_a_keeper_pass_and_their_bugs_are_found(cli, tmp_path, ruby):
    bees = ruby.replace("o7_ra_threads.rb", "o7_bees_keeper.rb")
    hive = ("-o", "reeds=3", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=2")
    ran = cli("test", "bees", "--node", bees, "-N", "3", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1",
              "-o", "cocoons=1", "--strategy", "systematic")  # fmt: skip
    assert ran.returncode == 0 and "PASS — searched exhaustively: 18 schedules" in ran.stdout, ran.stdout
    out = found(cli, tmp_path, f"{bees} --flower-offbyone", "bees", "-N", "4", *hive, rule="violation")
    assert "[capacity] flower (capacity 1) held by" in out, out
    two_reeds = ("-o", "reeds=2", *hive[2:])
    out = found(cli, tmp_path, f"{bees} --crowded", "bees", "-N", "4", *two_reeds, rule="violation")
    assert "[eggs-per-reed]" in out, out
    out = found(cli, tmp_path, f"{bees} --no-visit", "bees", "-N", "4", *hive, rule="violation")
    assert "[egg-without-nectar] bee-1 laid an egg" in out and "on 1 node" in out, out


def test_gawk_philosophers_pass_and_their_bugs_are_found(cli, tmp_path, gawk):
    ran = cli("test", "philosophers", "--node", gawk, "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 18 schedules" in ran.stdout, ran.stdout
    ran = cli(
        "test", "philosophers", "--node", gawk, "-N", "5", "--requests", "2", "--reorder", "--runs", "40"
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout
    out = found(cli, tmp_path, f"{gawk} -v bug=greedy", "philosophers", "-N", "4", rule="deadlock")
    assert "to 6 steps on 2 nodes" in out, out
    out = found(cli, tmp_path, f"{gawk} -v bug=onefork", "philosophers", "-N", "4", rule="violation")
    assert "[eats-without-forks] philosopher-1 eats without fork:2" in out, out
    found(cli, tmp_path, f"{gawk} -v bug=wrap", "philosophers", "-N", "4", rule="deadlock")
    out = found(cli, tmp_path, f"{gawk} -v bug=twolines", "philosophers", rule="garbage", replay=False)
    assert "two JSON values on one line" in out, out


def test_a_step_of_large_messages_is_published_in_frames_that_fit():
    """A program's broadcast of two 34 KB messages is one step: one frame of 68 KB, which every
    receiver refused unread (dead-lettered: the run stalled, "waits for nothing from anyone").
    Cut in order into frames under the limit, each addressee reads its own, in link order."""
    from mutexlab.bus.wire import MAX_BODY, frames, parse_frame

    big = {"type": "PROGRAM", "sender": 1, "ts": 1, "body": {"filler": "λ" * 17_000}}
    sends = [
        (dest, seq, f"node-1#{n}", {"node-1": n}, {**big, "ts": n})
        for n, (dest, seq) in enumerate([("node-2", 1), ("node-3", 1), ("node-2", 2), ("node-3", 2)], 1)
    ]
    keys = ["PROGRAM.node-2", "PROGRAM.node-3"]
    published = frames("r", "node-1", sends, None, keys)
    assert len(published) > 1 and all(len(body) <= MAX_BODY for _, body in published)
    got: dict[str, list[int]] = {"node-2": [], "node-3": []}
    for to, body in published:
        for key in to:
            me = key.rpartition(".")[2]
            _, envs = parse_frame(body, "r", me, {"node-1": 1, "node-2": 2, "node-3": 3})
            got[me] += [env["seq"] for env in envs]
    assert got == {"node-2": [1, 2], "node-3": [1, 2]}
    small = [(d, s, i, vc, {**m, "body": {}}) for d, s, i, vc, m in sends]
    assert [to for to, _ in frames("r", "node-1", small, None, keys)] == [keys]  # one frame, as before


def run(capsys, amqp_url: str, program: str, *flags: str) -> tuple[int, dict]:
    argv = ["run", "mutex", "--node", program, "--amqp-url", amqp_url, "--dwell", "0", "--json", *flags]
    code = main(argv)
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.broker
def test_large_payloads_over_rabbitmq_are_delivered_and_a_too_large_one_is_named(amqp_url, capsys, ruby):
    code, summary = run(capsys, amqp_url, f"{ruby} --payload", "-N", "3", "--requests", "2")
    assert code == 0, summary  # before: every step of two REQUESTs dead-lettered, exit 3 (stalled)
    code, summary = run(capsys, amqp_url, f"{ruby} --huge", "-N", "2", "--requests", "1")
    assert code == 1, summary
    assert "sent a message of 58,037 bytes: over RabbitMQ a message's body is at most 57,344" in json.dumps(
        summary
    )


@pytest.mark.parametrize(
    "step, words",
    [
        ({"do": "request", "node": 9}, "step 1 (request by node 9) names a node the run of 3 does not have"),
        (
            {"do": "deliver", "node": 1, "id": "node-7#1"},
            "step 1 (deliver node-7#1) names a sender the run of 3",
        ),
    ],
)
def test_a_counterexample_naming_a_node_the_run_lacks_is_malformed(cli, tmp_path, lua, step, words):
    """A hand-edited counterexample: before, the program was blamed — ``nondeterministic`` (exit 1,
    "it behaved differently before it") on the program the file names, "not possible on this
    program" (exit 3) on another; the file is what is wrong (exit 2)."""
    path = tmp_path / "ce.json"
    scenario = {"kind": "mutexlab-program-scenario", "problem": "kmutex", "nodes": 3, "requests": 1}
    path.write_text(json.dumps(scenario | {"options": {"k": 2}, "steps": [step]}))
    ran = cli("replay", str(path), "--node", lua)
    assert ran.returncode == 2 and f"malformed scenario: {words}" in ran.stderr, ran.stdout + ran.stderr
