"""``mutexlab verify`` on logs other programs write, and hostile ones: each is judged as its
happened-before says, or refused (exit 2) with one line naming the file, the line and what is
wrong — never a traceback (exit 4), never a verdict the log does not support."""

from __future__ import annotations

import json
from pathlib import Path

from foreign_logs import GOVECTOR as REGEX
from foreign_logs import verify

GOVECTOR = f"{REGEX}\n\n"  # a log's first lines: its regex, then a blank delimiter


def test_deep_json_in_a_description_is_refused_naming_the_line(tmp_path, capsys):
    # `enter cs 1 {JSON}` whose JSON nests 100,000 arrays: json.loads recursed past the limit and
    # the RecursionError escaped as an internal error (exit 4) before the fix.
    deep = "[" * 100_000 + "]" * 100_000
    log = tmp_path / "deep.log"
    log.write_text(GOVECTOR + 'a {"a":1}\nenter cs 1 {"x":' + deep + "}\n")
    code, _, err = verify(capsys, log)
    assert code == 2
    assert (
        err.startswith(f"mutexlab: error: {log}:4: ") and "are JSON past a limit (arrays and objects" in err
    ), err
    assert len(err.strip().splitlines()) == 1


def test_bees_header_without_reeds_is_refused_not_a_violation(tmp_path, capsys):
    # A bees run header that states no T: the rules took T=1, so a bee on reed:2 was a
    # `reed-unknown` VIOLATION of a rule the header never stated (exit 1 before the fix).
    header = {"event": "run", "pid": "run", "problem": "bees", "processes": {"1": "bee-1", "2": "bee-2"},
              "capacities": {"reed:*": 1, "flower": 1}, "params": {"bees": 2}}  # fmt: skip
    events = []
    for i, pid in ((1, "bee-1"), (2, "bee-2")):
        for n, kind in enumerate(("request", "enter", "exit"), 1):
            events.append({"event": kind, "pid": pid, "vc": {pid: n}, "resource": f"reed:{i}"})
    trace = tmp_path / "bees.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    code, _, err = verify(capsys, trace)
    assert code == 2, err
    assert "line 1" in err and "reeds" in err, err
    header["params"]["reeds"] = 2
    trace.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    code, out, _ = verify(capsys, trace)
    assert code != 1 and "reed-unknown" not in out, out


def test_philosophers_header_without_their_number_is_refused_not_a_violation(tmp_path, capsys):
    # A philosophers run header without params.philosophers: every meal was an
    # `eats-without-forks` VIOLATION ("the run's params name no number of philosophers"), a
    # finding about the header, not the run (exit 1 before the fix); the error now names the file.
    one, two = "philosopher-1", "philosopher-2"
    header = {"event": "run", "pid": "run", "problem": "philosophers", "processes": {"1": one, "2": two},
              "capacities": {"fork:*": 1, "meal": 2}, "params": {"meals": 1}}  # fmt: skip
    meal = [("request", "meal"), ("enter", "fork:1"), ("enter", "fork:2"), ("enter", "meal")]
    meal += [("exit", "meal"), ("exit", "fork:1"), ("exit", "fork:2")]
    events = [{"event": k, "pid": one, "vc": {one: n}, "resource": r} for n, (k, r) in enumerate(meal, 1)]
    events.append({"event": "send", "pid": one, "vc": {one: 8}, "type": "FORKS", "to": two, "id": "f"})
    events.append(
        {"event": "recv", "pid": two, "vc": {one: 8, two: 1}, "type": "FORKS", "from": one, "id": "f"}
    )
    events += [
        {"event": k, "pid": two, "vc": {one: 8, two: n}, "resource": r} for n, (k, r) in enumerate(meal, 2)
    ]
    trace = tmp_path / "phil.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    code, out, err = verify(capsys, trace)
    assert code == 2, out + err
    assert err.startswith(f"mutexlab: error: {trace}: line 1: ") and "philosophers" in err, err
    header["params"]["philosophers"] = 2
    trace.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    code, out, err = verify(capsys, trace)
    assert code == 0, out + err


