"""``mutexlab verify`` on logs of layouts it does not read (tests/outlogs/o15-*, written by
o15_stacks.py as each stack writes them): log4j2's pretty-printed JsonLayout, a CSV file with its
clock as ``d:2;w1:1``, logrus's logfmt, ``journalctl -o json`` (upper-case fields), Serilog's CLEF
(PascalCase). Each is refused naming the file, the line and the layout, with a command that
converts it; converted as said, each correct log is SAFE and each broken one a VIOLATION naming
the holders. Elixir Logger's default console format is read by ``--regex``. A log whose every
event was written twice, and a pipe that never ends, are named for what they are."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import threading
from pathlib import Path

import pytest
from conftest import missing
from outsider_edits import said

OUTLOGS = Path(__file__).resolve().parent / "outlogs"
CONVERT = re.compile(r"((?:python3 -c '[^']*' < |sed |jq ).*?) > LOG(?:\.jsonl)?\b")

# log, what its refusal names, verify's flags after conversion, the broken log's witness
LAYOUTS = [
    (
        "lockd",
        "one JSON object over lines 1–18, another from line 19: a pretty-printed JSON layout (log4j2's JsonLayout",
        [],
        "cs (capacity 1) held by c1 (1 unit, line 7), c2 (1 unit, line 12) at once",
    ),
    (
        "desk",
        "a CSV file (its header: ts,process,event,clock), not a layout verify reads: write it in GoVector's layout",
        ["--capacity", "permit=2"],
        "permit (capacity 2) held by w1 (1 unit, line 23), w2 (1 unit, line 29), w3 (1 unit, line 35) at once",
    ),
    (
        "table",
        "logfmt (key=value pairs: time, level, msg, pid, event, resource), not a layout verify reads",
        [],
        "fork:2 (capacity 1) held by phil-1 (1 unit, line 8), phil-2 (1 unit, line 9) at once",
    ),
    (
        "meter",
        "a journald export (journalctl -o json), whose fields a program sent are upper case (PID, EVENT, RESOURCE)",
        [],
        "cs (capacity 1) held by c1 (1 unit, line 7), c2 (1 unit, line 12) at once",
    ),
    (
        "ledger",
        "Serilog's CLEF, whose properties are PascalCase (Pid, Event, Resource)",
        ["--capacity", "permit=2"],
        "permit (capacity 2) held by t1 (1 unit, line 12), t2 (1 unit, line 15), t3 (1 unit, line 18) at once",
    ),
]


@pytest.mark.parametrize(("name", "layout", "flags", "witness"), LAYOUTS, ids=[row[0] for row in LAYOUTS])
def test_a_layout_verify_does_not_read_is_named_with_a_command_that_converts_it(
    cli, tmp_path, name, layout, flags, witness
):
    """Before: `not JSON (Expecting property name …)` with a scenario's advice (lockd), `not a
    record of GoVector's regex` (desk, table), `event lacks event, pid` (meter, ledger)."""
    converted = {}
    for variant in ("", "-broken"):
        log = OUTLOGS / f"o15-{name}{variant}.log"
        done = cli("verify", log)
        assert done.returncode == 2 and done.stdout == "", said(done)
        error = done.stderr.strip()
        assert error.startswith(f"mutexlab: error: {log}:1: {layout}"), said(done)
        assert "Traceback" not in error, said(done)
        command = CONVERT.search(error)
        assert command is not None, said(done)
        if command.group(1).startswith(("jq", "sed")) and shutil.which("jq") is None:
            missing("jq is not installed: the command the error gives cannot be run here")
        out = tmp_path / f"{name}{variant}.log"
        with open(out, "wb") as handle:
            subprocess.run(["bash", "-c", command.group(1)], stdout=handle, check=True, cwd=tmp_path)
        converted[variant] = out
    done = cli("verify", converted[""], *flags)
    assert done.returncode == 0 and ": SAFE" in done.stdout.splitlines()[0], said(done)
    done = cli("verify", converted["-broken"], *flags)
    assert done.returncode == 1 and "VIOLATION (1)" in done.stdout, said(done)
    assert witness in done.stdout, said(done)


def test_elixir_loggers_default_format_is_read_by_regex_safe_and_an_early_grant_found(cli):
    """The metadata carries the node and its clock (`node=b1 vc={"b1":1}`), a blank line before
    each record as Elixir's default format writes it: one line's regex reads it."""
    regex = r"\S+ pid=\S+ node=(?<host>\S+) vc=(?<clock>{\S*}) \[info\] (?<event>.*)"
    done = cli("verify", OUTLOGS / "o15-beam.log", "--regex", regex)
    assert done.returncode == 0 and done.stdout.startswith("ShiViz log: SAFE"), said(done)
    assert "events: enter 2, exit 2, other 12, request 2" in done.stdout, said(done)
    done = cli("verify", OUTLOGS / "o15-beam-broken.log", "--regex", regex)
    assert done.returncode == 1, said(done)
    assert "cs (capacity 1) held by b1 (1 unit, line 14), b2 (1 unit, line 24) at once" in done.stdout, said(
        done
    )


