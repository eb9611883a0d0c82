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


@pytest.mark.parametrize("kind", ["[enter]", "ENTERcs", "enterCS", "<enter>"])
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
    "text",
    [
        "entertain guests",
        "Entertain",
        "EXITCODE 0",
        "[t=5] hello",
        "-> token to b",
        # a program's ordinary words: an exit or a request joined or tagged is no enter, and a
        # missed one shows as a finding, never as SAFE (keywords.py); refused before this round's end
        "exitCode 0",
        "requestQueue: [2, 3]",
        "RequestVote term 3",
        "-> request to 2",
        "[main] exit code 0",
    ],
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


# The programs, each run correct and broken (the fixtures are their output, kept as written):
#
# * ``o9-phil-rust[-timer].log``: ``rustc -O o9_philosophers.rs && ./o9_philosophers LOG 5 3
#   [timer]``, the dining philosophers in Rust (std only: threads, channels), a waiter granting
#   both forks, GoVector records whose hosts are the philosophers' numbers (timer: the waiter takes
#   a fork back 15 ms after granting it instead of waiting for it — the philosopher ate in 2 ms,
#   so each exit comes before the next enter in the file, and no message orders them);
# * ``o9-kmutex-lamport[-greedy|-vc].log``: ``perl o9_kmutex_lamport.pl LOG 4 3 2 [MODE]``,
#   k-mutual exclusion (a printer pool of 2) by a semaphore server and forked clients over pipes,
#   each keeping a Lamport clock only: clock-free JSON Lines with ``lamport`` beside the ids, one
#   ``syswrite`` a line to a file opened ``O_APPEND`` (greedy: the server counts a permit back
#   before its release arrives; vc: the Lamport clock written as a GoVector clock);
# * ``o9-ring-threads[-pieces|-eager|-intid].log``: ``./o9_ring_threads 4 MODE > LOG``, a token
#   ring of 3 pthreads printing clock-free JSON Lines to one shared stdout (pieces: each line in
#   three unlocked ``fprintf`` calls, interleaving; eager: t2 enters before the token reaches it,
#   after a 20 ms pause; intid: the first version, whose message ids were C ints);
# * ``o9-elves-node[-cat|-loose].log``: ``node o9_elves_node.js DIR 4 4 6 4 [loose]`` then
#   ``sort -m DIR/*.log`` (cat: ``cat DIR/*.log``), the elves in Node.js child processes, one file
#   each as a structured logger writes it: ISO-8601 stamps in each process's own time zone,
#   ``level``, ``host``, ``message`` beside the clock-free fields (loose: the mayor believes it has 3
#   pins and 2 poison portions more than it has);
# * ``o9-bees-ruby[-squat|-sorted].log``: ``ruby o9_bees_ruby.rb DIR 5 3 2 2 [squat]`` then
#   ``sort -m DIR/*.log``, mason bees as Ruby threads passing reed and flower tokens that carry
#   vector clocks, one file per bee, one record a line behind an ISO-8601 stamp (squat: bee-1 lays
#   its first egg in reed:1 without its token; sorted: the correct run put together with plain
#   ``sort``, which orders a bee's lines that share a millisecond by their clocks' text).
STAMPED = r"\S+ (?<host>\S+) (?<clock>{[^}]*}) (?<event>.*)"
ELVES = ("--capacity", "pins=6", "--capacity", "poison=4")
PROGRAMS = {
    "o9-phil-rust.log": (),
    "o9-kmutex-lamport.log": ("--capacity", "printer=2"),
    "o9-ring-threads.log": (),
    "o9-elves-node.log": ELVES,
    "o9-elves-node-cat.log": ELVES,
    "o9-bees-ruby.log": ("--regex", STAMPED, "--capacity", "flower=2"),
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_a_correct_programs_log_is_safe(cli, name):
    done = cli("verify", OUTLOGS / name, *PROGRAMS[name])
    assert done.returncode == 0 and done.stdout.splitlines()[0].endswith(": SAFE"), said(done)


@pytest.mark.parametrize(
    ("name", "flags", "count"),
    [
        ("o9-phil-rust-timer.log", (), 25),
        ("o9-kmutex-lamport-greedy.log", ("--capacity", "printer=2"), 1),
        ("o9-ring-threads-eager.log", (), 2),
        ("o9-elves-node-loose.log", ELVES, 2),
        ("o9-bees-ruby-squat.log", PROGRAMS["o9-bees-ruby.log"], 1),
    ],
)
def test_a_broken_programs_log_is_a_capacity_violation(cli, name, flags, count):
    done = cli("verify", OUTLOGS / name, *flags)
    assert done.returncode == 1 and done.stdout.splitlines()[0].endswith(f"VIOLATION ({count})"), said(done)
    assert kinds(done) == {"capacity"}, said(done)


def _file_order_handover(done, path: Path, host_of) -> int:
    """How many overlaps named where the earlier holder's exit is before the later's enter in the
    file: handovers that only happened-before shows were none."""
    lines = path.read_text().splitlines()
    found = 0
    for p, p_line, q, q_line in re.findall(
        r"held by (\S+) \(1 unit, line (\d+)\), (\S+) \(1 unit, line (\d+)\)", done.stdout
    ):
        first, second = sorted(((int(p_line), p), (int(q_line), q)))
        exits = [n for n in range(first[0], second[0]) if host_of(lines, n) == (first[1], "exit")]
        found += bool(exits)
    return found


def test_the_timer_waiters_overlaps_are_in_file_order_yet_found(cli):
    """The waiter's bug leaves every exit before the next enter in the file: only the clocks show
    that no message ordered them."""
    path = OUTLOGS / "o9-phil-rust-timer.log"
    done = cli("verify", path)

    def host_of(lines, n):  # a record's (host, keyword) from its first line n (1-based)
        return lines[n - 1].split(" ")[0], lines[n].split(" ")[0] if n < len(lines) else ""

    assert _file_order_handover(done, path, host_of) >= 20, said(done)


def test_the_eager_threads_overlap_is_in_file_order_yet_found(cli):
    path = OUTLOGS / "o9-ring-threads-eager.log"
    done = cli("verify", path)

    def host_of(lines, n):
        event = json.loads(lines[n - 1])
        return event["pid"], event["event"]

    assert _file_order_handover(done, path, host_of) == 2, said(done)


def test_a_lamport_clock_written_as_a_vector_clock_is_refused_with_the_way_out(cli):
    done = cli("verify", OUTLOGS / "o9-kmutex-lamport-vc.log", "--capacity", "printer=2")
    assert done.returncode == 2, said(done)
    assert re.search(
        r"o9-kmutex-lamport-vc\.log:\d+: the vector clocks contradict each other: \S+'s own entry skips "
        r"events: \d+ after \d+ \(each of its events adds exactly 1; a Lamport clock is no vector clock: "
        r"write clock-free JSON Lines instead\)",
        done.stderr,
    ), said(done)


def test_threads_printing_a_line_in_pieces_are_refused_naming_the_interleaving(cli):
    """Before: only `not JSON (Expecting property name …)`, nothing of why."""
    done = cli("verify", OUTLOGS / "o9-ring-threads-pieces.log")
    assert done.returncode == 2 and "SAFE" not in done.stdout, said(done)
    assert re.search(
        r"o9-ring-threads-pieces\.log:\d+: not JSON \(.*\): another event starts at column \d+ \(writers "
        r"sharing one output, a line written in pieces: write each line with one call, or under a lock\)",
        done.stderr,
    ), said(done)


def test_a_message_id_written_as_a_number_is_refused_with_the_spelling(cli):
    """The C ring's first version printed `"id": 0`. Before: `must be a string, got 0`, no more."""
    done = cli("verify", OUTLOGS / "o9-ring-threads-intid.log")
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(":4: send event's 'id' must be a string, got 0 (write \"0\")"), said(
        done
    )


def test_a_structured_loggers_msg_text_is_its_own_field_on_a_send_too(cli, tmp_path):
    """pino and bunyan write `msg` on every line. Before: every line refused at the first (`request
    event's 'msg' must be a JSON object or null`), though only a send's `msg` is a message body;
    then a send's string `msg` still was (a body is a JSON object: a string is the logger's text,
    test_outsider_logs14)."""
    lines = [
        {"msg": "asks", "event": "request", "pid": "a", "resource": "cs"},
        {"msg": "in", "event": "enter", "pid": "a", "resource": "cs"},
        {"msg": "out", "event": "exit", "pid": "a", "resource": "cs"},
        {"msg": "token to b", "event": "send", "pid": "a", "type": "T", "to": "b", "id": "1"},
    ]
    path = tmp_path / "pino.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    done = cli("verify", path)
    assert done.returncode == 0 and done.stdout.startswith("JSON Lines log: SAFE"), said(done)


def test_per_host_files_put_together_by_plain_sort_are_refused_saying_why(cli):
    """Plain `sort` orders one bee's lines of the same millisecond by their clocks' text (`10` before
    `9`). Refused, never judged: before, the refusal did not say a record may be out of order."""
    done = cli("verify", OUTLOGS / "o9-bees-ruby-sorted.log", *PROGRAMS["o9-bees-ruby.log"])
    assert done.returncode == 2, said(done)
    assert "own entry skips events" in done.stderr and "merge per-host files with `sort -m`" in done.stderr