def test_a_log_regex_that_does_not_compile_or_lacks_a_group_names_its_line(tmp_path, capsys):
    # The log's own first line: an unbalanced regex was refused without the file or line; one
    # lacking `clock` was not taken for a regex at all, and line 1 was misread as a record of
    # GoVector's regex (exit 2 either way, but naming the wrong thing) before the fix.
    cases = {
        "(?<host>\\S* (?<clock>{.*})\\n(?<event>.*)": "is not a regular expression",
        "(?<host>\\S*) (?<event>.*)": "lacks the named group(s) clock",
    }
    for regex, problem in cases.items():
        log = tmp_path / "own.log"
        log.write_text(regex + '\n\na {"a":1}\nenter cs\n')
        code, _, err = verify(capsys, log)
        assert (
            code == 2 and err.startswith(f"mutexlab: error: {log}:1: the log's regex ") and problem in err
        ), err
    log.write_text(GOVECTOR + 'a {"a":1}\nenter cs\n')
    code, _, err = verify(capsys, log, "--regex", "(")
    assert code == 2 and err.startswith("mutexlab: error: --regex '(' is not a regular expression"), err


def test_units_of_thousands_of_digits_name_the_description(tmp_path, capsys):
    # Python refuses to convert more than 4,300 digits: the error was its own advice to call
    # sys.set_int_max_str_digits(), not what in the log was wrong.
    log = tmp_path / "digits.log"
    log.write_text(GOVECTOR + 'a {"a":1}\nenter cs ' + "9" * 5000 + "\n")
    code, _, err = verify(capsys, log)
    assert (
        code == 2 and err.startswith(f"mutexlab: error: {log}:4: 'enter cs 999") and "5000 digits" in err
    ), err


def test_a_log_clock_that_lacks_its_host_names_the_clock_its_line_and_the_host(tmp_path, capsys):
    # The error spoke of mutexlab's field 'vc', which a ShiViz log has not, cited the record's first
    # line rather than the clock's (line 4 here, the regex putting the event first), and named the
    # host unquoted: GoVector's regex found host "one" in "node one {...}", read "lacks one's own
    # entry"; a record now starts at its line's start, so the text before it is named instead.
    log = tmp_path / "first.log"
    log.write_text('(?<event>.*)\\n(?<host>\\S+) (?<clock>{.*})\n\nenter cs\na {"b":1}\n')
    code, _, err = verify(capsys, log)
    assert code == 2, err
    assert err.startswith(f"mutexlab: error: {log}:4: the clock '{{\"b\":1}}' has no entry"), err
    assert "'vc'" not in err and "host 'a'" in err, err
    log.write_text(GOVECTOR + 'node one {"node one":1}\nenter cs\n')
    code, _, err = verify(capsys, log)
    assert code == 2 and f"{log}:3: 'node' before the record" in err and "a host name with a space" in err, (
        err
    )


def test_a_header_that_states_no_requests_says_the_workload_was_not_checked(tmp_path, capsys):
    # A kmutex header without params.requests: a trace cut while every node was idle read SAFE and
    # said nothing of the workload, which --expect-entries cannot state for a trace with a header.
    header = {"event": "run", "pid": "run", "problem": "kmutex", "processes": {"1": "n1", "2": "n2"},
              "capacities": {"cs": 2}, "params": {"nodes": 2, "k": 2}}  # fmt: skip
    events = [
        {"event": kind, "pid": pid, "vc": {pid: n}, "resource": "cs"}
        for pid in ("n1", "n2")
        for n, kind in enumerate(("request", "enter", "exit"), 1)
    ]
    trace = tmp_path / "km.jsonl"
    trace.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    code, out, _ = verify(capsys, trace, "--json")
    assert code == 0 and json.loads(out)["not_checked"][0].startswith("the workload"), out
    header["params"]["requests"] = 1
    trace.write_text("".join(json.dumps(e) + "\n" for e in [header, *events]))
    code, out, _ = verify(capsys, trace, "--json")
    assert code == 0 and json.loads(out)["not_checked"] == [], out


