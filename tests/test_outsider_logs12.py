"""``mutexlab verify`` on logs other programs write (tests/outlogs/o12-*): a lock server's ShiViz log
with a regex of its own (a date first, host names with a space, the clock last), a GoVector log
padded with blanks at the ends of its lines, a worker pool's clock-free JSON with wall-clock stamps
only, and a counterexample scenario given to verify in place of a trace. Correct ones SAFE, broken
ones a finding or an error naming the line; never a traceback."""

from __future__ import annotations

from pathlib import Path

from outsider_edits import said

OUTLOGS = Path(__file__).resolve().parent / "outlogs"


def edited(tmp_path: Path, name: str, *edits: tuple[str, str]) -> Path:
    text = (OUTLOGS / name).read_text()
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / name
    path.write_text(text)
    return path


def test_a_lock_servers_log_with_its_own_regex_is_safe_and_a_clock_that_goes_back_refused(cli, tmp_path):
    done = cli("verify", OUTLOGS / "o12-lock-server-custom-regex.log", "--expect-entries", "1")
    assert done.returncode == 0 and "ShiViz log: SAFE" in done.stdout, said(done)
    assert "events: enter 2, exit 2, other 2, request 1" in done.stdout, said(done)
    # client 7 enters knowing only the server's second event (before its exit): its clock goes back
    back = edited(
        tmp_path,
        "o12-lock-server-custom-regex.log",
        (
            '[client 7] enter cs @ {"lock server":4, "client 7":2}',
            '[client 7] enter cs @ {"lock server":2, "client 7":2}',
        ),
    )
    done = cli("verify", back)
    assert done.returncode == 2, said(done)
    assert (
        f"{back}:8: the vector clocks contradict each other: client 7's entry for lock server goes back"
        in (done.stderr)
    ), said(done)


def test_a_govector_log_padded_with_blanks_is_read_and_its_overlap_found(cli, tmp_path):
    """Before: line 1, `alpha {"alpha":1}   `, was "not a record of GoVector's regex" — blanks an
    editor or a logger left at the ends of lines. Now they say nothing, as they mean nothing."""
    done = cli("verify", OUTLOGS / "o12-govector-padded.log")
    assert done.returncode == 0 and "ShiViz log: SAFE" in done.stdout, said(done)
    assert "events: enter 2, exit 2, other 4, request 2" in done.stdout, said(done)
    # bravo enters before it hears of alpha's exit: the TOKEN's clock knows only alpha's enter
    early = edited(
        tmp_path,
        "o12-govector-padded.log",
        (
            'alpha {"alpha":4}\nexit cs\nalpha {"alpha":5} \nsend TOKEN',
            'alpha {"alpha":4}\nsend TOKEN\nalpha {"alpha":5} \nexit cs',
        ),
        ('bravo {"alpha":5, "bravo":2}  ', 'bravo {"alpha":4, "bravo":2}  '),
        ('bravo {"alpha":5, "bravo":3}', 'bravo {"alpha":4, "bravo":3}'),
        ('bravo {"alpha":5, "bravo":4}  \t', 'bravo {"alpha":4, "bravo":4}  \t'),
    )
    done = cli("verify", early)
    assert done.returncode == 1 and "ShiViz log: VIOLATION (1)" in done.stdout, said(done)
    assert "cs (capacity 1) held by alpha (1 unit, line 7), bravo (1 unit, line 17)" in done.stdout, said(
        done
    )


def test_a_wall_clock_only_log_says_why_its_holdings_overlap(cli, tmp_path):
    """A worker pool sharing a lock in memory logs its stamps and no message: by happened-before
    every two holdings overlap (exit 1, as ever). Before, the finding said only that; now it says
    the log records no message, that stamps are not causality, and what to log instead."""
    done = cli("verify", OUTLOGS / "o12-worker-pool-wallclock.json")
    assert done.returncode == 1 and "JSON Lines log: VIOLATION (1)" in done.stdout, said(done)
    assert "held by worker-1 (1 unit, line 2), worker-2 (1 unit, line 5) at once" in done.stdout, said(done)
    assert "the log records no message (no send, no recv)" in done.stdout, said(done)
    assert "its time stamps are not causality" in done.stdout, said(done)
    # with the hand-over logged as a message, the same stamps are SAFE, and the note is gone
    handed = edited(
        tmp_path,
        "o12-worker-pool-wallclock.json",
        (
            '"event": "exit", "resource": "cs", "pid": "worker-1"}\n',
            '"event": "exit", "resource": "cs", "pid": "worker-1"}\n'
            '{"event": "send", "type": "LOCK", "to": "worker-2", "id": "w1-1", "pid": "worker-1"}\n'
            '{"event": "recv", "type": "LOCK", "from": "worker-1", "id": "w1-1", "pid": "worker-2"}\n',
        ),
    )
    done = cli("verify", handed)
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)


