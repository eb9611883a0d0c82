"""``mutexlab test`` on node programs written elsewhere from the docs alone, in languages and I/O
styles the other outsider tests do not cover (tests/outsiders/, ``o9_*``):

* ``o9_mutex_cr.escript`` — Ricart–Agrawala with Carvalho and Roucairol's kept permissions, an
  Erlang/OTP 25 escript: a reader process sends each line to the main loop, a small JSON parser of
  its own; ``keep`` keeps a permission it gave away (two inside), ``crash`` dies of a badmatch;
* ``o9_kmutex_lamport.pl`` — K-mutual exclusion with Lamport's queue in Perl, JSON::PP to read and
  printf to write; ``--k-off`` (K + 1 inside), ``--no-flush`` (no ``$| = 1``), ``--debug`` (the
  queue printed on STDOUT);
* ``o9_phil_stamps.tcl`` — philosophers in Tcl's event loop (fileevent on a non-blocking stdin,
  output fully buffered and flushed after each done), forks to the earlier hunger by Lamport
  stamp; ``-forget`` never hands on a fork asked for during a meal, ``-exit-early`` exits after
  its meals;
* ``o9_bees_asyncio.py`` — mason bees over asyncio's StreamReader and StreamWriter, reeds dealt by
  rank, flowers kept by bee 1, ``pause`` on a flower; ``--greedy`` grants a flower when none is
  free, ``--chatty`` prints on standard output;
* ``o9_elves_poll.c`` — the hamster killers in C over poll(2) and a non-blocking read(2), the
  mayor keeping the tools; ``-DBROKEN_EARLY_STOP`` counts a contract done when its tools are given,
  ``-DBROKEN_SEGV`` dies of a null pointer in round 2.

Each correct one passes every strategy, each bug is found, shrunk and replayed. What they showed
of mutexlab: an escript's crash was shown by its last three stack lines ("in call from
init:do_boot/3") without the line above them naming the error
(``test_an_erlang_crash_is_shown_by_its_error``); and over RabbitMQ a program's fault was headed
"HANDLER RAISED: … (the algorithm's code …)" though no algorithm's code ran
(``test_a_program_fault_over_rabbitmq_is_the_programs``).
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

from mutexlab.cli import main
from mutexlab.director.lines import NodeFault
from mutexlab.transport.outcome import Outcome, decide, render


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


@pytest.fixture(autouse=True)
def no_crash_dump(monkeypatch) -> None:
    # An escript node's runtime, killed with its group, left an empty erl_crash.dump in the
    # working directory (the repository's root) on every run of these tests: no crash dump.
    monkeypatch.setenv("ERL_CRASH_DUMP_SECONDS", "0")


def escript() -> str:
    return f"{tool('escript')} {OUTSIDERS / 'o9_mutex_cr.escript'}"


def test_an_erlang_carvalho_roucairol_node_passes_and_a_kept_permission_is_found(cli, tmp_path):
    ran = cli("test", "mutex", "--node", escript(), "-N", "2", "-R", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 48 schedules" in ran.stdout, said(ran)
    ran = cli("test", "mutex", "--node", escript(), "-R", "2", "--strategy", "pct", "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{escript()} keep", "mutex", "-R", "2", rule="violation")
    assert "[capacity] cs (capacity 1) held by" in out, out


def test_an_erlang_crash_is_shown_by_its_error(cli, tmp_path):
    out = found(cli, tmp_path, f"{escript()} crash", "mutex", rule="crashed")
    # before: "… its standard error ended with: in call from escript:start/1 (escript.erl, line 277)
    # | in call from init:start_em/1 | in call from init:do_boot/3", the error itself not shown
    assert "escript: exception error: no match of right hand side value" in out, out
    assert "to 3 steps on 2 nodes" in out, out


def test_an_escript_that_crashes_in_its_first_init_is_a_finding_not_a_usage_error(cli, tmp_path):
    # escript exits 127 on an uncaught exception, the status of a command not found
    node = tmp_path / "crash_init.escript"
    node.write_text(
        '#!/usr/bin/env escript\nmain(_) ->\n    _ = io:get_line(""),\n    {ok, X} = {error, nope},\n    io:format("~p~n", [X]).\n'
    )
    ran = cli("test", "mutex", "--node", f"{tool('escript')} {node}", "-N", "2", "--runs", "1", "--no-shrink")
    # before: exit 2, "cannot start 'escript': it exited with status 127 before writing anything"
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, said(ran)
    assert "exited with status 127 while handling init" in ran.stdout, said(ran)
    assert "escript: exception error: no match of right hand side value {error,nope}" in ran.stdout, said(ran)


@pytest.mark.parametrize(
    ("node", "crashed"),
    (
        ("read line; echo 'RuntimeError: no peers to ask' >&2; exit 127", True),  # ran, and said why
        ("read line; echo 'config.toml missing, giving up' >&2; exit 127", True),
        ("read line; exit 127", False),  # said nothing: a command not found, as before
        ("read line; ./no-such-helper", False),  # the shell's "not found"
        ("read line; /usr/bin/env no-such-interpreter", False),  # env's "No such file or directory"
        # A launcher's line in the user's language (bash, env and setpriv are translated): its
        # "launcher: " prefix says so where its words cannot.
        ("read line; echo 'bash: Zeile 1: foo: Befehl nicht gefunden' >&2; exit 127", False),
        (
            "read line; echo '/usr/bin/env: „perl\\r“: Datei oder Verzeichnis nicht gefunden' >&2; exit 127",
            False,
        ),
    ),
)
def test_status_127_before_any_output_is_a_crash_unless_a_launcher_said_so(cli, node, crashed):
    ran = cli("test", "mutex", "--node", f"sh -c {json.dumps(node)}", "-N", "2", "--runs", "1", "--no-shrink")
    if crashed:  # before: exit 2, "cannot start 'sh'"
        assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, said(ran)
        assert "exited with status 127 while handling init" in ran.stdout, said(ran)
    else:
        assert ran.returncode == 2 and "cannot start 'sh'" in ran.stderr, said(ran)


@pytest.mark.slow  # some 30 s: a pct search, a stall's timeouts, two findings shrunk
def test_a_perl_lamport_kmutex_passes_and_its_bugs_are_found(cli, tmp_path):
    perl = f"{tool('perl')} {OUTSIDERS / 'o9_kmutex_lamport.pl'}"
    ran = cli("test", "kmutex", "--node", perl, "-N", "4", "-R", "2", "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(
        cli,
        tmp_path,
        f"{perl} --k-off",
        "kmutex",
        "-N",
        "4",
        "-R",
        "2",
        "--strategy",
        "pct",
        rule="violation",
    )
    assert "cs (capacity 2) held by" in out and "on 3 nodes" in out, out
    ran = cli("test", "kmutex", "--node", f"{perl} --no-flush", "--start-timeout", "2", "--timeout", "1")
    assert ran.returncode == 1 and "FINDING [stalled]: node 1 wrote nothing at all" in ran.stdout, said(ran)
    assert "Perl's STDOUT ($| = 1)" in ran.stdout, said(ran)  # the advice names Perl's own switch
    out = found(cli, tmp_path, f"{perl} --debug", "kmutex", rule="garbage")
    assert "wrote a line that is not JSON" in out and "queue: 1/1" in out, out


@pytest.mark.slow  # some 20 s: two searches, two findings shrunk
def test_tcl_event_loop_philosophers_pass_and_their_bugs_are_found(cli, tmp_path):
    tcl = f"{tool('tclsh')} {OUTSIDERS / 'o9_phil_stamps.tcl'}"
    ran = cli("test", "philosophers", "--node", tcl, "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 18 schedules" in ran.stdout, said(ran)
    ran = cli(
        "test", "philosophers", "--node", tcl, "-N", "4", "-R", "2", "--strategy", "pct", "--runs", "20"
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, f"{tcl} -forget", "philosophers", rule="deadlock")
    assert "to 6 steps on 2 nodes" in out and "philosopher-2 still waits" in out, out
    out = found(cli, tmp_path, f"{tcl} -exit-early", "philosophers", rule="crashed")
    # seen at the run's end, or (its end not yet seen, under load) when a peer's message reaches it
    ended = ("after answering release, with nothing asked of it", "while handling recv")
    assert "exited with status 0 " in out and any(words in out for words in ended), out
    # before, by a race: "to 2 steps on 3 nodes" (the shrinking's runs did not wait for the end)
    assert "on 2 nodes" in out, out


HIVE = ("-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=2", "-o", "cocoons=4")


def bees_node(*flags: str) -> str:
    return " ".join([tool("python3"), str(OUTSIDERS / "o9_bees_asyncio.py"), *flags])


@pytest.mark.slow  # some 30 s: an interpreter per bee, two findings
def test_asyncio_bees_pass_and_their_bugs_are_found(cli, tmp_path):
    ran = cli("test", "bees", "--node", bees_node(), "-N", "5", *HIVE, "--runs", "20")  # one retires
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    ran = cli(
        "test",
        "bees",
        "--node",
        bees_node(),
        "-N",
        "6",
        *HIVE,
        "-o",
        "flowers=2",
        "--strategy",
        "pct",
        "--runs",
        "10",
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, bees_node("--greedy"), "bees", "-N", "4", *HIVE, rule="violation")
    assert "[capacity] flower (capacity 1) held by" in out and "to 2 steps on 2 nodes" in out, out
    ran = cli("test", "bees", "--node", bees_node("--chatty"), "-N", "3", *HIVE, "--strategy", "systematic")
    assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout, said(ran)
    assert "not JSON" in ran.stdout and "granted a flower to bee 1, 0 left" in ran.stdout, said(ran)


@pytest.fixture(scope="module")
def elves(tmp_path_factory) -> dict[str, str]:
    where = tmp_path_factory.mktemp("elves")
    built = {}
    for name, flags in (("town", []), ("early", ["-DBROKEN_EARLY_STOP"]), ("segv", ["-DBROKEN_SEGV"])):
        built[name] = str(where / name)
        subprocess.run(
            [
                tool("gcc"),
                "-O2",
                "-Wall",
                "-Werror",
                *flags,
                "-o",
                built[name],
                OUTSIDERS / "o9_elves_poll.c",
            ],
            check=True,
        )
    return built


def test_c_poll_elves_pass_and_their_bugs_are_found(cli, tmp_path, elves):
    small = ("-N", "2", "-o", "contracts=2", "-o", "rounds=1")
    ran = cli("test", "elves", "--node", elves["town"], *small, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively: 18 schedules" in ran.stdout, said(ran)
    ran = cli("test", "elves", "--node", elves["town"], "-N", "4", "--strategy", "pct", "--runs", "20")
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)
    out = found(cli, tmp_path, elves["early"], "elves", rule="violation")
    assert "[stop-before-done] mayor stopped round 1" in out and "on 1 node" in out, out
    out = found(cli, tmp_path, elves["segv"], "elves", rule="crashed")
    assert "killed by signal 11 (SIGSEGV) while handling recv" in out, out
    # before: "to 29 steps on 3 nodes": a node's own crash was never searched for on fewer nodes
    assert "on 1 node " in out, out


HEADER = {
    "event": "run",
    "problem": "mutex",
    "processes": {"1": "node-1", "2": "node-2"},
    "capacities": {"cs": 1},
}


def test_a_program_fault_is_headed_as_the_programs():
    fault = NodeFault("crashed", 2, "node 2 exited with status 127 while handling recv")
    reason = f"PROGRAM node-1#1 from node-1: handler raised: node-2 raised NodeFault: {fault} at {fault.raised_where}"
    outcome = Outcome("run-x", "program-mutex", 2, complete=False)
    outcome.rejected = [{"process": "node-2", "count": 1, "reasons": [reason]}]
    assert decide(outcome, [HEADER | {"algorithm": "program-mutex"}]) == 1
    # before: "HANDLER RAISED: a handler of node-2 raised (the algorithm's code, named below)"
    assert outcome.verdict.startswith("PROGRAM FAILED: the program of node-2 failed"), outcome.verdict
    assert "algorithm" not in outcome.verdict.splitlines()[0], outcome.verdict
    assert "STOPPED: a program failed" in render(outcome)
    # an algorithm's handler is still the algorithm's
    outcome = Outcome("run-y", "mine", 2, complete=False)
    outcome.rejected = [
        {"process": "node-1", "count": 1, "reasons": ["REQ from node-2: handler raised: KeyError"]}
    ]
    decide(outcome, [HEADER | {"algorithm": "mine"}])
    assert outcome.verdict.startswith("HANDLER RAISED: a handler of node-1 raised (the algorithm's code")
    assert "STOPPED: a handler raised" in render(outcome)


@pytest.mark.broker
@pytest.mark.slow  # RabbitMQ runs of escripts, Perl and Tcl
def test_the_outsiders_run_over_rabbitmq(amqp_url, capsys, elves):
    def run(*argv: str) -> tuple[int, dict]:
        code = main(["run", *argv, "--amqp-url", amqp_url, "--dwell", "0", "--json"])
        return code, json.loads(capsys.readouterr().out)

    code, summary = run("mutex", "--node", escript(), "-N", "3", "--requests", "2")
    assert code == 0 and summary["safe"], summary
    code, summary = run(
        "kmutex", "--node", f"perl {OUTSIDERS / 'o9_kmutex_lamport.pl'}", "-N", "4", "-k", "2"
    )
    assert code == 0 and summary["safe"], summary
    code, summary = run(
        "philosophers", "--node", f"tclsh {OUTSIDERS / 'o9_phil_stamps.tcl'}", "-N", "3", "-M", "2"
    )
    assert code == 0 and summary["safe"], summary
    code, summary = run(
        "bees", "--node", bees_node(), "-P", "5", "-T", "2", "-K", "1", "--eggs", "2", "--cocoons", "4"
    )
    assert code == 0 and summary["safe"], summary
    code, summary = run("elves", "--node", elves["town"], "-N", "3")
    assert code == 0 and summary["safe"], summary
    code, summary = run("mutex", "--node", f"{escript()} crash", "-N", "3", "--requests", "2")
    assert code == 1 and summary["verdict"].startswith("PROGRAM FAILED: the program of node-"), summary
    assert "escript: exception error: no match of right hand side value" in json.dumps(summary), summary