def test_a_clock_free_copy_needs_a_header_declaring_duplicates(tmp_path, capsys):
    # What docs/verify-any-log.md now says (it read as if "copy": true alone made a second
    # delivery legitimate): without the header's declaration the copy is a message nobody sent.
    lines = [
        {"event": "send", "pid": "a", "type": "T", "to": "b", "id": "1"},
        {"event": "recv", "pid": "b", "type": "T", "from": "a", "id": "1"},
        {"event": "recv", "pid": "b", "type": "T", "from": "a", "id": "1", "copy": True},
        {"event": "enter", "pid": "b", "resource": "cs"},
        {"event": "exit", "pid": "b", "resource": "cs"},
    ]
    log = tmp_path / "copy.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in lines))
    code, out, _ = verify(capsys, log)
    assert code == 1 and "[recv-without-send]" in out, out
    header = {"event": "run", "pid": "run", "format": "jsonl", "duplicates": True, "capacities": {"cs": 1}}
    log.write_text("".join(json.dumps(e) + "\n" for e in [header, *lines]))
    code, out, _ = verify(capsys, log)
    assert code == 0, out


def test_a_description_whose_fields_contradict_its_words_is_refused(tmp_path, capsys):
    # `exit cs {"event": "enter"}`: the JSON's event overrode the words, so the exit was read as a
    # second enter, a `reentry` VIOLATION of a log whose words are right (exit 1 before the fix).
    log = tmp_path / "words.log"
    records = [("request cs", 1), ("enter cs", 2), ('exit cs {"event": "enter"}', 3)]
    log.write_text(GOVECTOR + "".join(f'a {{"a":{n}}}\n{text}\n' for text, n in records))
    code, out, err = verify(capsys, log)
    assert code == 2, out
    assert err.startswith(f"mutexlab: error: {log}:8: ") and "its fields say event 'enter'" in err, err
    # a field of the description is named on the description's line, not on the clock's
    log.write_text(GOVECTOR + 'a {"a":1}\nenter cs 0\n')
    code, _, err = verify(capsys, log, "--capacity", "cs=5")
    assert code == 2 and err.startswith(f"mutexlab: error: {log}:4: "), err


def test_sigterm_while_a_piped_log_is_copied_leaves_no_copy(tmp_path):
    # A log from a pipe is copied to a temporary file; SIGTERM's default action ended the process
    # and left `mutexlab-*.log` behind in TMPDIR (seen before the fix). It now exits 143; the copy,
    # unlinked as soon as it is made, is gone with the process.
    import os
    import signal
    import subprocess
    import sys
    import time

    env = {**os.environ, "TMPDIR": str(tmp_path)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutexlab", "verify", "/dev/stdin"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    try:
        assert proc.stdin is not None
        proc.stdin.write((GOVECTOR + 'a {"a":1}\nrequest cs\n').encode())
        proc.stdin.flush()  # the pipe stays open: verify waits, copying
        deadline = time.monotonic() + 20

        def copying() -> bool:  # the copy: a file without a name, held open by verify
            fds = Path(f"/proc/{proc.pid}/fd")
            return any(str(tmp_path / "mutexlab-") in link(fd) for fd in fds.iterdir())

        def link(fd: Path) -> str:  # an fd closed between listing and reading is no copy
            try:
                return os.readlink(fd)
            except FileNotFoundError:
                return ""

        while not copying() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert copying(), "the copy was never made"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=20) == 143
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert list(tmp_path.glob("mutexlab-*")) == []


def test_a_pipes_copy_puts_back_a_sigterm_handler_not_set_from_python(tmp_path, monkeypatch):
    """signal.signal returns None for a handler not set from Python: the copy's SIGTERM handler is
    still taken out afterwards (the default put back), never left installed."""
    import os
    import signal
    import threading

    from mutexlab.audit import foreign

    calls: list[object] = []
    real = signal.signal

    def recording(signum, handler):
        calls.append(handler)
        previous = real(signum, handler)
        return None if len(calls) == 1 else previous  # as for a handler set outside Python

    monkeypatch.setattr(foreign.signal, "signal", recording)
    fifo = tmp_path / "log.fifo"
    os.mkfifo(fifo)
    writer = threading.Thread(target=lambda: fifo.write_bytes(b'{"event":"enter"}\n'))
    writer.start()
    try:
        with foreign.spooled(fifo) as copy:
            assert copy != fifo
    finally:
        writer.join(5)
        real(signal.SIGTERM, signal.SIG_DFL)
    assert calls[0] is foreign._terminated and calls[-1] is signal.SIG_DFL, calls  # noqa: SLF001 - the handler it set
