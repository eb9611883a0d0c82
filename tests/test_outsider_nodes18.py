"""``mutexlab test`` on node programs written elsewhere from the docs alone, in habits the other
outsider tests do not cover (tests/outsiders/, ``o18_*``):

* ``o18_sk_select.pl`` — Suzuki–Kasami's broadcast token in Perl, its input read by
  ``IO::Select`` and ``sysread`` (no PerlIO buffer), JSON::PP in its hash order; ``BROKEN_SK=1``
  hands the token over from inside;
* ``o18_phil_ticker.go`` — dining philosophers in Go, forks as messages taken in the resource
  hierarchy's order, a goroutine scanning stdin and a ``time.Ticker`` whose tick writes a
  heartbeat ``log`` line between inputs; ``-polite`` hands over a fork while eating;
* ``KMutexPool.java`` — Raymond's k-mutex in Java, each input handled by a task of a fixed thread
  pool, a JSON reader of its own; ``--eager`` answers a request from inside;
* ``o18_raymond_rawfd.py`` — Raymond's tree token in Python, reading and writing the raw file
  descriptors (``os.read``/``os.write``), a ``log`` line of statistics in the same write as
  its release's done; ``RAYMOND_BUG=1`` hands the privilege on while using it;
* lines after a ``done`` (a program of the test's own): statistics or a last "bye" as ``log``
  lines, in the done's write or from a timer, a bare "bye", an entry behind a log line.

What they showed of mutexlab, each fixed: a ``log`` line after a done — the Go heartbeat, the
Python statistics — was a ``protocol`` fault ("wrote after its done line", "wrote past"), though
the protocol says a log line is ignored, and over RabbitMQ (``run --node``) the heartbeat
stopped the run; a bare "bye" printed there was told only that it came late, not that it is no
protocol line at all; a kept node's late line seen as the next run began was a finding of that
run, at its init, whose shrunk schedule "gave no finding when played again"; two log lines each
written in two parts, one after the other, made the second's start a late line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from outsider_edits import OUTSIDERS, said
from test_outsider_nodes16 import found, passes, tool

from mutexlab.cli import main
from mutexlab.director.lines import NodeFault
from mutexlab.director.process import NodeProcess

pytestmark = pytest.mark.slow

# One node alone (--nodes 1): asked, it enters; told to release, it leaves. What it writes after
# its done is the variant's (MODE in its environment).
CHATTY = r"""
import json, os, sys, threading, time
mode = os.environ.get("MODE", "")
entries = 0

lock = threading.Lock()  # one writer at a time: a line is never cut by another

def out(*lines):
    with lock:
        sys.stdout.write("".join(json.dumps(line) + "\n" for line in lines))
        sys.stdout.flush()

def halves(line):
    with lock:
        for part in (line[:9], line[9:] + "\n"):
            sys.stdout.write(part)
            sys.stdout.flush()
            time.sleep(0.04)

for text in iter(sys.stdin.readline, ""):
    kind = json.loads(text)["type"]
    done = {"type": "done", "reinit": True} if kind == "init" else {"type": "done"}
    said = [{"type": "enter", "resource": "cs"}] if kind == "request" else []
    said += [{"type": "exit", "resource": "cs"}] if kind == "release" else []
    entries += kind == "request"
    stats = {"type": "log", "stats": {"entries": entries}}
    if mode == "stats" and kind == "release":  # in the done's own write, and a blank line
        sys.stdout.write("".join(json.dumps(line) + "\n" for line in [*said, done, stats]) + "\n")
        sys.stdout.flush()
    elif mode == "timer" and kind == "release":  # a moment after the done, in two parts
        out(*said, done)
        threading.Timer(0.01, halves, [json.dumps({"type": "log", "msg": "bye"})]).start()
    elif mode == "bye" and kind == "release":
        out(*said, done)
        print("bye", flush=True)
    elif mode == "bye-later" and kind == "release":  # once the next run has begun
        out(*said, done)
        threading.Timer(0.3, print, ["bye"], {"flush": True}).start()
    elif mode == "past-split" and kind == "request":  # a line past the done, in two writes
        with lock:
            for part in (json.dumps(done) + '\n{"type": "state", ', '"state": "X"}\n'):
                sys.stdout.write(part)
                sys.stdout.flush()
                time.sleep(0.05)
    elif mode == "late-enter" and kind == "request":  # a log line, then an entry: no answer's
        out(done)
        threading.Timer(0.01, out, [stats, *said]).start()
    else:
        out(*said, done)
