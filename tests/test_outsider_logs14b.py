"""``mutexlab verify`` on more logs other programs write (tests/outlogs/o14b-*, beside the program
that wrote them): a lock server logging as a Java service does with logback, whose MDC holds
strings only, so its vector clock is a string holding JSON; and files that are no log at all."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from outsider_edits import said

OUTLOGS = Path(__file__).resolve().parent / "outlogs"
HEADER = '{"event": "run", "pid": "run", "capacities": {"cs": 1}}\n'


def test_a_logback_lock_with_string_clocks_is_safe_and_an_early_grant_is_found(cli):
    """Before: refused at line 2, `'vc' is "{\\"c1\\":1}": a vector clock is a JSON object …: a
    list's positions name no process`: no log of logback's or log4j2's JSON layouts could be read."""
    done = cli("verify", OUTLOGS / "o14b-logback-lock.log")
    assert done.returncode == 0 and done.stdout.startswith("unknown algorithm: SAFE"), said(done)
    assert "events: enter 2, exit 2, recv 6, request 2, send 6" in done.stdout, said(done)
    done = cli("verify", OUTLOGS / "o14b-logback-lock-early.log")
    assert done.returncode == 1 and "VIOLATION (1)" in done.stdout, said(done)
    assert "cs (capacity 1) held by c1 (1 unit, line 10), c2 (1 unit, line 13) at once" in done.stdout, said(
        done
    )


def test_logbacks_own_encoder_nests_the_mdc_and_is_told_how_to_lift_it(cli, tmp_path):
    """Before: `event lacks event, pid: not mutexlab's event shape …; read with --format shiviz
    --regex`, a layout it is not. Lifted as the error says, the log is SAFE."""
    nested = OUTLOGS / "o14b-logback-lock-nested.log"
    done = cli("verify", nested)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        "o14b-logback-lock-nested.log:2: event lacks event, pid at the top level ('event' is in 'mdc', "
        "'pid' is in 'mdc'): verify reads an event's fields at the top level of its line; lift them, "
        "jq -c '. + .mdc' FILE"
    ), said(done)
    events = [json.loads(line) for line in nested.read_text().splitlines()]
    lifted = tmp_path / "lifted.log"
    lifted.write_text("".join(json.dumps({**e, **e.get("mdc", {})}) + "\n" for e in events))
    done = cli("verify", lifted)
    assert done.returncode == 0 and "SAFE" in done.stdout, said(done)


@pytest.mark.parametrize(
    ("vc", "error"),
    [
        ('"{p1: 1}"', "'vc' is the string \"{p1: 1}\", which holds no JSON (Expecting property name"),
        ('"{\\"p1\\": 1, \\"p1\\": 2}"', "in the string 'vc': the key \"p1\" appears twice"),
        ('"[1, 0]"', "'vc' is [1, 0]: a vector clock is a JSON object of process names to counts"),
        ('"{\\"p1\\": -1}"', "vector clock 'vc' must map process names to whole numbers ≥ 0"),
        ('"{\\"p2\\": 1}"', "vector clock 'vc' lacks p1's own entry"),
    ],
)
def test_a_string_clock_is_judged_as_a_clock_written_as_json_is(cli, tmp_path, vc, error):
    path = tmp_path / "t.log"
    path.write_text(HEADER + '{"event": "request", "resource": "cs", "pid": "p1", "vc": ' + vc + "}\n")
    done = cli("verify", path)
    assert done.returncode == 2 and f"t.log:2: {error}" in done.stderr, said(done)
    assert "Traceback" not in done.stderr, said(done)


def test_a_report_page_is_named_as_one_not_taken_for_a_govector_log(cli, tmp_path):
    """Before: `r.html:1: not a record of GoVector's regex (?<host>\\S*) …`, as if an HTML page
    were a ShiViz log of another layout; so for any HTML page, and for `report` drawing one."""
    page = tmp_path / "r.html"
    done = cli("report", OUTLOGS / "o14b-logback-lock.log", "-o", page)
    assert done.returncode == 0, said(done)
    for command in (
        ["verify", page],
        ["verify", page, "--format", "shiviz"],
        ["report", page, "-o", tmp_path / "x.html"],
    ):
        done = cli(*command)
        assert done.returncode == 2, said(done)
        assert done.stderr.strip().endswith(
            "r.html: an HTML page (mutexlab's report), not a log or trace: verify the trace it was "
            "drawn from, the TRACE of mutexlab report TRACE -o FILE"
        ), said(done)
    other = tmp_path / "saved.html"
    other.write_text('\n<!DOCTYPE html>\n<html><body><pre>p1 {"p1":1}\nenter cs</pre></body></html>\n')
    done = cli("verify", other)
    assert done.returncode == 2 and done.stderr.strip().endswith(
        "saved.html: an HTML page, not a log or trace: verify the log itself, not a page showing it"
    ), said(done)


def test_a_compressed_or_binary_file_is_named_with_what_to_do(cli, tmp_path):
    """Before: `g.log.gz:1: not UTF-8 text (byte 2 of the line)`; an ELF binary `… it reads as
    UTF-16 (Windows PowerShell's …)`; a copytruncated log `not JSON (Expecting value)`."""
    text = (OUTLOGS / "o14b-logback-lock.log").read_bytes()
    packed = tmp_path / "g.log.gz"
    packed.write_bytes(gzip.compress(text))
    done = cli("verify", packed)
    assert done.returncode == 2 and done.stderr.strip().endswith(
        f"g.log.gz: a gzip-compressed file, not a log: unpack it first, zcat {packed} | mutexlab verify /dev/stdin"
    ), said(done)
    program = tmp_path / "a.out"
    program.write_bytes(
        b"\x7fELF\x02\x01\x01" + bytes(9) + b"\x02\x00\x3e\x00" + bytes(40) + b"\x01\x00" * 30
    )
    done = cli("verify", program)
    assert done.returncode == 2 and done.stderr.strip().endswith(
        "a.out: a binary file (NUL bytes in its first 4 KiB), not a log or trace of text"
    ), said(done)
    assert "UTF-16" not in done.stderr, said(done)
    truncated = tmp_path / "ct.log"
    truncated.write_bytes(bytes(700) + text)
    done = cli("verify", truncated)
    assert done.returncode == 2 and "ct.log: the file starts with 700 NUL bytes, then text" in done.stderr, (
        said(done)
    )
    # UTF-16 is still told apart from binary, and its reader says how to convert it
    wide = tmp_path / "w.log"
    wide.write_bytes(text.decode().encode("utf-16"))
    done = cli("verify", wide)
    assert done.returncode == 2 and "it reads as UTF-16" in done.stderr, said(done)


def test_pinos_own_numeric_pid_is_named_and_the_field_holding_the_name_too(cli, tmp_path):
    """pino's default base (the OS process's number as `pid`) with each actor a child({ name }):
    before, `'pid' must be a string, got 48213 (write "48213")`, which would make every actor one
    process. Moved as the hint says, the log is SAFE."""
    named = OUTLOGS / "o14b-pino-lock-named.log"
    done = cli("verify", named)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        "o14b-pino-lock-named.log:1: 'pid' must be a string, got 48213: pino's (bunyan's) own 'pid', the "
        "OS process's number, not a process's name; verify reads each process's name from 'pid', and "
        "'name' holds \"client-1\" here: if that names the process, jq -c '.pid = .name' FILE, or in the "
        "program child({ pid: NAME }) with pid left out of the base, pino({ base: { hostname } })"
    ), said(done)
    assert 'write "48213"' not in done.stderr, said(done)
    moved = tmp_path / "moved.log"
    events = [json.loads(line) for line in named.read_text().splitlines()]
    moved.write_text("".join(json.dumps({**e, "pid": e["name"]}) + "\n" for e in events))
    done = cli("verify", moved)
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    assert "events: enter 6, exit 6, recv 18, request 6, send 18" in done.stdout, said(done)


def test_a_bunyan_line_without_a_name_field_and_a_plain_rank_keep_their_hints(cli, tmp_path):
    path = tmp_path / "b.log"
    path.write_text(
        '{"name":"app","hostname":"h","pid":7,"level":30,"time":"t","v":0,"event":"enter","resource":"cs"}\n'
    )
    done = cli("verify", path)
    assert done.returncode == 2 and "'name' holds \"app\" here" in done.stderr, said(done)
    path.write_text('{"hostname":"h","pid":7,"level":30,"time":"t","event":"enter","resource":"cs"}\n')
    done = cli("verify", path)
    assert done.returncode == 2 and done.stderr.strip().endswith(
        "verify reads each process's name from 'pid': log it there, child({ pid: NAME }) with pid left "
        "out of the base, pino({ base: { hostname } })"
    ), said(done)
    path.write_text('{"pid":3,"event":"enter","resource":"cs"}\n')  # an MPI rank, no logger's shape
    done = cli("verify", path)
    assert done.returncode == 2 and done.stderr.strip().endswith(
        "'pid' must be a string, got 3 (write \"3\")"
    ), said(done)
