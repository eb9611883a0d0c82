"""``mutexlab verify`` on logs of programs written elsewhere, in their authors' own styles, correct
and broken, read with the user docs alone (docs/verify-any-log.md, docs/trace-format.md).

The fixtures in tests/outlogs/ and the programs that wrote them:

* ``o8-mpi-central[-broken].log``: ``mpirun -n 4 --tag-output ./central 2 [broken]`` of
  ``o8_mpi_central.c``, a lock server over MPI; every rank prints one line an event behind
  OpenMPI's ``[1,R]<stdout>:`` tag, its vector clock a JSON map over ``rankR@host`` names with the
  idle ranks left out (broken: the server grants two at once);
* ``o8-kmutex-logging[-broken].log``: ``python3 o8_kmutex_logging.py OUT 4 2 2 [broken]``, k-mutual
  exclusion (2 permits) by a coordinator thread, logged through ``logging`` with its time stamps
  and thread names (broken: the coordinator hands out 3 permits);
* ``o8-bees-govector[-overflow|-dies|-tick].log``: ``node o8_bees_govector.js DIR 5 3 2 3 [BUG]``
  then ``cat DIR/*-Log.txt``, mason bees and a queen as actors, each writing its own GoVector file
  (overflow: three flowers handed out of two; dies: a bee dies on its reed; tick: a bee adds one
  to the sender's entry of each message it receives, a clock no run can have);
* ``o8-elves-ledger[-greedy|-crash].log``: ``java O8ElvesLedger.java DIR 6 10 6 4 [BUG]`` then
  ``cat DIR/*.jsonl`` (crash: elf-2's file last), the hamster killers in clock-free JSON Lines,
  one file per thread written as on Windows, each starting with a byte order mark, CRLF line
  ends (greedy: the ledger counts returned poison twice; crash: elf-2 dies holding its pins,
  mid-line);
* ``o8-ra-processes[-eager|-crash].log``: ``python3 o8_ra_processes.py 3 3 [BUG] > OUT``,
  Ricart–Agrawala between ``multiprocessing`` processes printing clock-free JSON Lines to one
  shared standard output (eager: every request answered at once; crash: node 2 killed inside,
  mid-line, another process's next event written on after it).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from outsider_edits import said

from mutexlab.audit import clocks

OUTLOGS = Path(__file__).resolve().parent / "outlogs"
MPI_REGEX = r"\[\d+,\d+\]<stdout>:host=(?<host>\S+) clock=(?<clock>{.*}) \| (?<event>.*)"
LOGGING_REGEX = r"\S+ \S+ INFO \[(?<host>[^]]*)\] vc=(?<clock>{.*}) (?<event>.*)"
ELVES = ("--capacity", "pins=6", "--capacity", "poison=4")
CASES = {
    "o8-mpi-central.log": ("--regex", MPI_REGEX),
    "o8-kmutex-logging.log": ("--regex", LOGGING_REGEX, "--capacity", "pool=2"),
    "o8-bees-govector.log": ("--capacity", "flower=2"),
    "o8-elves-ledger.log": ELVES,
    "o8-ra-processes.log": (),
}


def kinds(done) -> set[str]:
    return set(re.findall(r"^  \[([a-z-]+)\]", done.stdout, re.M))


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_correct_programs_log_is_safe(cli, name):
    done = cli("verify", OUTLOGS / name, *CASES[name])
    assert done.returncode == 0 and "SAFE" in done.stdout.splitlines()[0], said(done)


@pytest.mark.parametrize(
    ("name", "flags", "code", "found"),
    [
        ("o8-mpi-central-broken.log", ("--regex", MPI_REGEX), 1, {"capacity"}),
        ("o8-kmutex-logging-broken.log", CASES["o8-kmutex-logging.log"], 1, {"capacity"}),
        ("o8-bees-govector-overflow.log", ("--capacity", "flower=2"), 1, {"capacity"}),
        ("o8-bees-govector-dies.log", ("--capacity", "flower=2"), 3, {"held-at-end"}),
        ("o8-elves-ledger-greedy.log", ELVES, 1, {"capacity"}),
        ("o8-elves-ledger-crash.log", ELVES, 3, {"held-at-end", "line-cut-off"}),
        ("o8-ra-processes-eager.log", (), 1, {"capacity"}),
    ],
)
def test_a_broken_programs_log_gets_its_finding(cli, name, flags, code, found):
    done = cli("verify", OUTLOGS / name, *flags)
    assert done.returncode == code and kinds(done) == found, said(done)


def test_a_clock_that_ticks_the_senders_entry_is_refused_naming_its_line(cli):
    done = cli("verify", OUTLOGS / "o8-bees-govector-tick.log", "--capacity", "flower=2")
    assert done.returncode == 2, said(done)
    assert re.search(r"o8-bees-govector-tick\.log:\d+: the vector clocks contradict", done.stderr), said(done)


def test_per_process_files_each_with_a_byte_order_mark_put_end_to_end_are_read(cli):
    """Each of the Java program's files begins with a BOM: ``cat`` puts one at the start of each
    file's first line. Before, the second was ``not JSON (Unexpected UTF-8 BOM (decode using
    utf-8-sig) …)``, exit 2, and the ShiViz reader took it for part of a host's name."""
    log = (OUTLOGS / "o8-elves-ledger.log").read_bytes()
    assert log.count(b"\xef\xbb\xbf") == 8 and b"\r\n" in log
    done = cli("verify", OUTLOGS / "o8-elves-ledger.log", *ELVES)
    assert done.returncode == 0 and done.stdout.startswith("JSON Lines log: SAFE"), said(done)
    done = cli("report", OUTLOGS / "o8-elves-ledger-greedy.log", *ELVES, "-o", "/dev/null")
    assert done.returncode == 0, said(done)


