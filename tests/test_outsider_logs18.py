"""``mutexlab verify`` on logs other programs write (tests/outsiders/O18JulRing.java and
o18_syslog_ring.c, beside the logs they wrote): java.util.logging's XMLFormatter and SimpleFormatter
layouts, syslog lines (RFC 3164 with a JSON event, RFC 5424 with a GoVector record on one line) and
GoVector's record on one line (``HOST {CLOCK} EVENT``); a clock written as a list by position.

Before, every one of them was refused as `not a record of GoVector's regex` (an RFC 3164 line with a
JSON event: a prefix `before the record`, the JSON taken for its clock). Now the one-line record is
read as it is, and each other layout is named with a command that converts it: run here as a user
would, its output verified — the correct run SAFE, the broken one a VIOLATION naming both holders."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import missing
from outsider_edits import said

OUTSIDERS = Path(__file__).resolve().parent / "outsiders"
OUTLOGS = Path(__file__).resolve().parent / "outlogs"
# n1 entered early, overlapping n0 (named first whichever entered first in the file)
HOLDERS = re.compile(
    r"cs \(capacity 1\) held by n([01]) \(1 unit, line \d+\), n(?!\1)[01] \(1 unit, line \d+\) at once"
)
COMMAND = re.compile(r": ((?:python3 -c|sed -E) .*?) > (LOG(?:\.jsonl)?), and verify \2")


def converted(cli, log: Path, tmp_path: Path, layout: str) -> Path:
    """The log written anew by the command verify's refusal of ``log`` gives (naming ``layout``)."""
    done = cli("verify", log)
    assert done.returncode == 2 and done.stdout == "", said(done)
    assert done.stderr.startswith(f"mutexlab: error: {log}:1: {layout}"), said(done)
    found = COMMAND.search(done.stderr)
    assert found is not None, said(done)
    if found.group(1).startswith("sed") and shutil.which("sed") is None:
        missing("sed is not installed: the command the error gives cannot be run here")
    out = tmp_path / f"{log.name}.{found.group(2)}"
    with open(out, "wb") as handle:
        subprocess.run(["bash", "-c", found.group(1)], stdout=handle, check=True, cwd=tmp_path)
    return out


def judged(cli, correct: Path, broken: Path, subject: str = "ShiViz log") -> None:
    done = cli("verify", correct)
    assert done.returncode == 0 and done.stdout.startswith(f"{subject}: SAFE"), said(done)
    assert "enter 6, exit 6" in done.stdout, said(done)
    done = cli("verify", broken)
    assert done.returncode == 1 and done.stdout.startswith(f"{subject}: VIOLATION (1)"), said(done)
    assert HOLDERS.search(done.stdout), said(done)


def test_govector_records_on_one_line_are_read_as_they_are(cli, tmp_path):
    """Before: `not a record of GoVector's regex` at line 1, whose clock must end its line."""
    log = tmp_path / "one.log"
    log.write_text(
        'n0 {"n0":1} request cs\nn0 {"n0":2} enter pins 2 {"note": "x"}\nn0 {"n0":3}  exit pins 2\n'
        "n0 {'n0': 4} token to n1\nn1 {'n0': 4, 'n1': 1} token from n0\n"
        'n1 {"n0":4,"n1":2} enter pins\nn1 {"n0":4,"n1":3} exit pins\n'
    )
    done = cli("verify", log, "--capacity", "pins=2")
    assert done.returncode == 3, said(done)  # n0's request of cs is never served: read, not refused
    assert "events: enter 2, exit 2, other 2, request 1" in done.stdout, said(done)
    log.write_text('n0 {"n0":1} enter cs\nn1 {"n1":1} enter cs\nn0 {"n0":2} exit cs\nn1 {"n1":2} exit cs\n')
    done = cli("verify", log)
    assert done.returncode == 1 and "held by n0 (1 unit, line 1), n1 (1 unit, line 2)" in done.stdout
    log.write_text('n0 {"n0":1} enter cs\nn0 {"n0":2}\nexit cs\n')  # one layout throughout
    done = cli("verify", log)
    assert done.returncode == 2 and done.stderr.startswith(
        f"mutexlab: error: {log}:2: not a record of GoVector's layout on one line (HOST CLOCK EVENT)"
    ), said(done)
    log.write_text('n0 {"n0":1}\nenter cs\nn0 {"n0":2}\nexit cs\n')  # GoVector's own: as before
    assert cli("verify", log).returncode == 0


def test_java_util_logging_xml_is_named_and_its_messages_verified(cli, tmp_path):
    layout = "java.util.logging's XMLFormatter (<log>, a <record> an event"
    judged(
        cli,
        converted(cli, OUTSIDERS / "o18_jul_ring.xml", tmp_path, layout),
        converted(cli, OUTSIDERS / "o18_jul_ring_early.xml", tmp_path, layout),
    )


