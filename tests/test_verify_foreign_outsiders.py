"""``mutexlab verify`` on the logs outside programs wrote (tests/outlogs/), as their users hand
them over: prefixed by a logger, with Windows line ends or a byte order mark, several processes'
records mixed, cut, in words the audit does not read, piped into ``head``, or one clock of
500,000 hosts. Each is judged as its clocks say, or refused with the line and the problem; never
a SAFE the log does not support."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from foreign_logs import OUTLOGS, outlog, verify

# The witnesses of the broken Ricart–Agrawala (a request answered at once): the first overlap.
FIRST_OVERLAP = "held by proc0 (1 unit, line 21), proc1 (1 unit, line 75) at once"


def written(path: Path, lines: list[str], end: str = "\n", last: bool = True) -> Path:
    path.write_bytes((end.join(lines) + (end if last else "")).encode())
    return path


def stamped(lines: list[str], logger: str = "") -> list[str]:
    """Each line behind a time stamp (and a log4j-style ``[thread] LEVEL logger -``)."""
    return [f"2026-11-29 10:00:{n // 1000:02d},{n % 1000:03d} {logger}{line}" for n, line in enumerate(lines)]


STAMP = r"\S+ \S+ "
LOG4J = r"\S+ \S+ \[\w+\] INFO  [\w.]+ - "


@pytest.mark.parametrize("broken", [False, True])
def test_a_time_stamped_govector_log_is_refused_until_the_regex_matches_the_stamp(tmp_path, capsys, broken):
    # GoVector's regex matched "proc0 {...}" after the stamp and took the next line, stamp and
    # all, for the description: "2026-… enter cs" is no `enter`, so every enter was an `other`
    # event and the broken run read SAFE, exit 0, before the fix.
    name = "govector-ra-broken.log" if broken else "govector-ra.log"
    log = written(tmp_path / "stamped.log", stamped(outlog(name)))
    code, out, err = verify(capsys, log)
    assert code == 2, out + err
    assert err.startswith(f"mutexlab: error: {log}:1: '2026-11-29 10:00:00,000' before the record"), err
    assert "--regex" in err and len(err.strip().splitlines()) == 1, err
    code, out, err = verify(
        capsys, log, "--regex", f"{STAMP}(?<host>\\S*) (?<clock>{{.*}})\\n{STAMP}(?<event>.*)"
    )
    assert code == (1 if broken else 0), out + err
    assert (FIRST_OVERLAP in out) == broken and "enter 6" in out, out
    log4j = written(tmp_path / "log4j.log", stamped(outlog(name), "[main] INFO  com.example.Mutex - "))
    regex = f"{LOG4J}(?<host>\\S*) (?<clock>{{.*}})\\n{LOG4J}(?<event>.*)"
    code, out, err = verify(capsys, log4j, "--regex", regex)
    assert code == (1 if broken else 0) and (FIRST_OVERLAP in out) == broken, out + err


@pytest.mark.parametrize(
    "how",
    ["crlf", "bom", "bom-crlf", "no-final-newline", "records-mixed", "one-file-per-host-reversed"],
)
@pytest.mark.parametrize("broken", [False, True])
def test_line_ends_a_byte_order_mark_and_mixed_records_change_no_verdict(tmp_path, capsys, how, broken):
    lines = outlog("govector-ra-broken.log" if broken else "govector-ra.log")
    records = [lines[i : i + 2] for i in range(0, len(lines), 2)]
    if how in ("records-mixed", "one-file-per-host-reversed"):  # each host's records in its order
        hosts: dict[str, list[list[str]]] = {}
        for record in records:
            hosts.setdefault(record[0].split(" ")[0], []).append(record)
        queues = [hosts[h] for h in sorted(hosts, reverse=True)]
        if how == "records-mixed":
            rng, records = random.Random(7), []
            while any(queues):
                records.append(rng.choice([q for q in queues if q]).pop(0))
        else:
            records = [r for q in queues for r in q]
    flat = [line for record in records for line in record]
    log = tmp_path / "log.log"
    written(log, flat, "\r\n" if "crlf" in how else "\n", how != "no-final-newline")
    if "bom" in how:
        log.write_bytes(b"\xef\xbb\xbf" + log.read_bytes())
    code, out, err = verify(capsys, log)
    assert code == (1 if broken else 0), out + err
    assert "enter 6, exit 6" in out, out
    if broken and how not in ("records-mixed", "one-file-per-host-reversed"):
        assert FIRST_OVERLAP in out, out


def test_lines_of_two_records_interleaved_name_the_line(tmp_path, capsys):
    # Two processes' stdout mixed line by line: a clock line where a description should be.
    lines = outlog("govector-ra.log")
    lines[2:6] = [lines[2], lines[4], lines[3], lines[5]]
    code, _, err = verify(capsys, written(tmp_path / "mixed.log", lines))
    assert code == 2 and ":5: not a record of GoVector's regex" in err, err


def test_an_mpi_programs_lamport_log_is_judged_by_its_sends_and_receives(tmp_path, capsys):
    # tests/outlogs/mpi_lock.c: rank 0 grants a lock; each line carries a Lamport clock only, and
    # the file holds the ranks' lines as mpirun forwarded them (a recv before its send).
    code, out, err = verify(capsys, OUTLOGS / "mpi-lock.log")
    assert code == 0 and out.startswith("JSON Lines log: SAFE"), out + err
    code, out, err = verify(capsys, OUTLOGS / "mpi-lock-broken.log")
    assert code == 1, out + err
    assert "held by rank-2 (1 unit, line 11), rank-1 (1 unit, line 21) at once" in out, out
    tagged = ["[1,0]<stdout>:" + line for line in outlog("mpi-lock.log")]  # mpirun --tag-output
    code, out, err = verify(capsys, written(tmp_path / "tagged.jsonl", tagged))
    assert code == 2 and f"{tmp_path / 'tagged.jsonl'}:1: " in err, out + err


def test_a_log_whose_enters_the_audit_cannot_read_is_undecided_never_safe(tmp_path, capsys):
    # The broken lock server logging "ENTER"/"EXIT" kinds, and no request: nobody entered as the
    # audit reads it, and the run read SAFE, exit 0, before the fixes (with requests it was
    # INCOMPLETE already: each request unserved). A kind the audit reads, in another case, is now
    # refused at its line (exit 2), naming the kind meant.
    lines = [
        line.replace('"event":"enter"', '"event":"ENTER"').replace('"event":"exit"', '"event":"EXIT"')
        for line in outlog("mpi-lock-broken.log")
        if '"event":"request"' not in line
    ]
    code, out, err = verify(capsys, written(tmp_path / "upper.jsonl", lines))
    assert code == 2, out + err
    assert "the event kind 'ENTER' is 'enter' in another case" in err, err
    words = [
        {"request cs": "Asking for CS", "enter cs": "Got CS", "exit cs": "Leaving CS"}.get(line, line)
        for line in outlog("govector-ra-broken.log")
    ]
    code, out, err = verify(capsys, written(tmp_path / "words.log", words))
    assert code == 3 and "[no-entries]" in out, out + err
    code, out, err = verify(capsys, written(tmp_path / "words.log", words), "--expect-entries", "0")
    assert code == 0, out + err  # nobody was to enter: nothing is missing


def child(*args: str, stdout=subprocess.PIPE, limit: int | None = None) -> subprocess.CompletedProcess:
    """``python -m mutexlab ARGS`` in a child (with an address-space limit of ``limit`` bytes)."""

    def limited() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "mutexlab", *args],
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
        preexec_fn=limited if limit else None,
        check=False,
    )


@pytest.mark.slow  # children of their own (a real pipe, a memory limit): seconds each
def test_a_verdict_piped_into_a_reader_that_went_away_keeps_its_exit_code(tmp_path):
    # `mutexlab verify LOG | head -1`: a write to the closed pipe raised BrokenPipeError, which
    # main() turned into exit 0 — a violation reported as SAFE to `set -o pipefail`.
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    try:
        done = child("verify", str(OUTLOGS / "govector-ra-broken.log"), stdout=write)
        assert done.returncode == 1, done.stderr
        done = child("verify", str(OUTLOGS / "govector-ra.log"), stdout=write)
        assert done.returncode == 0, done.stderr
        done = child("simulate", "mutex", "-a", "ricart-agrawala", "-N", "3", "-r", "2", stdout=write)
        assert done.returncode == 141, done.stderr  # no verdict delivered: never 0
        assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    finally:
        os.close(write)


@pytest.mark.slow  # children of their own (a real pipe, a memory limit): seconds each
def test_a_clock_of_500000_hosts_is_refused_before_it_is_read(tmp_path):
    # One GoVector record whose clock names 500,000 hosts (5.9 MB, within the line limit): parsed
    # whole, then one claim per host, it peaked at 689-781 MB before exit 2; under a 300 MB
    # address space it was a MemoryError (exit 4). Now counted before it is parsed: exit 2.
    log = tmp_path / "wide.log"
    with log.open("w") as out:
        out.write('h0 {"h0":1')
        out.writelines(f',"h{i}":1' for i in range(1, 500_000))
        out.write("}\nenter cs\n")
    done = child("verify", str(log), limit=300 << 20)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        f"mutexlab: error: {log}:1: the clock has more than 100,000 entries "
        "(limits.MAX_CLOCK_ENTRIES): refused before it is read"
    ), done.stderr


def test_text_after_a_record_on_its_line_is_refused_not_dropped(tmp_path, capsys):
    # A regex whose description stops at two words read `enter pins 2` as `enter pins`: one unit
    # each, and two holders of 2 of 3 pins at once were SAFE, exit 0, before the fix.
    records = [("a", 1, "enter"), ("b", 1, "enter"), ("a", 2, "exit"), ("b", 2, "exit")]
    log = written(tmp_path / "pins.log", [f'{h} {{"{h}":{n}}}\n{k} pins 2' for h, n, k in records])
    code, out, err = verify(capsys, log, "--capacity", "pins=3")
    assert code == 1 and "held by a (2 units, line 1), b (2 units, line 3)" in out, out + err
    code, out, err = verify(
        capsys, log, "--capacity", "pins=3", "--regex", r"(?<host>\S*) (?<clock>{.*})\n(?<event>\S+ \S+)"
    )
    assert code == 2, out + err
    assert err.strip() == (
        f"mutexlab: error: {log}:2: '2' after the record is not matched by the regex "
        r"(?<host>\S*) (?<clock>{.*})\n(?<event>\S+ \S+): the rest of a record's line is part of it "
        "(give --regex that matches it)"
    ), err


def test_a_lamport_clock_written_as_a_vector_clock_is_refused_with_what_to_write(tmp_path, capsys):
    # The MPI lock server's Lamport clocks as GoVector records (`rank-0 {"rank-0":3}`): refused,
    # and the error said only that the entry skips, leaving a Lamport user nowhere to go.
    records = [json.loads(line) for line in outlog("mpi-lock.log")]
    lines = [
        f'{e["pid"]} {{"{e["pid"]}":{e["lamport"]}}}\n{e["event"]} {e.get("resource", "")}' for e in records
    ]
    log = written(tmp_path / "lamport.log", lines)
    code, _, err = verify(capsys, log)
    assert code == 2, err
    assert err.startswith(
        f"mutexlab: error: {log}:1: the vector clocks contradict each other: rank-0's own entry skips"
    )
    assert "a Lamport clock is no vector clock: write clock-free JSON Lines instead" in err, err