def test_one_document_over_several_lines_keeps_its_scenarios_advice(cli, tmp_path):
    """A single object written over lines (a scenario) is no run of pretty-printed events."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"family": "mutex", "steps": [1, 2]}, indent=2) + "\n")
    done = cli("verify", path)
    assert done.returncode == 2 and "mutexlab replay FILE --trace T" in done.stderr, said(done)
    assert "pretty-printed" not in done.stderr, said(done)


def test_a_first_line_of_one_long_word_is_refused_without_searching_it_quadratically(cli, tmp_path):
    """Before: the logfmt layout's search tried a key at each place of the word and read it again
    to its end from each: a line of 80,000 letters took 26 s, one of 1 MB would take about an
    hour (a line may hold 8 MiB). Now each word is read once: refused at once, as before."""
    path = tmp_path / "t.log"
    path.write_text("a" * 1_000_000 + "\n")
    done = cli("verify", path)
    assert done.returncode == 2 and done.stdout == "", said(done)
    assert f"{path}:1: not a record of GoVector's regex" in done.stderr, said(done)
    assert "logfmt" not in done.stderr, said(done)


@pytest.mark.parametrize("fmt", ["jsonl", "shiviz"])
def test_each_event_written_twice_by_two_appenders_is_named_so(cli, tmp_path, fmt):
    """Before: `message id 'c1-2' is sent again while still in flight (sent at line 2)`, or (ShiViz)
    `c1's own clock entry goes from 2 (line 3) to 2`, with nothing saying the lines are copies."""
    if fmt == "jsonl":
        lines = (OUTLOGS / "o15-ledger.log").read_text().splitlines()[:3]
        lines = [
            json.dumps({k.lower(): v for k, v in json.loads(line).items()}) for line in lines
        ]  # lowered, as the ledger's refusal says
        want = "t.log:4: message id 't1-1' is sent again while still in flight (sent at line 3)"
        at = "line 4 repeats line 3 exactly: one event written twice?"
    else:
        lines = ['b1 {"b1":1}\nrequest cs', 'b1 {"b1":2}\nsend REQUEST']  # GoVector's records
        want = "t.log:3: b1's own clock entry goes from 1 (line 1) to 1"
        at = "line 3 repeats line 1 exactly: one event written twice?"
    path = tmp_path / "t.log"
    path.write_text("".join(line + "\n" + line + "\n" for line in lines))
    done = cli("verify", path, "--format", fmt)
    assert done.returncode == 2, said(done)
    assert want in done.stderr and at in done.stderr, said(done)
    assert 'additivity="false"' in done.stderr, said(done)


def test_a_repeated_line_that_is_no_copy_gets_no_such_hint(cli, tmp_path):
    path = tmp_path / "t.log"
    send = {"event": "send", "type": "T", "to": "b", "id": "m1", "pid": "a"}
    path.write_text(json.dumps(send) + "\n" + json.dumps({**send, "type": "U"}) + "\n")
    done = cli("verify", path)
    assert done.returncode == 2 and "sent again while still in flight" in done.stderr, said(done)
    assert "repeats" not in done.stderr, said(done)


def test_a_pipe_that_never_ends_is_refused_at_the_copys_limit(cli, tmp_path, monkeypatch):
    """Before: the copy of a FIFO whose writer never closes it grew without end (on a tmpfs /tmp,
    in memory), and verify waited for ever."""
    from mutexlab import limits

    monkeypatch.setattr(limits, "MAX_PIPE_BYTES", 1 << 20)
    fifo = tmp_path / "endless"
    os.mkfifo(fifo)
    stop = threading.Event()

    def write_for_ever() -> None:
        line = (json.dumps({"event": "request", "resource": "cs", "pid": "p"}) + "\n").encode() * 64
        try:
            with open(fifo, "wb") as out:
                while not stop.is_set():
                    out.write(line)
        except BrokenPipeError:  # verify stopped reading: what ends this writer
            pass

    writer = threading.Thread(target=write_for_ever, daemon=True)
    writer.start()
    try:
        done = cli("verify", fifo)
    finally:
        stop.set()
    writer.join(timeout=60)
    assert not writer.is_alive()
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        f"{fifo}: more than 1,048,576 bytes came through the pipe without its end "
        "(limits.MAX_PIPE_BYTES): verify judges a whole log, copied first; a log that never ends "
        "(tail -f, a FIFO its writer keeps open) has no verdict: save it to a file (or stop its "
        "writer) and verify that; a log this large, unpacked or written by a program, is read "
        "from a file without this limit (zcat LOG.gz > LOG, then verify LOG)"
    ), said(done)


def _clock(entries: int) -> dict:
    return {"c1": 1, **{f"h{i}": 0 for i in range(entries - 1)}}


HEADER = '{"event": "run", "pid": "run", "capacities": {"cs": 1}}\n'


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (  # a trace's clock of more members than a line may hold: not parsed at all
            HEADER + json.dumps({"event": "request", "resource": "cs", "pid": "c1", "vc": _clock(200_001)}),
            "t.log:2: more than 200,000 JSON members in one line (limits.MAX_LINE_MEMBERS",
        ),
        (  # a clock-free line whose message body holds as many
            json.dumps(
                {"event": "send", "type": "T", "to": "b", "id": "m", "pid": "a", "msg": _clock(200_001)}
            ),
            "t.log:1: more than 200,000 JSON members in one line (limits.MAX_LINE_MEMBERS",
        ),
        (  # parsed, but a clock a ShiViz record could not state either
            HEADER + json.dumps({"event": "request", "resource": "cs", "pid": "c1", "vc": _clock(100_001)}),
            "t.log:2: 'vc' has 100,001 entries, more than 100,000 (limits.MAX_CLOCK_ENTRIES)",
        ),
        (  # a Java logger's string clock, counted before it is parsed
            HEADER
            + json.dumps(
                {"event": "request", "resource": "cs", "pid": "c1", "vc": json.dumps(_clock(100_001))}
            ),
            "t.log:2: the string 'vc' holds more than 100,000 entries (limits.MAX_CLOCK_ENTRIES)",
        ),
    ],
    ids=["trace-clock", "clockfree-body", "clock-parsed", "string-clock"],
)
def test_a_json_clock_past_a_shiviz_records_limit_is_refused_naming_it(cli, tmp_path, text, error):
    """Before: a JSON line of 880,000 clock entries (7.9 MB, under a line's limit) was parsed,
    258 MB, then judged (INCOMPLETE: nobody entered); a ShiViz record of as many
    was refused before it was read (limits.MAX_CLOCK_ENTRIES). Now 81 MB, refused the same way."""
    path = tmp_path / "t.log"
    path.write_text(text + "\n")
    done = cli("verify", path)
    assert done.returncode == 2 and done.stdout == "", said(done)
    assert error in done.stderr, said(done)


DEEP = "[" * 5000 + "]" * 5000
NESTED = "JSON past a limit (arrays and objects nested deeper than its reader goes, some "


@pytest.mark.parametrize(
    ("text", "error"),
    [
        (  # a clock-free log: its third line
            '{"event": "request", "resource": "cs", "pid": "c1"}\n'
            '{"event": "enter", "resource": "cs", "pid": "c1"}\n'
            '{"event": "exit", "resource": "cs", "pid": "c1", "x": ' + DEEP + "}",
            f"t.log:3: {NESTED}",
        ),
        (
            'c1 {"c1": 1}\nrequest cs\nc1 {"c1": 2}\nenter cs {"x": ' + DEEP + "}",
            't.log:4: its fields \'{"x": [[[',
        ),
        ('c1 {"c1": 1}\nrequest cs\nc1 {"c1": ' + DEEP + "}\nenter cs", f"t.log:3: the clock is {NESTED}"),
        (  # a description's fields of more members than a line may hold
            'c1 {"c1": 1}\nenter cs ' + json.dumps({f"k{i}": 1 for i in range(200_001)}),
            't.log:2: its fields \'{"k0": 1, "k1": 1, "k2": 1, "k3": 1, "k4\': more than 200,000 JSON members',
        ),
    ],
    ids=["clockfree", "shiviz-fields", "shiviz-clock", "shiviz-fields-members"],
)
def test_json_nested_past_the_parser_is_named_so_not_called_no_json(cli, tmp_path, text, error):
    """Before: `not JSON (maximum recursion depth exceeded while decoding a JSON array from a
    unicode string)`, Python's words for JSON that is JSON; a ShiViz description's fields of
    300,000 members were parsed whole."""
    path = tmp_path / "t.log"
    path.write_text(text + "\n")
    done = cli("verify", path)
    assert done.returncode == 2 and done.stdout == "", said(done)
    assert error in done.stderr and "not JSON" not in done.stderr, said(done)
    if "fields" in error and "members" not in error:
        assert f"are {NESTED}" in done.stderr, said(done)


def test_a_run_header_of_more_members_than_a_line_holds_is_refused_before_it_is_read(cli, tmp_path):
    """Before: a header naming 200,000 processes was parsed (and `report` refused it only then,
    naming the processes it cannot draw); its members are now counted first, as a clock's are."""
    processes = {str(i): f"n{i}" for i in range(1, 200_001)}
    run = {
        "event": "run",
        "pid": "run",
        "algorithm": "lamport",
        "processes": processes,
        "capacities": {"cs": 1},
    }
    path = tmp_path / "wide.jsonl"
    path.write_text(json.dumps(run) + "\n")
    for command in (["verify", path], ["report", path, "-o", tmp_path / "w.html"]):
        done = cli(*command)
        assert done.returncode == 2, said(done)
        assert "wide.jsonl:1: more than 200,000 JSON members in one line" in done.stderr, said(done)
    assert not (tmp_path / "w.html").exists()