def test_java_util_logging_simpleformatter_is_named_and_its_messages_verified(cli, tmp_path):
    layout = "java.util.logging's SimpleFormatter (a date and source line"
    judged(
        cli,
        converted(cli, OUTSIDERS / "o18_jul_ring.txt", tmp_path, layout),
        converted(cli, OUTSIDERS / "o18_jul_ring_early.txt", tmp_path, layout),
    )


def test_syslog_lines_are_named_and_their_messages_verified(cli, tmp_path):
    """RFC 3164 with a JSON event (before: the prefix `before the record`, the event taken for a
    clock); RFC 5424 with a GoVector record on one line."""
    layout = "syslog lines (RFC 3164: '<13>Dec  3 08:00:42 vm ring["
    correct = converted(cli, OUTSIDERS / "o18_syslog_ring_3164.log", tmp_path, layout)
    assert correct.name.endswith(".LOG.jsonl")
    judged(
        cli,
        correct,
        converted(cli, OUTSIDERS / "o18_syslog_ring_3164_early.log", tmp_path, layout),
        "JSON Lines log",
    )
    layout = "syslog lines (RFC 5424: '<134>1 2026-12-03T08:00:42."
    judged(
        cli,
        converted(cli, OUTSIDERS / "o18_syslog_ring_5424.log", tmp_path, layout),
        converted(cli, OUTSIDERS / "o18_syslog_ring_5424_early.log", tmp_path, layout),
    )


def test_syslog_lines_whose_message_starts_with_the_clock_get_a_regex_that_reads_them(cli, tmp_path):
    """The host is the syslog HOSTNAME (tests/outlogs/o14_syslog_ring.py): the --regex given reads
    the log as it is, RFC 5424 and RFC 3164 alike."""
    bsd = tmp_path / "bsd.log"
    for log in (OUTLOGS / "o14-syslog-ring.log", OUTLOGS / "o14-syslog-ring-early.log", bsd):
        if log == bsd:  # the same run through a BSD syslog
            bsd.write_text(
                re.sub(
                    r"^<134>1 \S+ (\S+) ring (\d+) \S+ - ",
                    r"<13>Dec  2 00:40:00 \1 ring[\2]: ",
                    (OUTLOGS / "o14-syslog-ring-early.log").read_text(),
                    flags=re.M,
                )
            )
        done = cli("verify", log)
        assert done.returncode == 2 and "its host the syslog HOSTNAME: --regex '" in done.stderr, said(done)
        regex = re.search(r"--regex '(.*)' reads it", done.stderr)
        assert regex is not None, said(done)
        done = cli("verify", log, "--regex", regex.group(1))
        assert done.returncode == (0 if log.name == "o14-syslog-ring.log" else 1), said(done)
        if done.returncode == 1:
            assert "cs (capacity 1) held by n1.lab (1 unit, line 2), n2.lab (1 unit, line 6)" in done.stdout


def test_a_clock_written_as_a_list_is_named_with_the_order_its_hosts_show(cli, tmp_path):
    log = tmp_path / "listed.log"
    log.write_text(
        "n0 [1,0,0] request cs\nn0 [2,0,0] enter cs\nn0 [3,0,0] exit cs\nn0 [4,0,0] token to n1\n"
        "n1 [4,1,0] token from n0\nn1 [4,2,0] enter cs\nn1 [4,3,0] exit cs\nn2 [0,0,1] enter cs\n"
        "n2 [0,0,2] exit cs\n"
    )
    layout = "the clock '[1,0,0]' is a list of counts by position beside the host 'n0'"
    done = cli("verify", converted(cli, log, tmp_path, layout))
    assert done.returncode == 1 and "held by n1 (1 unit, line 6), n2 (1 unit, line 8)" in done.stdout
    assert "held by n0 (1 unit, line 2), n2 (1 unit, line 8)" in done.stdout, said(done)
    log.write_text("n0 [1, 0]\nrequest cs\nn0 [2, 0]\nenter [cs]\n")  # GoVector's two lines; n1 unseen
    done = cli("verify", log)
    assert "which verify checks; a NAMEp where the first lines show no host" in done.stderr, said(done)
    assert "' n0 NAME1 < " in done.stderr, said(done)
    done = cli("verify", log, "--regex", r"(?<host>\S*) (?<clock>\[.*\])\n(?<event>.*)")  # its error stays
    assert done.stderr.startswith(f"mutexlab: error: {log}:1: the clock is [1, 0]: a vector clock is a JSON")
    assert "— the clock '[1, 0]' is a list of counts by position" in done.stderr, said(done)
    log.write_text("worker [3] enter cs\n")  # one count: a logger's tag, as likely as a clock
    done = cli("verify", log)
    assert "not a record of GoVector's regex" in done.stderr and "list of counts" not in done.stderr
    log.write_text("$(touch${IFS}x) [1,0]\nenter cs\n")  # a host's name is quoted for the shell
    done = cli("verify", log)
    assert "' '$(touch${IFS}x)' NAME1 < " in done.stderr, said(done)
    log.write_text(f"n0 [{'9' * 5000},1] enter cs\n")  # past what json reads of a number: no clock's
    done = cli("verify", log)
    assert done.returncode == 2 and "internal error" not in done.stderr, said(done)
    log.write_text("a [1,1]\nenter cs\n")  # its own position cannot be told
    done = cli("verify", log)
    assert (
        "(which the first lines do not show: give them)" in done.stderr and "' NAME0 NAME1 < " in done.stderr
    )


