"""``mutexlab test`` on node programs written elsewhere from the docs alone, in languages and
habits the other outsider tests do not cover (tests/outsiders/, ``o16_*``):

* ``o16_mutex_ra.php`` — Ricart–Agrawala in PHP 8's CLI: a final class, associative arrays,
  ``fgets(STDIN)``, ``echo json_encode(…)`` (the CLI writes unbuffered); ``BROKEN_INSIDE=1``
  replies while inside, ``WARN_SEQ=1`` reads a field no input has (a PHP warning);
* ``o16_phil_homes.ml`` — dining philosophers in OCaml, run as a script by the ``ocaml``
  toplevel: a JSON reader of its own, a fork's home lending it, the resource hierarchy;
  ``BROKEN_LEND=1`` lends a fork picked up but not yet eaten with, ``BROKEN_ORDER=1`` drops the
  hierarchy (a deadlock), ``LAZY_FLUSH=1`` never flushes ``print_string``;
* ``o16_kmutex_worker.js`` — a k-mutex coordinator in Node.js whose logic runs in a
  ``worker_threads`` Worker, the main thread doing the I/O; ``BROKEN_PERMITS=1`` grants one permit
  too many, ``WORKER_LOGS=1`` has the worker ``console.log`` its lines itself;
* ``o16_naimi_trehel_mp.py`` — Naimi–Tréhel's token mutex in Python, its logic in a
  ``multiprocessing`` worker (the "spawn" start method) behind a Pipe; ``--forget-next`` hands the
  token on without clearing ``next`` (two tokens), and a variant whose worker raises ``KeyError``.

What they showed of mutexlab, each fixed: a PHP warning on standard output (display_errors, the
CLI's default without a php.ini) was told "debugging goes to standard error"; an OCaml node that
does not flush got no word of OCaml; a Node.js worker's lines, which reach standard output after
the main thread's done, were a late line without the reason, and in the same read as the done
("wrote past its done line") without any; the multiprocessing node whose worker raised was told
it waits reading "a process it started (python3, pid …)" whose output is buffered — the process
named was the node itself, read from multiprocessing's resource tracker, which inherits the
node's input and output and which the stall took for a wrapper such as ``go run``'s.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import missing
from outsider_edits import OUTSIDERS, said

from mutexlab.director.lines import NodeFault, parse
from mutexlab.director.process import BUFFERED
from mutexlab.director.shrink import _said
from mutexlab.director.waits import buffered_for, late_words, speaker


def tool(name: str) -> str:
    if shutil.which(name) is None:
        missing(f"{name} is not installed")
    return name


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


# --- PHP ----------------------------------------------------------------------------------------


def php(*flags: str) -> str:
    return " ".join([tool("php"), *flags, str(OUTSIDERS / "o16_mutex_ra.php")])


def test_a_php_ricart_agrawala_node_passes_and_a_reply_from_inside_is_a_violation(cli, tmp_path):
    passes(cli, "mutex", php(), "--requests", "2")
    for out in found(cli, tmp_path, "mutex", f"env BROKEN_INSIDE=1 {php()}", rule="violation"):
        # node 1 inside answers node 2's request at once, and node 2 enters
        assert "to 6 steps on 2 nodes" in out and "cs (capacity 1) held by" in out, out


def test_a_php_warning_on_standard_output_is_named_with_the_setting_that_prints_it(cli):
    # php -n: no php.ini, so the CLI's own default, display_errors on standard output (as in a
    # container's PHP); Debian's php.ini sends the warning to standard error, and the node passes
    ran = cli("test", "mutex", "--node", f"env WARN_SEQ=1 {php('-n')}", "--runs", "1")
    assert ran.returncode == 1 and "FINDING [garbage] (step 1)" in ran.stdout, said(ran)
    # before: "debugging goes to standard error or a {"type":"log"} line"
    assert "PHP's own warning or error, which display_errors prints on standard output" in ran.stdout, said(
        ran
    )
    assert "php -d display_errors=stderr" in ran.stdout, said(ran)
    assert 'Warning: Undefined array key "seq" in ' in ran.stdout, said(ran)
    ran = cli(
        "test", "mutex", "--node", f"env WARN_SEQ=1 {php('-n', '-d', 'display_errors=stderr')}", "--runs", "2"
    )
    assert ran.returncode == 0 and "PASS" in ran.stdout, said(ran)


@pytest.mark.parametrize(
    "line",
    [
        b'Warning: Undefined array key "seq" in /srv/node.php on line 59',
        b"PHP Notice:  Undefined index: seq in /srv/node.php on line 12",
        b"Deprecated: Creation of dynamic property Node::$x is deprecated in /srv/node.php on line 3",
        b"Fatal error: Uncaught JsonException: Syntax error in /srv/node.php:116",
        b'Parse error: syntax error, unexpected token "}" in /srv/node.php on line 12',
    ],
)
def test_phps_diagnostics_are_told_apart_from_other_text(line):
    with pytest.raises(NodeFault) as fault:
        parse(line, 1, frozenset({2}))
    assert "PHP's own warning or error" in str(fault.value), fault.value
    with pytest.raises(NodeFault) as fault:  # a word alone is no PHP diagnostic
        parse(b"Warning: low on pins", 1, frozenset({2}))
    assert "PHP" not in str(fault.value) and "debugging goes to standard error" in str(fault.value)


# --- OCaml --------------------------------------------------------------------------------------


def ocaml() -> str:
    return f"{tool('ocaml')} {OUTSIDERS / 'o16_phil_homes.ml'}"


def test_an_ocaml_philosopher_passes_and_a_fork_lent_before_eating_is_a_violation(cli, tmp_path):
    passes(cli, "philosophers", ocaml(), "-N", "4", "--requests", "2")
    for out in found(cli, tmp_path, "philosophers", f"env BROKEN_LEND=1 {ocaml()}", rule="violation"):
        # philosopher 2 picks up fork 2 and lends it to 1 before it eats; 3 lends 2 fork 3: both
        # eat with fork 2. Random's shrinking keeps a request of 3 whose removal renumbers 3's
        # message (6 steps by systematic, 7 by the others)
        assert "steps on 3 nodes" in out and "fork:2 (capacity 1) held by" in out, out
    ran = cli("test", "philosophers", "--node", f"env BROKEN_ORDER=1 {ocaml()}", "--seed", "1")
    assert ran.returncode == 1 and "FINDING [deadlock]" in ran.stdout, said(ran)
    assert "to 4 steps on 2 nodes" in ran.stdout, said(ran)


def test_an_ocaml_node_that_does_not_flush_is_told_in_ocamls_words(cli):
    node = f"env LAZY_FLUSH=1 {ocaml()}"
    ran = cli("test", "philosophers", "--node", node, "--runs", "1", "--timeout", "2", "--start-timeout", "2")
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
    # before: the general advice alone (C stdio, Python, Perl …), nothing of OCaml
    assert "— OCaml: flush stdout after each done" in ran.stdout, said(ran)
    assert "OCaml" in buffered_for(["./phil"], BUFFERED, "/usr/bin/ocamlrun")  # a bytecode program
    assert "OCaml" in buffered_for(["ocaml", "phil.ml"], BUFFERED)
    assert buffered_for(["./phil"], BUFFERED, "/srv/phil") == BUFFERED  # native code: nothing known


# --- Node.js worker_threads ----------------------------------------------------------------------


def worker() -> str:
    return f"{tool('node')} {OUTSIDERS / 'o16_kmutex_worker.js'}"


def test_a_worker_threads_coordinator_passes_and_one_permit_too_many_is_a_violation(cli, tmp_path):
    passes(cli, "kmutex", worker(), "--requests", "2", systematic=("-N", "2", "-o", "k=1"))
    for out in found(cli, tmp_path, "kmutex", f"env BROKEN_PERMITS=1 {worker()}", rule="violation"):
        # three ask; the coordinator grants the third with both permits out
        assert "to 7 steps on 3 nodes" in out and "cs (capacity 2) held by" in out, out


def test_a_workers_own_console_log_is_a_late_line_told_why(cli):
    ran = cli("test", "kmutex", "--node", f"env WORKER_LOGS=1 {worker()}", "--runs", "5")
    assert ran.returncode == 1 and "FINDING [protocol]" in ran.stdout, said(ran)
    # in the done's read ("wrote past") or after it: either way the reason, which before neither said
    assert "Node.js: what a worker thread writes with console.log or process.stdout" in ran.stdout, said(ran)


def test_a_late_line_is_one_fault_whether_it_came_with_the_done_or_after_it():
    line = ': {"type": "enter", "resource": "cs"}'
    for argv in (["node", "n.js"], ["./n"]):
        past = late_words(1, "request", argv, past=True) + line
        after = late_words(2, "request", argv) + line
        assert _said(past) == _said(after) == 'late after request: {"type": "enter", "resource": "cs"}'
    assert "Node.js" not in late_words(1, "request", ["python3", "n.py"])


# --- Python multiprocessing ----------------------------------------------------------------------


def naimi(*args: str) -> str:
    return " ".join([sys.executable, str(OUTSIDERS / "o16_naimi_trehel_mp.py"), *args])


def test_a_multiprocessing_naimi_trehel_node_passes_and_a_token_handed_twice_is_found(cli, tmp_path):
    passes(cli, "mutex", naimi(), "--requests", "2", systematic=("-N", "2", "--requests", "2"))
    # a token handed on twice: two nodes inside (a violation), or the token back at a node already
    # inside (it enters again without a request: the program's protocol fault) — by the schedule
    scenario, node = tmp_path / "ce.json", naimi("--forget-next")
    for strategy, shrink in (("random", ()), ("pct", ("--no-shrink",)), ("systematic", ())):
        ran = cli(
            "test", "mutex", "--node", node, "-R", "2", "--strategy", strategy, "--seed", "1",
            "--counterexample", scenario, *shrink,
        )  # fmt: skip  # a worker process per node starts slowly: pct's finding is kept as found
        assert ran.returncode == 1 and f"found by {strategy}: " in ran.stdout, said(ran)
        assert (
            "FINDING [violation]" in ran.stdout
            and "cs (capacity 1) held by" in ran.stdout
            or "FINDING [protocol]" in ran.stdout
            and "entered cs without a request pending" in ran.stdout
        ), said(ran)
        again = cli("replay", scenario, "--node", node)
        assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)


def test_a_worker_process_that_raised_is_named_with_its_error(cli, tmp_path):
    text = (OUTSIDERS / "o16_naimi_trehel_mp.py").read_text()
    assert 'origin = body["origin"]' in text
    program = tmp_path / "keyerror.py"
    program.write_text(text.replace('origin = body["origin"]', 'origin = body["sender"]'))
    for node in (f"{sys.executable} {program}", f"bash -c '{sys.executable} {program}; true'"):
        ran = cli("test", "mutex", "--node", node, "--runs", "1", "--timeout", "2")
        assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, said(ran)
        # before: "it waits reading from a process it started (python3, pid …) … output sits in
        # its buffer", the node itself named, read from the resource tracker
        assert "a process it started (python" in ran.stdout, said(ran)
        assert "has ended and it has not waited for that end" in ran.stdout, said(ran)
        assert "KeyError: 'sender'" in ran.stdout and "output sits in its buffer" not in ran.stdout, said(ran)


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children", encoding="ascii") as listed:
        return [int(child) for child in listed.read().split()]


def test_a_child_that_inherits_the_nodes_pipes_is_no_wrapper_unless_it_is_waited_for():
    script = "import subprocess, time; subprocess.Popen(['sleep', '30']); time.sleep(30)"
    for argv, wrapped in (([sys.executable, "-c", script], False), (["sh", "-c", "sleep 30; true"], True)):
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
        try:
            assert proc.stdin is not None and proc.stdout is not None
            deadline = time.monotonic() + 10
            while not _children(proc.pid) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.3)  # the parent settles in its wait (the shell) or its sleep (Python)
            found = speaker(proc.pid, proc.stdin.fileno(), proc.stdout.fileno())
            # a shell waiting for its last command speaks through it; a Python node that started a
            # helper of its own, inheriting its pipes, still speaks for itself (before: the helper)
            assert (found != proc.pid) == wrapped, (argv, found, proc.pid)
        finally:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


UNFLUSHED = """
import json, subprocess, sys
subprocess.Popen(["true"])  # a helper it never waits for: it ends, and stays a zombie
for line in iter(sys.stdin.readline, ""):
    kind = json.loads(line)["type"]
    print(json.dumps({"type": "done", "reinit": True} if kind == "init" else {"type": "done"}), flush=kind == "init")
"""


def test_an_ended_helper_is_not_blamed_when_the_node_waits_for_its_input(cli, tmp_path):
    program = tmp_path / "unflushed.py"
    program.write_text(UNFLUSHED)
    ran = cli(
        "test",
        "mutex",
        "--node",
        f"env -u PYTHONUNBUFFERED {sys.executable} {program}",
        "--runs",
        "1",
        "--timeout",
        "2",
    )
    assert ran.returncode == 1 and "FINDING [stalled] (step 1)" in ran.stdout, said(ran)
    assert "it waits for its next input (blocked reading its standard input)" in ran.stdout, said(ran)
    assert "has ended" not in ran.stdout, said(ran)
