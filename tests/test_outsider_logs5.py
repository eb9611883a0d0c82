"""``mutexlab verify`` and ``report`` on logs written by implementations made elsewhere, each in
its author's own style, correct and broken (docs/verify-any-log.md, docs/trace-format.md).

The fixtures in tests/outlogs/ and the programs that wrote them:

* ``o5-node-ra-intids[-broken].log``: ``node o5_node_ra.js OUT 4 3 [broken]``, Ricart–Agrawala in
  Node.js with integer process ids as hosts and clock keys, newest key first, a regex of its own
  on line 1 (broken: every request answered at once);
* ``o5-bees-mp-shared[-broken].log``: ``python3 o5_bees_mp.py OUT 5 1 2 2 4 [broken]``, mason bees
  as processes passing reed and flower tokens, appending mutexlab's trace format (a header naming
  the problem ``bees``) in batches to one shared file, so a ``recv`` often precedes its ``send``
  (broken: a bee's second egg without a flower visit); ``o5-bees-mp-clockfree.log`` is the same
  run without its clocks (``"format": "jsonl"``);
* ``o5-central-skewed[-broken].log``: ``java O5CentralLock OUT 3 3 [broken]``, a lock server and
  three clients as threads, clock-free, each line stamped by its thread's skewed clock and the
  file sorted by stamp (broken: the server grants two at once);
* ``o5-ring-cf-perproc[-broken].log``: ``./o5_ring_cf PREFIX 4 3 [broken]`` then ``cat PREFIX.*``,
  a token ring of forked processes in C, one clock-free file each (broken: p1 enters before the
  token);
* ``o5-elves-mayor[-short].log``: ``python3 o5_elves_mayor.py OUT [short]``, the hamster killers
  with a mayor handing out contracts with their units (short: one poison portion too few);
* ``o5-two-runs-cat.log``: a Ricart–Agrawala trace and a bees trace put end to end (``cat``).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

OUTLOGS = Path(__file__).resolve().parent / "outlogs"


def said(done) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


@pytest.mark.parametrize(
    ("name", "head"),
    [
        ("o5-node-ra-intids.log", "ShiViz log: SAFE"),
        ("o5-bees-mp-shared.log", "bees: SAFE"),
        ("o5-central-skewed.log", "JSON Lines log: SAFE"),
        ("o5-ring-cf-perproc.log", "JSON Lines log: SAFE"),
        ("o5-elves-mayor.log", "elves: SAFE"),
    ],
)
def test_a_correct_implementations_log_is_safe(cli, name, head):
    done = cli("verify", OUTLOGS / name)
    assert done.returncode == 0 and done.stdout.splitlines()[0] == head, said(done)


@pytest.mark.parametrize(
    ("name", "head", "kinds"),
    [
        ("o5-node-ra-intids-broken.log", "ShiViz log: VIOLATION (9)", {"capacity"}),
        ("o5-bees-mp-shared-broken.log", "bees: VIOLATION (4)", {"egg-without-nectar"}),
        ("o5-central-skewed-broken.log", "JSON Lines log: VIOLATION (4)", {"capacity"}),
        ("o5-ring-cf-perproc-broken.log", "JSON Lines log: VIOLATION (1)", {"capacity"}),
        ("o5-elves-mayor-short.log", "elves: VIOLATION (5)", {"poison-units"}),
    ],
)
def test_a_broken_implementations_log_is_a_violation_of_its_kind(cli, name, head, kinds):
    done = cli("verify", OUTLOGS / name)
    assert done.returncode == 1 and done.stdout.splitlines()[0] == head, said(done)
    assert set(re.findall(r"^  \[([a-z-]+)\]", done.stdout, re.M)) == kinds, said(done)


def _records(path: Path) -> dict[int, tuple[str, dict, str]]:
    """A two-line ShiViz log's records by the line they start on: (host, clock, description)."""
    lines = path.read_text().split("\n")
    records = {}
    for number in range(3, len(lines), 2):
        host, clock = lines[number - 1].split(" ", 1)
        records[number] = (host, json.loads(clock), lines[number])
    return records