@pytest.mark.parametrize(
    "start",
    [
        b"x\n",  # a short line, then a huge one: before, hours (every place of it searched)
        b"<13>Dec  3 07:00:00 h ring[1]: ",
        b'<134>1 2026-12-03T07:00:00Z h ring 1 - [a x="',
        b'n0 {"n0":1} ',  # a record: read, its event 6 MB of text (no entry: undecided)
        b"n0 [1,",
        b"Dec 03, 2026 7:00:00 AM Ring log\nINFO: ",
        b'<?xml version="1.0"?>\n<log>\n<record>\n<message>',
    ],
)
def test_a_huge_line_without_its_end_is_refused_in_bounded_time(tmp_path, start):
    log = tmp_path / "huge.log"
    log.write_bytes(start + b"a" * 6_000_000 + b'"' * 1000 + b"[" * 1000)
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mutexlab", "verify", log], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == (3 if start.startswith(b"n0 {") else 2), done.stderr
    assert done.stderr.startswith("mutexlab: error: ") or done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr and time.monotonic() - began < 60, done.stderr


def test_a_coloured_line_of_strings_never_closed_is_refused_in_bounded_time(tmp_path):
    # a colour code, then 2 million '"\\' — each quote opens a string the line never closes: before,
    # the reader of colour codes looked for each one's end from every quote (20,000 took 18 s)
    log = tmp_path / "open.jsonl"
    log.write_bytes(b'{"x": \x1b[1m' + b'"\\' * 2_000_000 + b"\n")
    began = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "mutexlab", "verify", log], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2 and done.stderr.startswith("mutexlab: error: "), done.stderr
    assert "Traceback" not in done.stderr and time.monotonic() - began < 60, done.stderr


@pytest.fixture(scope="module")
def syslog_ring(tmp_path_factory) -> Path:
    if shutil.which("cc") is None:
        missing("cc is not installed: the syslog ring cannot be built")
    out = tmp_path_factory.mktemp("syslog") / "ring"
    subprocess.run(["cc", "-O2", "-o", str(out), str(OUTSIDERS / "o18_syslog_ring.c")], check=True)
    return out


@pytest.mark.parametrize("rfc", ["3164", "5424"])
def test_the_c_syslog_ring_run_anew(cli, tmp_path, syslog_ring, rfc):
    logs = {}
    for run in ("ring", "early"):
        logs[run] = tmp_path / f"{run}.log"
        subprocess.run(
            [syslog_ring, logs[run], "4", "3", rfc, *(["early"] if run == "early" else [])], check=True
        )
    layout = f"syslog lines (RFC {rfc}: '"
    correct, broken = (converted(cli, logs[run], tmp_path, layout) for run in ("ring", "early"))
    done = cli("verify", correct)
    assert done.returncode == 0 and "enter 12, exit 12" in done.stdout, said(done)
    done = cli("verify", broken)
    assert done.returncode == 1 and HOLDERS.search(done.stdout), said(done)


@pytest.mark.slow
def test_the_java_ring_run_anew(cli, tmp_path):
    if shutil.which("javac") is None or shutil.which("java") is None:
        missing("javac or java is not installed: the Java ring cannot be built")
    built = tmp_path / "classes"
    subprocess.run(["javac", "-Xlint:all", "-Werror", "-d", built, OUTSIDERS / "O18JulRing.java"], check=True)
    for run in ("ring", "early"):
        subprocess.run(
            ["java", "-cp", built, "O18JulRing", tmp_path / run, "4", "3", *(["early"] * (run == "early"))],
            check=True,
        )
    for suffix, layout in (
        (".xml", "java.util.logging's XMLFormatter"),
        (".txt", "java.util.logging's Simple"),
    ):
        correct, broken = (
            converted(cli, tmp_path / f"{run}{suffix}", tmp_path, layout) for run in ("ring", "early")
        )
        done = cli("verify", correct)
        assert done.returncode == 0 and "enter 12, exit 12" in done.stdout, said(done)
        done = cli("verify", broken)
        assert done.returncode == 1 and HOLDERS.search(done.stdout), said(done)
