"""Programs that break the node protocol in ways users' programs do, each told apart by name:
a line a timer writes after the done (Node.js' setTimeout, a worker thread), a program that
exits while a process it started keeps its output open (killed as the program ends, when it is
started through mutexlab's launcher), a flood of log lines, a run whose lines
outgrow memory, and bytes a terminal would obey (docs/test-any-program.md#findings).
"""

from __future__ import annotations

import re
import sys

import pytest
from conftest import missing

from mutexlab.director import tree, world

# Two nodes asking each other and answering at once (no deferral: a violation in some schedules),
# each ``how`` adding one fault.
NODE = """import json, os, sys, time
how = sys.argv[1]
if how == 'exits-leaving-a-child' and os.fork() == 0:
    time.sleep(60)  # a helper that keeps the inherited standard output open
    os._exit(0)
if how == 'exits-leaving-a-child':
    sys.exit(0)

def out(o):
    sys.stdout.write(json.dumps(o) + '\\n'); sys.stdout.flush()

for line in sys.stdin:
    m = json.loads(line)
    kind = m['type']
    if kind == 'init':
        me = m['id']
    elif kind == 'request':
        out({'type': 'send', 'to': 3 - me, 'body': {'type': 'REQUEST'}})
    elif kind == 'recv' and m['body']['type'] == 'REQUEST':
        out({'type': 'send', 'to': 3 - me, 'body': {'type': 'REPLY'}})
    elif kind == 'recv':
        out({'type': 'enter', 'resource': 'cs'})
    elif kind == 'release':
        out({'type': 'exit', 'resource': 'cs'})
    if how == 'logs' and kind == 'request':
        while True:
            out({'type': 'log', 'debug': 'still here'})
    if how == 'escape' and kind == 'request':
        sys.stdout.write('\\x1b[2J\\x1b]0;pwned\\x07\\n'); sys.stdout.flush()
    if how == 'big' and kind == 'request':
        for _ in range(40):
            out({'type': 'event', 'event': 'note', 'pad': 'x' * 60000})
    out({'type': 'done'})
"""


def node(tmp_path, how: str) -> str:
    program = tmp_path / "node.py"
    program.write_text(NODE)
    return f"{sys.executable} {program} {how}"


def test_the_outline_without_its_fault_is_caught_for_what_it_is(cli, tmp_path):
    # It never defers a request: two nodes inside at once, the violation (not a protocol fault).
    ran = cli("test", "mutex", "--node", node(tmp_path, "right"), "--nodes", "2", "--runs", "20")
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout


def test_a_line_written_after_the_done_is_named_not_a_deadlock(cli, tmp_path):
    # One node, so no other step can come between its done and the run at rest: the timer's
    # line is pending when the run would be called a deadlock, whatever the machine's load.
    program = tmp_path / "late.py"
    program.write_text(LATE_ENTER)
    ran = cli("test", "mutex", "--node", f"{sys.executable} {program}", "--nodes", "1", "--runs", "3")
    assert ran.returncode == 1, ran.stdout
    # with its done in one read ("wrote past"), or after it ("wrote after"): the machine's timing
    # decides which, and both name the one fault (shrink takes them as one)
    assert "FINDING [protocol]" in ran.stdout, ran.stdout
    assert re.search(r"wrote (past|after) its done line \(answering request\)", ran.stdout), ran.stdout
    assert '"enter"' in ran.stdout and "deadlock" not in ran.stdout, ran.stdout


# Enters when asked, but from a timer 1 ms after its done (as JavaScript's setTimeout would).
LATE_ENTER = """import json, sys, threading
def out(text):
    sys.stdout.write(text + '\\n'); sys.stdout.flush()
for line in sys.stdin:
    kind = json.loads(line)['type']
    if kind == 'release':
        out('{"type": "exit", "resource": "cs"}')
    out('{"type": "done"}')
    if kind == 'request':
        threading.Timer(0.001, out, ['{"type": "enter", "resource": "cs"}']).start()
"""