"""


@pytest.fixture
def chatty(tmp_path):
    program = tmp_path / "chatty.py"
    program.write_text(CHATTY)
    return lambda mode: f"env MODE={mode} {sys.executable} {program}"


@pytest.mark.parametrize("mode", ["stats", "timer"])
def test_log_lines_after_a_done_are_ignored_as_log_lines_anywhere(cli, chatty, mode):
    ran = cli("test", "mutex", "--node", chatty(mode), "--nodes", "1", "--requests", "3", "--runs", "3")
    # before: FINDING [protocol] "node 1 wrote after its done line (answering release)" (or
    # "wrote past"): {"type": "log", …}
    assert ran.returncode == 0 and "PASS — no finding" in ran.stdout, said(ran)


def test_a_bare_line_after_a_done_is_told_to_be_no_protocol_line(cli, chatty, tmp_path):
    # "bye" comes at the run's end, or as the next run's init is sent or answered: then the
    # line of the run before, a finding of its schedule (before: mostly seen at the run's end,
    # else the next run's "FINDING [garbage]" in answer to its init, no step of its own, its
    # shrunk schedule "gave no finding when played again")
    scenario = tmp_path / "ce.json"
    ran = cli("test", "mutex", "--node", chatty("bye"), "--nodes", "1", "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [protocol] (step 2)" in ran.stdout, said(ran)
    assert "its done line (answering release)" in ran.stdout, said(ran)  # "wrote past" or "after"
    # before: only that it came late, as if "bye" were an output no input caused
    assert "nor is it a protocol line: a line that is not JSON" in ran.stdout and ": bye" in ran.stdout, said(
        ran
    )
    assert "schedule: request 1, release 1" in ran.stdout, said(ran)
    again = cli("replay", scenario, "--node", chatty("bye"))
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)


def kept_node(program: str) -> NodeProcess:
    """A kept node (reinit) through one run of one request: its init, request and release."""
    process = NodeProcess(program.split(), 1, frozenset(), 5.0)
    for kind in ("init", "request", "release"):
        _, _, done = process.ask({"type": kind, "id": 1, "resource": "cs"})
        process.reusable = process.reusable or done.get("reinit") is True
    assert process.reusable
    return process


def test_a_late_line_seen_as_the_next_run_begins_is_the_run_befores(chatty):
    # seen as the next init is sent, or in its answer: the run before's line ("between": the
    # search plays that run again, which shows it), not a finding of the run that begins
    process = kept_node(chatty("bye-later"))
    try:
        time.sleep(0.6)  # its bye is there before the init is sent
        with pytest.raises(NodeFault) as fault:
            process.ask({"type": "init", "id": 1})
        assert fault.value.fields.get("between") is True, fault.value  # before: {}
        assert fault.value.rule == "protocol" and fault.value.line == "bye", fault.value
    finally:
        process.kill()
    for fresh in (False, True):  # the bye read with the init's answer (as if it came just then)
        process = NodeProcess(chatty("").split(), 1, frozenset(), 5.0) if fresh else kept_node(chatty(""))
        try:
            process.tell({"type": "init", "id": 1})
            process.buffer = b"bye\n"
            with pytest.raises(NodeFault) as fault:
                process.answer({"type": "init", "id": 1})
            assert fault.value.rule == "garbage" and fault.value.line == "bye", fault.value
            # a fresh node's bad answer to its init is that run's own
            assert fault.value.fields.get("between") is (None if fresh else True), fault.value
        finally:
            process.kill()


def test_a_late_entry_behind_a_log_line_is_still_a_late_line(cli, chatty):
    ran = cli("test", "mutex", "--node", chatty("late-enter"), "--nodes", "1", "--runs", "1")
    assert ran.returncode == 1 and "FINDING [protocol]" in ran.stdout, said(ran)
    assert "answering request), before its next input" in ran.stdout, said(ran)
    assert ': {"type": "enter", "resource": "cs"}' in ran.stdout and "nor is it" not in ran.stdout, said(ran)


def test_what_says_nothing_is_dropped_from_the_front_alone():
    from mutexlab.director.lines import said_nothing

    log = b'{"type": "log", "last_words": "bye"}'
    enter = b'{"type": "enter", "resource": "cs"}'
    left, logs = said_nothing(b"\n".join([log, b"", b"  ", log, enter, log, b""]), 1, frozenset())
    assert left == enter + b"\n" + log + b"\n" and [x["last_words"] for x in logs] == ["bye", "bye"]
    assert said_nothing(b"bye\n" + log + b"\n", 1, frozenset()) == (b"bye\n" + log + b"\n", [])
    assert said_nothing(log + b"\n" + log[:9], 1, frozenset())[0] == log[:9]  # a line begun stays


# --- the outsider programs ------------------------------------------------------------------------


def test_a_perl_suzuki_kasami_node_reading_by_io_select_passes_and_a_token_from_inside_is_found(
    cli, tmp_path
):
    node = f"{tool('perl')} {OUTSIDERS / 'o18_sk_select.pl'}"
    passes(cli, "mutex", node, "--requests", "2", systematic=("-N", "3"))
    for out in found(cli, tmp_path, "mutex", f"env BROKEN_SK=1 {node}", rule="violation"):
        # node 1 holds the token inside; node 2's request takes it, and node 2 enters
        assert "to 4 steps on 2 nodes" in out and "cs (capacity 1) held by" in out, out


@pytest.fixture(scope="module")
def ticker(tmp_path_factory) -> str:
    """The Go philosopher, built once."""
    built = tmp_path_factory.mktemp("go") / "phil"
    subprocess.run(
        [tool("go"), "build", "-o", str(built), str(OUTSIDERS / "o18_phil_ticker.go")],
        check=True,
        env={**os.environ, "GOCACHE": str(built.parent / "cache")},
    )
    return str(built)


def test_a_go_philosopher_with_a_heartbeat_ticker_passes_and_a_polite_eater_is_found(cli, tmp_path, ticker):
    # before: its heartbeat, a log line written between inputs, was "FINDING [protocol] … wrote
    # after its done line"
    passes(cli, "philosophers", ticker, "-N", "4", "--requests", "2", systematic=("-N", "3"))
    for out in found(cli, tmp_path, "philosophers", f"{ticker} -polite", rule="violation"):
        # philosopher 1 eats with both forks and hands them to 2, who asked: both eat with them
        assert "to 6 steps on 2 nodes" in out and "fork:1 (capacity 1) held by" in out, out


def test_a_java_k_mutex_node_on_a_thread_pool_passes_and_an_eager_reply_is_found(cli, tmp_path):
    classes = tmp_path / "classes"
    subprocess.run([tool("javac"), "-d", str(classes), str(OUTSIDERS / "KMutexPool.java")], check=True)
    node = f"{tool('java')} -cp {classes} KMutexPool"
    passes(cli, "kmutex", node, "-N", "4", "--requests", "2", systematic=("-N", "2", "-o", "k=1"))
    for out in found(cli, tmp_path, "kmutex", f"{node} --eager", "-o", "k=1", rule="violation"):
        # node 1 inside answers node 2's request at once, and node 2 enters
        assert "to 6 steps on 2 nodes" in out and "cs (capacity 1) held by" in out, out


def test_a_python_raymond_node_on_raw_file_descriptors_passes_and_a_privilege_from_inside_is_found(
    cli, tmp_path
):
    # before: its statistics, a log line in the same write as its release's done, were
    # "FINDING [protocol] … wrote past its done line (answering release)"
    node = f"{sys.executable} {OUTSIDERS / 'o18_raymond_rawfd.py'}"
    passes(cli, "mutex", node, "--requests", "2", systematic=("-N", "3"))
    for out in found(cli, tmp_path, "mutex", f"env RAYMOND_BUG=1 {node}", rule="violation"):
        # node 2 asks the root, which hands the privilege over from inside (4 steps; 6 by pct,
        # whose schedule keeps the privilege's way back)
        assert "steps on 2 nodes" in out and "cs (capacity 1) held by" in out, out


@pytest.mark.broker
def test_the_go_philosophers_heartbeat_between_inputs_passes_over_rabbitmq(capsys, amqp_url, ticker):
    # think and eat long enough for heartbeats (every 100 ms) to come between a node's inputs
    argv = ["run", "philosophers", "--node", ticker, "-N", "3", "--meals", "3", "--think", "0.15"]
    code = main([*argv, "--eat", "0.15", "--amqp-url", amqp_url, "--json"])
    summary = json.loads(capsys.readouterr().out)
    # before: exit 1, "STOPPED: a program failed", "node 2 wrote after its done line (answering
    # init) …: {"heartbeat":1,"type":"log"}"
    assert code == 0 and summary["status"] == "safe" and summary["complete"], summary
    assert "events: enter 27, exit 27" in summary["verdict"], summary


def test_a_whole_late_line_is_a_fault_at_once_and_a_line_begun_waits_for_its_end(chatty):
    process = kept_node(chatty(""))
    try:  # what it wrote after its done, as if it had come just now
        process.buffer = b'{"type": "log"}\n{"type": "enter", "resource": "cs"}\n'
        start = time.monotonic()
        with pytest.raises(NodeFault) as fault:
            process.late()
        assert fault.value.line == '{"type": "enter", "resource": "cs"}', fault.value
        assert time.monotonic() - start < 0.15  # a whole line: no moment waited for its end
        process.buffer = b'{"type": "log", "msg": "by'
        with pytest.raises(NodeFault) as fault:
            process.late()
        assert fault.value.line == '{"type": "log", "msg": "by', fault.value
        assert time.monotonic() - start >= 1.0  # nothing ended it: late once its moment is over
    finally:
        process.kill()


def test_a_line_past_the_done_written_in_two_parts_is_still_past_it(cli, chatty):
    ran = cli("test", "mutex", "--node", chatty("past-split"), "--nodes", "1", "--runs", "1")
    # before (with log lines ignored past the done, not on main): its start was left for the
    # next input, "wrote after its done line"; PYTHONUNBUFFERED's print does so by chance
    assert ran.returncode == 1 and "FINDING [protocol] (step 1)" in ran.stdout, said(ran)
    assert 'wrote past its done line (answering request): {"type": "state", "state": "X"}' in ran.stdout, (
        said(ran)
    )
