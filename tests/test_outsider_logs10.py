"""``mutexlab verify`` on logs as other programs write them (tests/outsiders/o10_*): a Java
program's log4j lines (thread name, ISO stamp with an offset, the vector clock as a JSON suffix),
the same written on Windows (CRLF, a UTF-8 BOM) or cut mid-line by a kill, and a Python
``logging`` JSON handler's lines. Never a false SAFE or a false violation, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from outsider_edits import OUTSIDERS, said

# what the Java program's author would write for its layout: %d [%t] %-5p %c - %m %vc
LOG4J = r"^\S+ \[(?<host>[^\]]+)\] \w+\s+\S+ - (?<event>.*) (?<clock>\{.*\})$"


def windows(tmp_path: Path, fixture: str) -> Path:
    """The fixture as a Windows program writes it: a UTF-8 BOM, CRLF line ends."""
    path = tmp_path / fixture.replace(".log", "-crlf.log")
    path.write_bytes(b"\xef\xbb\xbf" + (OUTSIDERS / fixture).read_bytes().replace(b"\n", b"\r\n"))
    return path


@pytest.mark.parametrize(("fixture", "code", "said_"), [
    ("o10_log4j_token.log", 0, "ShiViz log: SAFE"),
    ("o10_log4j_overlap.log", 1, "[capacity] cs (capacity 1) held by node-A (1 unit, line 2), node-B"),
])  # fmt: skip
def test_a_log4j_log_is_judged_alike_as_written_and_as_windows_writes_it(cli, tmp_path, fixture, code, said_):
    for path in (OUTSIDERS / fixture, windows(tmp_path, fixture)):
        done = cli("verify", path, "--regex", LOG4J)
        assert done.returncode == code and said_ in done.stdout, said(done)
        assert "events: enter 2, exit 2" in done.stdout, said(done)


def test_a_log4j_log_cut_mid_line_by_a_kill_is_refused_naming_the_line(cli, tmp_path):
    text = (OUTSIDERS / "o10_log4j_token.log").read_text()
    cut = tmp_path / "killed.log"
    cut.write_text(text[: text.rindex('"node-B":4}')])  # the last clock half written
    done = cli("verify", cut, "--regex", LOG4J)
    assert done.returncode == 2 and f"{cut}:8: not a record of --regex" in done.stderr, said(done)
    assert "Traceback" not in done.stderr, said(done)


def test_a_python_logging_json_log_is_refused_with_the_way_to_read_it_and_that_way_works(cli):
    """A logging JSON handler's lines (asctime, name, levelname, process, message, vc). Before:
    only "event lacks event, pid", nothing of whose shape that is nor how to read the log."""
    path = OUTSIDERS / "o10_pylogging_overlap.json"
    done = cli("verify", path)
    assert done.returncode == 2 and f"{path}:1: event lacks event, pid: not mutexlab's event shape" in (
        done.stderr
    ), said(done)
    assert "--format shiviz --regex" in done.stderr, said(done)
    regex = r'^\{.*"process": "(?<host>[^"]+)", "message": "(?<event>[^"]*)", "vc": (?<clock>\{[^}]*\})\}$'
    done = cli("verify", path, "--format", "shiviz", "--regex", regex)
    assert done.returncode == 1 and "[capacity] cs (capacity 1) held by node-1" in done.stdout, said(done)
