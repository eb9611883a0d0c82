"""``mutexlab test`` on node programs written elsewhere from the docs alone, in habits the other
outsider tests do not cover (tests/outsiders/, ``o18_*``):

* lines after a ``done``: a node's statistics or a last "bye" as ``log`` lines, in the done's
  write or from a timer, which the protocol's ``log`` ("ignored") allows anywhere.

What they showed of mutexlab, each fixed: a ``log`` line after a done was a ``protocol`` fault
("wrote after its done line"), though a log line says nothing; a bare "bye" printed there was
told only that it came late, not that it is no protocol line at all.
"""

from __future__ import annotations

import sys

import pytest
from outsider_edits import said

pytestmark = pytest.mark.slow

# One node alone (--nodes 1): asked, it enters; told to release, it leaves. What it writes after
# its done is the variant's (MODE in its environment).
CHATTY = r"""
import json, os, sys, threading
mode = os.environ.get("MODE", "")
entries = 0

def out(*lines):
    sys.stdout.write("".join(json.dumps(line) + "\n" for line in lines))
    sys.stdout.flush()

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
        half = json.dumps({"type": "log", "msg": "bye"})
        threading.Timer(0.01, lambda: (sys.stdout.write(half[:9]), sys.stdout.flush())).start()
        threading.Timer(0.05, lambda: out({"type": "log", "msg": "tail"}) if not sys.stdout.write(half[9:] + "\n") else None).start()
    elif mode == "bye" and kind == "release":
        out(*said, done)
        print("bye", flush=True)
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
    scenario = tmp_path / "ce.json"
    ran = cli("test", "mutex", "--node", chatty("bye"), "--nodes", "1", "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [protocol] (step 2)" in ran.stdout, said(ran)
    assert "after its done line (answering release)" in ran.stdout, said(ran)
    # before: only that it came late, as if "bye" were an output no input caused
    assert "nor is it a protocol line: a line that is not JSON" in ran.stdout and ": bye" in ran.stdout, said(
        ran
    )
    again = cli("replay", scenario, "--node", chatty("bye"))
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, said(again)


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