def test_govector_files_each_with_a_byte_order_mark_put_end_to_end_are_read(cli, tmp_path):
    files = [
        b'a {"a":1}\r\nenter cs\r\na {"a":2}\r\nexit cs\r\n',
        b'b {"b":1}\r\nenter cs\r\nb {"b":2}\r\nexit cs\r\n',
    ]
    log = tmp_path / "both.log"
    log.write_bytes(b"".join(b"\xef\xbb\xbf" + text for text in files))
    done = cli("verify", log)
    assert done.returncode == 1 and "held by a (1 unit, line 1), b (1 unit, line 5)" in done.stdout, said(
        done
    )


@pytest.mark.parametrize(
    ("regex", "said_of_it"),
    [
        (r"\S+ \S+ INFO \[[^]]*\] vc=(?<clock>{.*}) (?<event>.*)", "lacks the named group(s) host"),
        (r"\S+ \S+ INFO \[(?<host>[^]]*\] vc=(?<clock>{.*}) (?<event>.*)", "is not a regular expression"),
    ],
)
def test_a_refused_regex_is_shown_as_it_was_written(cli, regex, said_of_it):
    """The Python logging user's regex, one group forgotten or a bracket left open: the refusal
    quoted it as Python's repr (``'\\\\S+ \\\\S+ INFO \\\\[…'``), a regex other than the one given."""
    done = cli("verify", OUTLOGS / "o8-kmutex-logging.log", "--regex", regex)
    assert done.returncode == 2 and f"--regex '{regex}' {said_of_it}" in done.stderr, said(done)


def _token_pair(rounds: int, idle: bool, late: str | None = None) -> str:
    """A ShiViz log of a and b passing a token, each entering cs once a round; ``idle``: a host z
    logs ``Initialization Complete`` first and nothing more, as a GoVector process that never
    takes part; ``late``: z speaks once more at the end, having heard of a's event 30 (and
    ``"forged"``: without what that event knew of b)."""
    out = ['z {"z":1}\nInitialization Complete'] if idle else []
    a = b = knows_a = knows_b = 0
    for _ in range(rounds):
        for text in ("enter cs", "exit cs", "send token"):
            a += 1
            out.append(f'a {{"a":{a},"b":{knows_b}}}\n{text}')
        knows_a = a
        for text in ("recv token", "enter cs", "exit cs", "send token"):
            b += 1
            out.append(f'b {{"a":{knows_a},"b":{b}}}\n{text}')
        knows_b = b
        a += 1
        out.append(f'a {{"a":{a},"b":{knows_b}}}\nrecv token')
    if late is not None:  # a's event 30 is its exit of round 8, knowing b's event 28
        out.append(f'z {{"z":2,"a":30,"b":{27 if late == "forged" else 28}}}\nrecv hello')
    return "\n".join(out) + "\n"