def test_the_node_logs_witnesses_are_truly_concurrent_holders(cli):
    """Each pair named holds cs at once by the clocks themselves: neither holder's exit is known to
    the other's enter (checked here from the records, without mutexlab)."""
    path = OUTLOGS / "o5-node-ra-intids-broken.log"
    records = _records(path)
    exits, entered = {}, {}  # (host, its enter's own count) → the clock of the exit that ends it
    for host, clock, text in records.values():  # a host's records come in its order
        if text == "enter cs":
            entered[host] = clock[host]
        elif text == "exit cs":
            exits[(host, entered.pop(host))] = clock
    done = cli("verify", path)
    pairs = re.findall(r"held by (\d+) \(1 unit, line (\d+)\), (\d+) \(1 unit, line (\d+)\)", done.stdout)
    assert len(pairs) == 9, said(done)
    for p, p_line, q, q_line in pairs:
        (_, enter_p, _), (_, enter_q, _) = records[int(p_line)], records[int(q_line)]
        exit_p, exit_q = exits[(p, enter_p[p])], exits[(q, enter_q[q])]
        assert enter_q.get(p, 0) < exit_p[p] and enter_p.get(q, 0) < exit_q[q], (p_line, q_line)


def test_the_shared_bees_file_is_out_of_causal_order_yet_judged(cli):
    """The fixture is what it claims: receives before their sends in the file."""
    seen, early = set(), 0
    for line in (OUTLOGS / "o5-bees-mp-shared.log").read_text().splitlines()[1:]:
        event = json.loads(line)
        if event["event"] == "send":
            seen.add(event["id"])
        early += event["event"] == "recv" and event["id"] not in seen
    assert early >= 5


def test_a_clock_entry_beyond_64_bits_is_refused_naming_its_line(cli, tmp_path):
    """Before: an OverflowError in the clocks' check, exit 4 (`internal error`)."""
    path = tmp_path / "huge.log"
    path.write_text('b {"b":1}\nx\na {"a":1, "b": 99999999999999999999999999}\nenter cs\n')
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip() == (
        f"mutexlab: error: {path}:3: the vector clocks contradict each other: a knows event "
        "99999999999999999999999999 of b, more events than any log holds (at most 9,223,372,036,854,775,807)"
    )
    path.write_text('a {"a":1, "b": 9223372036854775808}\nenter cs\n')  # 2**63: one past
    assert cli("report", path, "-o", tmp_path / "r.html").returncode == 2


def test_two_runs_in_one_trace_are_refused_at_the_second_header(cli, tmp_path):
    """Before: the second header was skipped, the bees judged by Ricart–Agrawala's header:
    `VIOLATION` `[unknown-resource] bee-3 entered reed:1`, a finding of no run."""
    path = OUTLOGS / "o5-two-runs-cat.log"
    message = (
        f"mutexlab: error: {path}:44: a run header after the first event: a trace holds one run "
        "(its header at line 1); verify each run's trace on its own"
    )
    for command in (["verify", path], ["report", path, "-o", tmp_path / "r.html"]):
        done = cli(*command)
        assert done.returncode == 2 and done.stderr.strip() == message, said(done)


def test_a_clock_free_log_whose_header_names_a_problem_states_its_workload(cli):
    """Before: `JSON Lines log: SAFE` with `not checked: the workload (the log states none …)`
    though the header states it and the bees' checks read it, and --expect-entries was taken."""
    path = OUTLOGS / "o5-bees-mp-clockfree.log"
    done = cli("verify", path)
    assert done.returncode == 0, said(done)
    assert done.stdout.splitlines()[0] == "bees: SAFE"
    assert "not checked" not in done.stdout
    assert "total eggs = min(eggs·P, cocoons·T)" in done.stdout
    done = cli("verify", path, "--expect-entries", "3")
    assert done.returncode == 2, said(done)
    assert "its run header names the problem 'bees', whose checks take the workload" in done.stderr


def test_a_problem_headers_short_workload_is_not_called_unchecked(cli, tmp_path):
    """Before: `workload-short` from the header and, in the same verdict, `not checked: the
    workload (the log states none …)`."""
    header = {
        "event": "run",
        "pid": "run",
        "problem": "mutex",
        "format": "jsonl",
        "processes": {"1": "a"},
        "capacities": {"cs": 1},
        "params": {"requests": 2},
    }
    events = [{"event": kind, "pid": "a", "resource": "cs"} for kind in ("request", "enter", "exit")]
    path = tmp_path / "short.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    done = cli("verify", path)
    assert done.returncode == 3 and done.stdout.startswith("mutex: INCOMPLETE (1)"), said(done)
    assert "[workload-short] a entered cs 1 time; the run header's workload asks 2 times" in done.stdout
    assert "not checked" not in done.stdout


