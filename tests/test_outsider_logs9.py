"""``mutexlab verify`` on logs of programs written elsewhere, in their authors' own styles, correct
and broken, read with the user docs alone (docs/verify-any-log.md, docs/trace-format.md), and the
small ways such logs were misread before.

The fixtures in tests/outlogs/ and the programs that wrote them are listed where they are judged
(``PROGRAMS`` below)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from outsider_edits import said

from mutexlab import limits

OUTLOGS = Path(__file__).resolve().parent / "outlogs"


def kinds(done) -> set[str]:
    return set(re.findall(r"^  \[([a-z-]+)\]", done.stdout, re.M))


def _shiviz(tmp_path, records: list[tuple[str, int, str]], name: str = "w.log") -> Path:
    """A GoVector log of (host, its own count, description) records, no host hearing another."""
    path = tmp_path / name
    path.write_text("".join(f'{h} {{"{h}":{n}}}\n{text}\n' for h, n, text in records))
    return path


@pytest.mark.parametrize(
    ("enter", "exit_"),
    [
        ("[enter cs]", "[exit cs]"),
        ("ENTERcs", "EXITcs"),
        ("enterCS", "exitCS"),
        ("[INFO] enter cs", "-> exit cs"),
    ],
)
def test_a_disguised_enter_beside_a_plain_one_is_refused_never_safe(cli, tmp_path, enter, exit_):
    """a holds cs under a disguised keyword while b holds it plainly, unordered. Before: a's records
    were `other` events, b's holding alone was audited — `ShiViz log: SAFE`, exit 0."""
    log = _shiviz(tmp_path, [("a", 1, enter), ("b", 1, "enter cs"), ("a", 2, exit_), ("b", 2, "exit cs")])
    done = cli("verify", log)
    assert done.returncode == 2 and "SAFE" not in done.stdout, said(done)
    assert f"w.log:2: {enter!r} starts like an audit event but is not" in done.stderr, said(done)


@pytest.mark.parametrize("kind", ["[enter]", "ENTERcs", "enterCS", "<exit>"])
def test_a_disguised_kind_in_a_clock_free_log_is_refused(cli, tmp_path, kind):
    """Before: an event of no meaning, the log `SAFE` beside b's plain enter."""
    events = [
        {"event": kind, "pid": "a", "resource": "cs"},
        {"event": "enter", "pid": "b", "resource": "cs"},
        {"event": "exit", "pid": "b", "resource": "cs"},
    ]
    path = tmp_path / "k.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    done = cli("verify", path)
    assert done.returncode == 2 and f"k.log:1: the event kind {kind!r} reads as" in done.stderr, said(done)


@pytest.mark.parametrize(
    "text", ["entertain guests", "Entertain", "EXITCODE 0", "[t=5] hello", "-> token to b"]
)
def test_words_that_only_start_like_a_keyword_stay_other_events(cli, tmp_path, text):
    log = _shiviz(tmp_path, [("a", 1, text), ("a", 2, "enter cs"), ("a", 3, "exit cs")])
    done = cli("verify", log)
    assert done.returncode == 0 and done.stdout.startswith("ShiViz log: SAFE"), said(done)


def test_a_resource_written_in_two_cases_is_refused_naming_both_lines(cli, tmp_path):
    """`enter CS` then `exit cs`: the keyword is read in any case, the resource as written. Before:
    `VIOLATION` (`exit-without-enter` of cs, `held-at-end` of CS), a finding of the log's spelling."""
    log = _shiviz(tmp_path, [("a", 1, "enter CS"), ("a", 2, "exit cs")])
    done = cli("verify", log)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip() == (
        f"mutexlab: error: {log}:3: resource 'cs' is 'CS' (line 1) in another case: resource names are "
        "case-sensitive (the keywords are not), so these would be two resources; write one the same "
        "way throughout"
    )
    events = [
        {"event": "enter", "pid": "a", "resource": "Pool"},
        {"event": "exit", "pid": "a", "resource": "pool"},
    ]
    path = tmp_path / "cf.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    done = cli("verify", path)
    assert done.returncode == 2 and "cf.log:2: resource 'pool' is 'Pool' (line 1)" in done.stderr, said(done)
    log = _shiviz(tmp_path, [("a", 1, "ENTER CS"), ("a", 2, "Exit CS")])  # the keyword's case is free
    assert cli("verify", log).returncode == 0


def test_a_user_regex_that_backtracks_is_named_as_the_users(cli, tmp_path):
    """Before: `the log's regex '…' took more than 1 s`, of a regex the user gave with --regex."""
    regex = r"(?<host>(a|aa)+)b (?<clock>{.*}) (?<event>.*)"
    log = tmp_path / "bt.log"
    log.write_text("a" * 40 + ' {"a":1} enter cs\n')
    done = cli("verify", log, "--regex", regex)
    assert done.returncode == 2, said(done)
    assert f"bt.log:1: --regex '{regex}' took more than" in done.stderr, said(done)
    log.write_text("x\n")
    done = cli("verify", log, "--regex", regex)
    assert done.returncode == 2 and f"bt.log:1: not a record of --regex {regex}" in done.stderr, said(done)
    log.write_text(f"{regex}\n\nx\n")  # the log's own regex is still called so
    done = cli("verify", log)
    assert done.returncode == 2 and f"bt.log:3: not a record of the log's regex {regex}" in done.stderr


def _ring_per_process(n: int, rounds: int) -> str:
    """A clock-free token ring, each process's lines together, process after process (``cat``)."""
    out = []
    for i in range(n):
        me = f"p{i}"
        for r in range(rounds):
            if r > 0 or i > 0:
                src = (i - 1) % n
                out.append(
                    {
                        "event": "recv",
                        "pid": me,
                        "type": "T",
                        "from": f"p{src}",
                        "id": f"p{src}#{r - (i == 0)}",
                    }
                )
            out += [{"event": k, "pid": me, "resource": "cs"} for k in ("request", "enter", "exit")]
            out.append({"event": "send", "pid": me, "type": "T", "to": f"p{(i + 1) % n}", "id": f"{me}#{r}"})
    return "".join(json.dumps(e) + "\n" for e in out)


def test_per_process_clock_free_logs_beyond_the_limit_say_so(cli, tmp_path, monkeypatch):
    """Before: `more than 400,000 events wait …: write each send before its receive` — nothing of
    who waits for whom, nor that the file is per-process logs put end to end (a 3-process ring of
    10⁵ rounds: refused after 27 s at 329 MB, `/usr/bin/time -f "%e s %M KB"`)."""
    path = tmp_path / "cat.log"
    path.write_text(_ring_per_process(3, 40))
    done = cli("verify", path)  # within the limit: read, holding what waits
    assert done.returncode == 0 and done.stdout.startswith("JSON Lines log: SAFE"), said(done)
    monkeypatch.setattr(limits, "MAX_WAITING_EVENTS", 50)
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert (
        "cat.log:55: more than 50 events wait for sends further on in the file (the limit of a clock-free "
        "log out of order, limits.MAX_WAITING_EVENTS): p0 waits since line 5 for message 'p2#0' from p2, "
        "which has written nothing before line 55 (per-process logs put end to end?)."
    ) in done.stderr, said(done)