@pytest.mark.parametrize("reaper", ["launcher", "setpriv"])
def test_a_program_that_exits_while_its_child_holds_its_output_is_crashed(cli, tmp_path, monkeypatch, reaper):
    if reaper == "setpriv":  # no launcher: the child lives on, holding the output
        monkeypatch.setenv("MUTEXLAB_NO_REAPER", "1")
    elif tree.launcher() is None:
        missing("no C compiler: nodes start through setpriv")
    tree.launcher.cache_clear()
    try:
        program = node(tmp_path, "exits-leaving-a-child")
        # setpriv: the exit is diagnosed at the start timeout (3 s: a Python start under load fits);
        # the launcher: seen at once, so the defaults (30 s) leave a loaded machine no stall to find
        waits = ("--start-timeout", "3", "--timeout", "3") if reaper == "setpriv" else ()
        ran = cli("test", "mutex", "--node", program, "--runs", "1", *waits)
    finally:
        tree.launcher.cache_clear()
    assert ran.returncode == 1, ran.stdout
    assert "FINDING [crashed]" in ran.stdout and "exited with status 0" in ran.stdout, ran.stdout
    assert "buffered" not in ran.stdout, ran.stdout
    if reaper == "setpriv":
        assert "still holds its standard output open" in ran.stdout, ran.stdout
    else:  # the launcher kills what the program left as it ends: its end is seen at once
        assert "exited with status 0 while handling init" in ran.stdout, ran.stdout
        assert "still holds" not in ran.stdout, ran.stdout


def test_endless_log_lines_are_a_flood_not_a_stall(cli, tmp_path):
    ran = cli("test", "mutex", "--node", node(tmp_path, "logs"), "--runs", "1", "--timeout", "20")
    assert ran.returncode == 1 and "FINDING [flood]" in ran.stdout, ran.stdout
    assert "more than 1000 lines in answer to one input (request)" in ran.stdout


def test_a_run_whose_lines_outgrow_the_byte_limit_is_a_flood(cli, tmp_path, monkeypatch):
    monkeypatch.setattr(world, "MAX_RUN_BYTES", 2 << 20)  # 40 lines of 60 kB make 2.4 MB
    ran = cli("test", "mutex", "--node", node(tmp_path, "big"), "--runs", "1")
    assert ran.returncode == 1 and "FINDING [flood]" in ran.stdout, ran.stdout
    assert "the run's answers passed 2 MB of lines" in ran.stdout


def test_control_characters_of_a_bad_line_are_shown_escaped(cli, tmp_path):
    ran = cli("test", "mutex", "--node", node(tmp_path, "escape"), "--runs", "1")
    assert ran.returncode == 1 and "FINDING [garbage]" in ran.stdout, ran.stdout
    assert "\x1b" not in ran.stdout and "\x07" not in ran.stdout
    assert "\\x1b[2J\\x1b]0;pwned\\x07" in ran.stdout


# A bee that acts on its own (no request lines: nobody is ``waiting``) and reports its end from a
# timer, 1 ms after its done: at rest, the audit would call the colony unfinished.
LATE_BEE = """import json, sys, threading
def out(text):
    sys.stdout.write(text + '\\n'); sys.stdout.flush()
for line in sys.stdin:
    out('{"type": "done"}')
    if json.loads(line)['type'] == 'init':
        threading.Timer(0.001, out, ['{"type": "state", "state": "DEAD"}']).start()
"""


def test_a_late_line_of_a_node_acting_on_its_own_is_named_not_a_deadlock(cli, tmp_path):
    program = tmp_path / "bee.py"
    program.write_text(LATE_BEE)
    ran = cli("test", "bees", "--node", f"{sys.executable} {program}", "--nodes", "1", "--runs", "3")
    assert ran.returncode == 1 and "FINDING [protocol]" in ran.stdout, ran.stdout
    assert "wrote after its done line (answering init)" in ran.stdout and "DEAD" in ran.stdout


def test_a_node_reading_all_its_input_first_is_told_to_read_a_line_at_a_time(cli, tmp_path):
    program = tmp_path / "slurp.py"
    program.write_text('import sys\nlines = sys.stdin.read().splitlines()\nprint(\'{"type": "done"}\')\n')
    ran = cli(
        "test",
        "mutex",
        "--node",
        f"{sys.executable} {program}",
        "--runs",
        "1",
        "--start-timeout",
        "1",
        "--timeout",
        "1",
    )
    assert ran.returncode == 1 and "FINDING [stalled]" in ran.stdout, ran.stdout
    assert "reads all its input before answering" in ran.stdout and "read one line at a time" in ran.stdout


def test_a_node_that_closes_its_input_is_not_said_to_close_its_output(cli, tmp_path):
    program = tmp_path / "closer.py"
    program.write_text(
        "import os, sys, time\nsys.stdin.readline()\nos.close(0)  # before its done: no race\n"
        'print(\'{"type": "done"}\', flush=True)\ntime.sleep(30)\n'
    )
    ran = cli("test", "mutex", "--node", f"{sys.executable} {program}", "--runs", "1", "--timeout", "2")
    assert ran.returncode == 1 and "FINDING [crashed]" in ran.stdout, ran.stdout
    assert "node 1 closed its input (it reads no more) while handling request" in ran.stdout, ran.stdout
