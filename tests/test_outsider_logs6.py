"""``mutexlab verify`` on a C++ program's printf log: one line a record, behind the program's own
time stamp in brackets (``[04:00:00.001234] rank=0 vc={"0":1} enter cs``), as spdlog and many
hand-written loggers print it. A line that starts with ``[`` but is no JSON is such a record."""

from __future__ import annotations

import pytest
from outsider_edits import said

REGEX = r"\[\S+\] rank=(?<host>\S+) vc=(?<clock>{.*}) (?<event>.*)"
SAFE = [
    '[04:00:00.001234] rank=0 vc={"0":1} request cs',
    '[04:00:00.001300] rank=0 vc={"0":2} enter cs',
    '[04:00:00.001400] rank=0 vc={"0":3} exit cs',
    '[04:00:00.001500] rank=0 vc={"0":4} send token to 1',
    '[04:00:00.001900] rank=1 vc={"1":1} request cs',
    '[04:00:00.002000] rank=1 vc={"0":4,"1":2} recv token from 0',
    '[04:00:00.002100] rank=1 vc={"0":4,"1":3} enter cs',
    '[04:00:00.002200] rank=1 vc={"0":4,"1":4} exit cs',
]
BROKEN = [  # rank 1 enters without the token: nothing of rank 0 in its clocks
    *SAFE[:5],
    '[04:00:00.002100] rank=1 vc={"1":2} enter cs',
    '[04:00:00.002200] rank=1 vc={"1":3} exit cs',
]


@pytest.mark.parametrize(
    "lines, code, verdict", [(SAFE, 0, "ShiViz log: SAFE"), (BROKEN, 1, "ShiViz log: VIOLATION")]
)
def test_a_log_of_bracketed_stamps_is_read_by_its_regex(cli, tmp_path, lines, code, verdict):
    """Before: ``--regex is for ShiViz logs, and this is a mutexlab trace``, exit 2: a first line
    starting with ``[`` was taken for a trace's JSON."""
    log = tmp_path / "cpp.log"
    log.write_text("\n".join(lines) + "\n")
    done = cli("verify", log, "--regex", REGEX)
    assert done.returncode == code and verdict in done.stdout, said(done)
    if code:
        assert "held by 0 (1 unit, line 2), 1 (1 unit, line 6)" in done.stdout, said(done)


def test_without_its_regex_the_log_is_refused_as_records_of_govectors(cli, tmp_path):
    """Before: ``cpp.log:1: not JSON``, as if a trace were broken."""
    log = tmp_path / "cpp.log"
    log.write_text("\n".join(SAFE) + "\n")
    done = cli("verify", log)
    assert done.returncode == 2 and "cpp.log:1: not a record of GoVector's regex" in done.stderr
    assert "records of another layout need --regex" in done.stderr, said(done)
    log.write_text('{"event": "run", broken\n')  # broken JSON is still a trace's, named as such
    done = cli("verify", log)
    assert done.returncode == 2 and "cpp.log:1: not JSON" in done.stderr, said(done)