def _events(text: str):
    lines = text.splitlines()
    for number in range(0, len(lines), 2):
        host, clock = lines[number].split(" ", 1)
        yield {"event": "other", "pid": host, "vc": json.loads(clock), "_line": number + 1}


def test_a_host_that_logged_once_keeps_no_clock_of_the_others(monkeypatch):
    """GoVector's ``Initialization Complete`` of a process that then stays idle: it knows nothing of
    the others, so it might still ask for any of their clocks, and every receive's clock was kept —
    the 800,000 records of two hosts passing a token beside it held 161 MB, 57 MB without it. Past
    ``QUIET_AFTER`` clocks a host that wrote nothing since the last pruning is left out."""
    monkeypatch.setattr(clocks, "QUIET_AFTER", 256, raising=False)
    checker = clocks._Clocks("t.log", ids=False, prune=True)  # noqa: SLF001 - what the check holds
    for event in _events(_token_pair(3000, idle=True)):
        checker.feed(event)
    assert checker.history.size < 2048  # before: 6,000, one a receive


@pytest.mark.parametrize("late", ["heard", "forged"])
def test_a_quiet_host_that_speaks_again_is_checked_as_before(cli, tmp_path, monkeypatch, late):
    """z, quiet while the clocks it could ask for were forgotten, asks for one: the log is read again
    keeping every clock, to the same verdict (or refusal, at the same line) as before."""
    monkeypatch.setattr(clocks, "QUIET_AFTER", 256, raising=False)
    log = tmp_path / "late.log"
    log.write_text(_token_pair(3000, idle=True, late=late))
    done = cli("verify", log)
    if late == "heard":
        assert done.returncode == 0 and done.stdout.startswith("ShiViz log: SAFE"), said(done)
    else:
        assert done.returncode == 2, said(done)
        assert (
            "late.log:48003: the vector clocks contradict each other: z's event 2 knows event 30 of a"
            in done.stderr
        )


def test_a_request_for_a_kind_served_by_a_named_one_says_what_was_entered(cli, tmp_path):
    """The Java elves as first written: ``request contract``, then ``enter contract:3`` once the
    mayor has said which. Every request read as left waiting — a finished run called cut short or
    stalled, with nothing to say why; the finding now names the entries and what to log."""
    out = []
    for line in (OUTLOGS / "o8-elves-ledger.log").read_bytes().decode().split("\r\n"):
        asked = re.search(r'"event": "enter", "resource": "contract:\d+", "pid": "([^"]+)"', line)
        if asked:
            out.append(f'{{"event": "request", "resource": "contract", "pid": "{asked[1]}"}}')
        out.append(line)
    log = tmp_path / "asked.log"
    log.write_text("\r\n".join(out))
    done = cli("verify", log, *ELVES)
    assert done.returncode == 3 and kinds(done) == {"request-unserved"}, said(done)
    assert re.search(
        r"elf-1 asked for contract 2 times but entered 0 times: 2 requests left waiting \(it entered "
        r"contract:\d+, contract:\d+: a request is served only by an enter of the same resource",
        done.stdout,
    ), said(done)


def test_an_event_cut_mid_line_with_another_written_after_it_is_named_so(cli, tmp_path):
    """Node 2 killed inside, mid-line; the next process's event went on after it, on the same line.
    Before, only ``not JSON (Expecting ',' delimiter: line 1 column 35 (char 34))``."""
    done = cli("verify", OUTLOGS / "o8-ra-processes-crash.log")
    assert done.returncode == 2, said(done)
    assert (
        "o8-ra-processes-crash.log:76: not JSON (Expecting ',' delimiter: line 1 column 35 (char 34)): "
        """'{"event": "exit", "resource": "c' is an event cut off mid-write, and a whole one follows"""
    ) in done.stderr, said(done)
    trace = tmp_path / "t.jsonl"  # the same in a trace with clocks
    trace.write_text(
        '{"event":"run","pid":"run","algorithm":"x","capacities":{"cs":1}}\n'
        '{"event":"enter","pid":"a","vc":{"a":1},"resource":"c{"event":"exit","pid":"b","vc":{"b":1},"resource":"cs"}\n'
    )
    done = cli("verify", trace)
    assert done.returncode == 2 and "t.jsonl:2: not JSON" in done.stderr, said(done)
    assert "is an event cut off mid-write, and a whole one follows" in done.stderr, said(done)