def test_report_draws_a_trace_whose_events_carry_no_time(cli, tmp_path):
    """`t` is optional in a trace; before, `report` refused one without it (`line 3: send event of
    bee-1 lacks a numeric 't'`) that `verify` judged. Now it is placed by causality."""
    for name in ("o5-bees-mp-shared.log", "o5-elves-mayor-short.log"):
        page = tmp_path / f"{name}.html"
        done = cli("report", OUTLOGS / name, "-o", page)
        assert done.returncode == 0, said(done)
        assert "This log carries no times: positions come from causality" in page.read_text()
    broken = tmp_path / "late.log"  # a time missing further on is still refused, naming the line
    lines = (OUTLOGS / "o5-elves-mayor.log").read_text().splitlines()
    first = json.loads(lines[1])
    lines[1] = json.dumps({**first, "t": 0.5})
    broken.write_text("\n".join(lines) + "\n")
    done = cli("report", broken, "-o", tmp_path / "late.html")
    assert done.returncode == 2 and "line 3: " in done.stderr and "lacks a numeric 't'" in done.stderr


def test_a_host_whose_clock_starts_again_at_one_is_told_it_may_have_restarted(cli, tmp_path):
    """A process that crashed and came back with a fresh clock under its old name: before, the
    refusal said only that its records were out of order."""
    path = tmp_path / "restart.log"
    records = [("a", 1, "request cs"), ("a", 2, "enter cs"), ("a", 3, "exit cs"), ("a", 1, "back up")]
    path.write_text("".join(f'{h} {{"{h}":{n}}}\n{text}\n' for h, n, text in records))
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip() == (
        f"mutexlab: error: {path}:7: a's own clock entry goes from 3 (line 5) to 1: a host's records "
        "must come in its own order (or a starts afresh here: a second execution appended, or a "
        "restart with a new clock; verify one execution at a time, and give a restarted process a "
        "name of its own)"
    )
    path.write_text(path.read_text().replace('{"a":1}\nback up', '{"a":2}\nback up'))
    assert "starts afresh" not in cli("verify", path).stderr  # back to 2: out of order, no more


def test_a_log_of_its_header_alone_is_unfinished_and_says_it_has_no_events(cli, tmp_path):
    """Before: the verdict ended on `events: ` with nothing after it."""
    path = tmp_path / "header.log"
    path.write_text((OUTLOGS / "o5-bees-mp-clockfree.log").read_text().splitlines()[0] + "\n")
    done = cli("verify", path)
    assert done.returncode == 3 and done.stdout.startswith("bees: INCOMPLETE (6)"), said(done)
    assert "\nevents: none\n" in done.stdout
    assert "[too-few-eggs] 0 eggs laid" in done.stdout


def test_a_second_delivery_in_a_log_without_header_names_what_is_missing(cli, tmp_path):
    """Before: `the run header declares no duplicates`, of a log that has no run header."""
    events = [
        {"event": "send", "pid": "a", "type": "T", "to": "b", "id": "1"},
        {"event": "recv", "pid": "b", "type": "T", "from": "a", "id": "1"},
        {"event": "recv", "pid": "b", "type": "T", "from": "a", "id": "1", "copy": True},
        {"event": "enter", "pid": "b", "resource": "cs"},
        {"event": "exit", "pid": "b", "resource": "cs"},
    ]
    path = tmp_path / "twice.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    done = cli("verify", path)
    assert done.returncode == 1, said(done)
    assert (
        "[recv-without-send] b received message 1 from a, which no send of the trace carries (or "
        "received already: the log has no run header to declare duplicates) — line 3 (b recv)"
    ) in done.stdout


def test_a_record_is_held_within_a_lines_limit(cli, tmp_path):
    """A line is refused past 8 MiB, but a regex of many `\\n`s made a record of as many lines, held
    whole: before, 20,002 lines of 5,000 characters (100 MB) were held and judged."""
    path = tmp_path / "span.log"
    regex = r"(?<host>\S*) (?<clock>{.*})" + r"\n.*" * 1_000 + r"\n(?<event>.*)"
    path.write_text(f"{regex}\n\n" + 'a {"a":1}\n' + ("x" * 10 + "\n") * 1_000 + "enter cs\n")
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip() == (
        f"mutexlab: error: {path}:1: the log's regex: a record of 1,002 lines (its \\n plus one), "
        "more than 1,000 (limits.MAX_RECORD_LINES)"
    )
    regex = r"(?<host>\S*) (?<clock>{.*})" + r"\n.*" * 500 + r"\n(?<event>.*)"
    path.write_text(f"{regex}\n\n" + 'a {"a":1}\n' + ("x" * 20_000 + "\n") * 500 + "enter cs\n")
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip() == (
        f"mutexlab: error: {path}:3: a record longer than 8,388,608 characters (the limit of a line), "
        "from line 3 to 423 of its 502"
    )
    path.write_text(path.read_text().replace("x" * 20_000, "x" * 10))  # small lines: judged
    done = cli("verify", path)
    assert done.returncode == 3 and "[held-at-end] a still holds cs" in done.stdout, said(done)