def test_a_scenario_or_a_pretty_printed_log_given_to_verify_says_what_it_is(cli, tmp_path):
    """Before: `verify ce.json` on check's counterexample said only `ce.json:1: not JSON (Expecting
    property name …)` — of a file that is JSON. Now it says the file is one JSON document over
    several lines, and that replay plays a scenario; the same for a log saved as one JSON array."""
    scenario = tmp_path / "ce.json"
    scenario.write_text('{\n "algorithm": "x.py",\n "processes": 2,\n "steps": []\n}\n')
    for command in ("verify", "report"):
        done = cli(command, scenario, *(("-o", tmp_path / "ce.html") if command == "report" else ()))
        assert done.returncode == 2, said(done)
        assert f"{scenario}:1: not JSON" in done.stderr, said(done)
        assert "one JSON document over several lines, not JSON Lines" in done.stderr, said(done)
        assert "mutexlab replay FILE --trace T" in done.stderr, said(done)
    array = tmp_path / "pool.json"
    array.write_text(
        '[\n  {"event": "enter", "resource": "cs", "pid": "w1"},\n  {"event": "exit", "resource": "cs", "pid": "w1"}\n]\n'
    )
    done = cli("verify", array)
    assert done.returncode == 2 and f"{array}:1: " in done.stderr, said(done)
    assert "one JSON document over several lines, not JSON Lines" in done.stderr, said(done)


def test_a_log_per_process_given_as_several_files_is_told_how_to_make_one(cli, tmp_path):
    """GoVector writes one file per process. Before, `verify p0.log p1.log` said only
    "unrecognized arguments: p1.log"; now it says verify reads one log, and how to make one;
    the files put together end to end are SAFE."""
    lines = (OUTLOGS / "o12-govector-padded.log").read_text().splitlines(keepends=True)
    p0, p1 = tmp_path / "alpha.log", tmp_path / "bravo.log"
    p0.write_text("".join(lines[:2] + lines[4:12]))
    p1.write_text("".join(lines[2:4] + lines[12:]))
    for command in ("verify", "report"):
        done = cli(command, p0, p1)
        assert done.returncode == 2, said(done)
        assert f"unrecognized arguments: {p1}; {command} reads one log of a run, not 2 files" in done.stderr
        assert "`cat p0.log p1.log > run.log`" in done.stderr, said(done)
    whole = tmp_path / "run.log"
    whole.write_text(p0.read_text() + p1.read_text())
    done = cli("verify", whole)
    assert done.returncode == 0 and "ShiViz log: SAFE" in done.stdout, said(done)


def test_a_log_windows_powershell_wrote_in_utf16_is_named_so(cli, tmp_path):
    """`program > run.log` in Windows PowerShell writes UTF-16 (with a byte-order mark; Out-File
    -Encoding Unicode without one in some setups). Before: `not UTF-8 text (byte 1 of the line)`,
    or, without the mark, `not JSON` / `not a record of GoVector's regex`; now each says UTF-16."""
    for name in ("o12-govector-padded.log", "o12-worker-pool-wallclock.json"):
        text = (OUTLOGS / name).read_text()
        for encoding in ("utf-16", "utf-16-le"):
            path = tmp_path / f"{encoding}-{name}"
            path.write_bytes(text.encode(encoding))
            done = cli("verify", path)
            assert done.returncode == 2, said(done)
            assert f"{path}:1: " in done.stderr and "it reads as UTF-16" in done.stderr, said(done)
            assert "iconv -f UTF-16 -t UTF-8" in done.stderr, said(done)
