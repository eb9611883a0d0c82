"""``mutexlab verify`` on logs other programs write (tests/outsiders/o11_*): a thread pool's
clock-free JSON lines (ISO stamps, thread names as processes, a logger's own fields), a GoVector
log whose program wrote a message over several lines, and JSON events whose vector clock is a
list. The correct log is SAFE, the broken one names its overlap, hostile variants get one clear
line in bounded time; never a traceback."""

from __future__ import annotations

from pathlib import Path

from outsider_edits import OUTSIDERS, said

ONE_LINE = 'send TOKEN to node-B payload: {"round": 1, "holder": "node-B"}\n'


def one_line(tmp_path: Path, *edits: tuple[str, str]) -> Path:
    """o11_govector_multiline.log with its three-line message written on one line, then ``edits``."""
    text = (OUTSIDERS / "o11_govector_multiline.log").read_text()
    many = 'send TOKEN to node-B\n  payload: {"round": 1,\n            "holder": "node-B"}\n'
    assert many in text
    text = text.replace(many, ONE_LINE)
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new)
    path = tmp_path / "one.log"
    path.write_text(text)
    return path


def test_a_thread_pools_clock_free_log_is_safe_and_its_early_entry_a_violation(cli):
    done = cli("verify", OUTSIDERS / "o11_threads_clockfree.json")
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    assert "events: enter 6, exit 6, recv 5, request 6, send 5" in done.stdout, said(done)
    done = cli("verify", OUTSIDERS / "o11_threads_clockfree_broken.json", "--expect-entries", "2")
    assert done.returncode == 1, said(done)
    assert "held by pool-1-thread-2 (1 unit, line 22), pool-1-thread-3 (1 unit, line 26)" in done.stdout


def test_a_thread_pools_log_cut_mid_line_is_incomplete_naming_the_line(cli, tmp_path):
    text = (OUTSIDERS / "o11_threads_clockfree.json").read_text()
    cut = tmp_path / "cut.json"
    cut.write_text(text[: len(text) - 40])
    done = cli("verify", cut)
    assert done.returncode == 3 and "[line-cut-off] line 28, the last, is cut off mid-write" in done.stdout, (
        said(done)
    )


def test_a_govector_message_over_several_lines_is_refused_saying_so_and_one_line_is_read(cli, tmp_path):
    """Before, line 9 (the message's indented second line) was only "not a record of GoVector's
    regex": now the error says it reads as the event above going on, and how many lines a record is."""
    done = cli("verify", OUTSIDERS / "o11_govector_multiline.log")
    assert done.returncode == 2, said(done)
    assert "o11_govector_multiline.log:9: not a record of GoVector's regex" in done.stderr, said(done)
    assert "indented, it reads as the event above going on: a record is 2 lines" in done.stderr, said(done)
    done = cli("verify", one_line(tmp_path))
    assert done.returncode == 0 and "ShiViz log: SAFE" in done.stdout, said(done)


def test_a_govector_log_whose_clocks_contradict_is_refused_naming_the_line(cli, tmp_path):
    ahead = one_line(tmp_path, ('node-B {"node-A":4, "node-B":4}', 'node-B {"node-A":9, "node-B":4}'))
    done = cli("verify", ahead)
    assert done.returncode == 2 and "node-B knows event 9 of node-A, which has 4 events" in done.stderr, said(
        done
    )
    back = one_line(tmp_path, ('node-B {"node-A":4, "node-B":4}', 'node-B {"node-A":4, "node-B":2}'))
    done = cli("verify", back)
    assert done.returncode == 2 and "node-B's own clock entry goes from 3 (line 13) to 2" in done.stderr, (
        said(done)
    )


def test_json_events_whose_clock_is_a_list_are_told_what_a_clock_is(cli, tmp_path):
    """Before: without a header, "the trace has no 'run' header" and nothing of what to do; with
    one, "event lacks its vector clock 'vc'" of an event that has one, a list. Now the way to
    read such a log (a header line), and what a clock must be (names, not positions)."""
    events = [
        '{"pid": "p0", "event": "request", "resource": "cs", "vc": [1, 0]}',
        '{"pid": "p0", "event": "enter", "resource": "cs", "vc": [2, 0]}',
    ]
    bare = tmp_path / "list.json"
    bare.write_text("\n".join(events) + "\n")
    done = cli("verify", bare)
    assert done.returncode == 2, said(done)
    assert 'is read with a header line first: {"event": "run", "pid": "run", "capacities": {"cs": 1}}' in (
        done.stderr
    ), said(done)
    headed = tmp_path / "headed.json"
    headed.write_text('{"event": "run", "pid": "run", "capacities": {"cs": 1}}\n' + bare.read_text())
    done = cli("verify", headed)
    assert done.returncode == 2 and "headed.json:2: 'vc' is [1, 0]: a vector clock is a JSON object" in (
        done.stderr
    ), said(done)
    assert "lacks its vector clock" not in done.stderr, said(done)
    named = tmp_path / "named.json"
    named.write_text(headed.read_text().replace("[1, 0]", '{"p0": 1}').replace("[2, 0]", '{"p0": 2}'))
    done = cli("verify", named)
    assert done.returncode == 3 and "[held-at-end] p0 still holds cs" in done.stdout, said(done)
    shiviz = tmp_path / "list.log"
    shiviz.write_text("node-A [1, 0]\nenter cs\n")
    done = cli("verify", shiviz, "--regex", r"(?<host>\S*) (?<clock>\[.*\])\n(?<event>.*)")
    assert done.returncode == 2 and "list.log:1: the clock is [1, 0]: a vector clock is a JSON object" in (
        done.stderr
    ), said(done)


def test_a_thread_pools_receive_of_a_message_never_sent_is_refused_naming_it(cli, tmp_path):
    lines = (OUTSIDERS / "o11_threads_clockfree.json").read_text().splitlines(keepends=True)
    assert '"event": "recv"' in lines[20] and '"id": "tok-1-1"' in lines[20]
    lines[20] = lines[20].replace("tok-1-1", "tok-9-9")
    lost = tmp_path / "lost.json"
    lost.write_text("".join(lines))
    done = cli("verify", lost)
    assert done.returncode == 2, said(done)
    assert "lost.json:21: pool-1-thread-2 receives message 'tok-9-9', which no send of the log carries" in (
        done.stderr
    ), said(done)
