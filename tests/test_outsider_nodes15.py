"""``mutexlab test`` on node programs written elsewhere from the docs alone, in habits the other
outsider tests do not cover (tests/outsiders/, ``o15_*``):

* ``o15_lamport_py2`` — Lamport's mutex in Python 2.7, a script without a suffix (no ``.py``:
  Python 3's tools here cannot parse it) (``print`` a statement, ``raw_input()``,
  ``sys.stdout.flush()``); ``BROKEN_TIE=1`` in its environment compares timestamps alone, and
  ``--iterate`` reads with ``for line in sys.stdin``, whose read-ahead waits for 8 KB;
* ``o15_sk_select.go`` — Suzuki–Kasami in Go, run by ``go run``: a goroutine scanning stdin into a
  channel, a ``select`` loop, one ``bufio.Writer``; ``BROKEN_SK=1`` hands the token over from
  inside, ``-lazy-flush`` flushes every other answer;
* ``o15_phil_coroutine.tcl`` — Chandy–Misra's philosophers in Tcl 8.6, the philosopher's life one
  coroutine resumed with each input line, fields read by regexp (the input's own type its last
  key); ``BROKEN_CLEAN=1`` hands over a fork asked for while eating;
* ``o15_kmutex_procs.escript`` — Raymond's k-mutex in an escript, a process per concern (reader,
  clock, deferred table, writer), called synchronously; ``BROKEN_COUNT=1`` enters one reply short,
  ``BROKEN_STALE=1`` counts a late reply of an earlier request.

What they showed of mutexlab, each fixed: a Python 2 node (or ``env VAR=1 python3 …``) was given
Python 3's flush; ``go run``'s stall was read on the go tool, "in its event loop"; an Erlang term
printed on stdout was plain garbage; an escript that does not compile (its errors on stdout) was
told "debugging goes to standard error"; an escript with ``%%! -noinput`` that never read its init
was told it had "most likely handled its init".
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

from mutexlab.director.lines import NodeFault, parse
from mutexlab.director.process import BUFFERED
from mutexlab.director.waits import buffered_for


@pytest.fixture(autouse=True)
def no_crash_dump(monkeypatch) -> None:
    # an escript's runtime killed with its group leaves an empty erl_crash.dump in the working
    # directory (the repository's root): none
    monkeypatch.setenv("ERL_CRASH_DUMP_SECONDS", "0")


def tool(name: str) -> str:
    if shutil.which(name) is None:
        missing(f"{name} is not installed")
    return name


def python2() -> str:
    """A Python 2.7 interpreter (on PATH, or pyenv's), else a skip: Debian 12 ships none, and
    CI cannot install one."""
    for found in [
        shutil.which("python2.7"),
        shutil.which("python2"),
        *glob.glob(os.path.expanduser("~/.pyenv/versions/2.7*/bin/python2.7")),
    ]:
        if (
            found
            and subprocess.run(
                [found, "-c", "import sys; sys.exit(sys.version_info[0] != 2)"], capture_output=True
            ).returncode
            == 0
        ):
            return found
    pytest.skip("no Python 2.7 interpreter (Debian 12 and later ship none)")


def passes(cli, problem: str, node: str, *args: str, systematic: tuple[str, ...] = ("-N", "2")) -> None:
    for strategy in ("random", "pct"):
        ran = cli("test", problem, "--node", node, *args, "--strategy", strategy, "--runs", "20")
        assert ran.returncode == 0 and "PASS — no finding" in ran.stdout, said(ran)
    ran = cli("test", problem, "--node", node, *systematic, "--strategy", "systematic")
    assert ran.returncode == 0 and "PASS — searched exhaustively" in ran.stdout, said(ran)


def found(cli, tmp_path, problem: str, node: str, *args: str, rule: str) -> list[str]:
    """The finding by every strategy, each shrunk and its counterexample replayed."""
    scenario, outs = tmp_path / "ce.json", []
    for strategy in ("random", "pct", "systematic"):
        ran = cli(
            "test", problem, "--node", node, *args, "--strategy", strategy, "--seed", "1",
            "--counterexample", scenario,
        )  # fmt: skip
        assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout, said(ran)
        assert f"found by {strategy}: " in ran.stdout and "shrunk from" in ran.stdout, said(ran)
        again = cli("replay", scenario, "--node", node)
        assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)
        outs.append(ran.stdout)
    return outs


def stall(cli, problem: str, node: str, *args: str) -> str:
    """The stall ``node`` comes to in one run (2 s for every answer, its first too)."""
    ran = cli("test", problem, "--node", node, *args, "--runs", "1", "--timeout", "2", "--start-timeout", "2")
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    return ran.stdout


# --- Python 2 -------------------------------------------------------------------------------------


def test_a_python2_lamport_node_passes_and_a_tie_by_time_alone_is_a_violation(cli, tmp_path):
    node = f"{python2()} {OUTSIDERS / 'o15_lamport_py2'}"
    passes(cli, "mutex", node, "--requests", "2")
    for out in found(cli, tmp_path, "mutex", f"env BROKEN_TIE=1 {node}", rule="violation"):
        # both ask at stamp 1, each ACKs the other: four deliveries, both first by time alone
        assert "to 6 steps on 2 nodes" in out and "cs (capacity 1) held by" in out, out


def test_a_python2_node_reading_ahead_is_told_in_python_2s_words(cli):
    # the command says `python`, pyenv's, or a path: what runs is Python 2.7, /proc says so
    out = stall(cli, "mutex", f"{python2()} {OUTSIDERS / 'o15_lamport_py2'} --iterate")
    assert "Python 2: sys.stdout.flush() after each done" in out, out
    assert "`for line in sys.stdin` reads 8 KB ahead, even under -u" in out, out
    assert "print(…, flush=True)" not in out, out  # before: Python 3's print, a syntax error there


def test_the_flush_advice_looks_through_env_and_at_what_runs():
    python3 = buffered_for(["env", "BROKEN=1", "python3", "node.py"], BUFFERED)
    assert python3.endswith(
        "— Python: print(…, flush=True), or python3 -u — PYTHONUNBUFFERED=1 in an environment hides this"
    ), python3
    python2 = buffered_for(["./node.py"], BUFFERED, "/usr/bin/python2.7")  # its #! says python2
    assert "— Python 2: sys.stdout.flush()" in python2, python2
    assert buffered_for(["./node"], BUFFERED, "/srv/node") == BUFFERED  # nothing known: no language
    assert "— Go: Flush() the bufio.Writer" in buffered_for(["go", "run", "n.go"], BUFFERED)


# --- Go, by go run --------------------------------------------------------------------------------


def test_a_go_run_suzuki_kasami_node_passes_and_a_token_given_from_inside_is_a_violation(cli, tmp_path):
    node = f"{tool('go')} run {OUTSIDERS / 'o15_sk_select.go'}"
    passes(cli, "mutex", node, "--requests", "2", systematic=("-N", "2", "--requests", "2"))
    for out in found(cli, tmp_path, "mutex", f"env BROKEN_SK=1 {node}", rule="violation"):
        # node 1 holds the token and is inside; node 2's request takes it from there
        assert "to 4 steps on 2 nodes" in out and "cs (capacity 1) held by" in out, out


def test_a_go_run_node_that_does_not_flush_is_read_below_the_go_tool(cli):
    out = stall(cli, "mutex", f"{tool('go')} run {OUTSIDERS / 'o15_sk_select.go'} -lazy-flush")
    # before: the go tool itself was read, idle in epoll: "it waits in its event loop"
    assert "did not answer request" in out and "event loop" not in out, out
    assert "a thread of it waits for its next input (blocked reading its standard input)" in out, out
    assert "— Go: Flush() the bufio.Writer after each done" in out, out


# --- Erlang -------------------------------------------------------------------------------------


def escript() -> str:
    return f"{tool('escript')} {OUTSIDERS / 'o15_kmutex_procs.escript'}"


def test_an_escript_with_a_process_per_concern_passes_and_one_reply_short_lets_k_plus_1_in(cli, tmp_path):
    passes(cli, "kmutex", escript(), "-N", "3", "--requests", "2", systematic=("-N", "2", "-o", "k=1"))
    for out in found(cli, tmp_path, "kmutex", f"env BROKEN_COUNT=1 {escript()}", rule="violation"):
        # three requests, no delivery: each enters with none of the one reply it needs
        assert "to 3 steps on 3 nodes" in out and "cs (capacity 2) held by" in out, out


def test_a_late_reply_counted_for_the_next_request_is_found_by_random_and_pct(cli):
    for strategy in ("random", "pct"):
        ran = cli(
            "test", "kmutex", "--node", f"env BROKEN_STALE=1 {escript()}", "-N", "3", "-R", "2",
            "--strategy", strategy, "--seed", "1", "--no-shrink",
        )  # fmt: skip
        assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, said(ran)
        assert "cs (capacity 2) held by node-" in ran.stdout, said(ran)


def variant(tmp_path, old: str, new: str) -> str:
    text = (OUTSIDERS / "o15_kmutex_procs.escript").read_text()
    assert old in text
    path = tmp_path / "variant.escript"
    path.write_text(text.replace(old, new))
    return f"{tool('escript')} {path}"


def test_an_escript_that_does_not_compile_is_told_so(cli, tmp_path):
    # its helper named after a BIF (node/1): escript writes the compiler's errors on standard output
    node = variant(tmp_path, "serve(", "node(")
    ran = cli("test", "kmutex", "--node", node, "--runs", "1")
    assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout, said(ran)
    assert "the first line it wrote, and then it exited with status 127" in ran.stdout, said(ran)
    assert "escript: There were compilation errors." in ran.stdout, said(ran)
    assert "ambiguous call of overridden pre R14 auto-imported BIF node/1" in ran.stdout, said(ran)


def test_a_usage_message_and_an_exit_is_told_as_such(cli):
    # it ends before its init is written (a crash found writing) or after (its line read first):
    # the same finding either way, and shrinking keeps it
    for node in ("sh -c 'echo usage: node ID; exit 2'", "sh -c 'read x; echo usage: node ID; exit 2'"):
        ran = cli("test", "mutex", "--node", node, "--runs", "1")
        assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout, said(ran)
        assert "and then it exited with status 2: most likely what it said as it failed" in ran.stdout, said(
            ran
        )
        assert "; the line: usage: node ID" in ran.stdout and "unshrunk" not in ran.stdout, said(ran)
    # a banner of a program that runs on is no failing start
    ran = cli(
        "test",
        "mutex",
        "--node",
        f"{sys.executable} -c 'print(\"hello\", flush=True); input()'",
        "--runs",
        "1",
    )
    assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout and "then it" not in ran.stdout, said(
        ran
    )


def test_an_escript_reading_no_input_is_told_it_has_not_read_it(cli, tmp_path):
    node = variant(tmp_path, "%% -*- erlang -*-\n", "%% -*- erlang -*-\n%%! -noinput\n")
    out = stall(cli, "kmutex", node)
    # before: "it has most likely handled its init without writing its done line"
    assert "it has not read its input (" in out and "bytes wait unread in its standard input)" in out, out
    assert "handled its init" not in out, out
    out = stall(cli, "mutex", f"{sys.executable} -c 'import time; time.sleep(60)'")
    assert "it has not read its input (" in out, out


def test_an_erlang_term_on_stdout_is_named_as_one():
    for line in (b'#{<<"reinit">> => true,<<"type">> => <<"done">>}', b"[{type,done}]", b'%{type: "done"}'):
        with pytest.raises(NodeFault) as fault:
            parse(line, 1, frozenset({2}))
        assert "an object in its language's own notation" in str(fault.value), fault.value
        assert "Erlang's io:format" in str(fault.value), fault.value
    with pytest.raises(NodeFault) as fault:  # a list of no such pair stays plain garbage
        parse(b"[{a,b}]", 1, frozenset({2}))
    assert "own notation" not in str(fault.value)


# --- Tcl 8.6 coroutines ---------------------------------------------------------------------------


def test_a_tcl_coroutine_philosopher_passes_and_a_fork_given_while_eating_is_a_violation(cli, tmp_path):
    node = f"{tool('tclsh')} {OUTSIDERS / 'o15_phil_coroutine.tcl'}"
    passes(cli, "philosophers", node, "-N", "4", "--requests", "2")
    for out in found(cli, tmp_path, "philosophers", f"env BROKEN_CLEAN=1 {node}", rule="violation"):
        # both hungry; philosopher 1 eats, then gets 2's requests and hands both forks over
        assert "to 6 steps on 2 nodes" in out and "fork:1 (capacity 1) held by" in out, out


# --- a violation, then a node's fault --------------------------------------------------------------

GREEDY = """
import json, sys
for line in sys.stdin:
    kind = json.loads(line)["type"]
    if kind == "request":
        print(json.dumps({"type": "enter", "resource": "cs"}))
    elif kind == "release":  # the bug after the bug: in again at once
        print(json.dumps({"type": "exit", "resource": "cs"}))
        print(json.dumps({"type": "enter", "resource": "cs"}))
    print(json.dumps({"type": "done"}), flush=True)
"""


def test_a_violation_before_a_nodes_fault_is_the_finding(cli, tmp_path):
    program = tmp_path / "greedy.py"
    program.write_text(GREEDY)
    node = f"{sys.executable} {program}"
    scenario = tmp_path / "greedy.json"
    scenario.write_text(
        json.dumps(
            {
                "kind": "mutexlab-program-scenario",
                "problem": "mutex",
                "nodes": 2,
                "requests": 1,
                "options": {},
                "seed": 1,
                "faults": {"reorder": False, "duplicate": 0, "crash": 0},
                "program": [sys.executable, str(program)],
                "finding": {"rule": "violation", "message": "the audit: VIOLATION (1)"},
                "steps": [
                    {"do": "request", "node": 1},
                    {"do": "request", "node": 2},
                    {"do": "release", "node": 1},
                ],
            }
        )  # fmt: skip
    )
    ran = cli("replay", scenario, "--node", node)
    # before: [protocol] alone, the two inside at once (steps 1 and 2) never said
    assert ran.returncode == 1 and "FINDING [violation] (step 3)" in ran.stdout, said(ran)
    assert "cs (capacity 1) held by node-1 (1 unit, line 3), node-2 (1 unit, line 5)" in ran.stdout, said(ran)
    assert "then, in step 3: node 1 entered cs without a request pending" in ran.stdout, said(ran)
    assert "the recorded finding reproduced" in ran.stdout, said(ran)
