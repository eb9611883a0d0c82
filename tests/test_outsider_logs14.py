"""``mutexlab verify`` on logs other programs write (tests/outlogs/o14-*, each beside the program
that wrote it): a token ring logging as Go's ``log/slog`` JSON handler does, a lock server logging
as pino does, and a waiter's philosophers logging as Rust's ``tracing`` JSON layout does, nested
and flattened. Each correct log SAFE, each broken one a finding naming the lines (or, for a line
a logger wrote twice or nested, one error saying what to change); never a traceback.

slog, pino and zap write a string ``msg`` on every line, sends included: a send's ``msg`` is the
message's body only when it is a JSON object (or null); a string is the logger's text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from outsider_edits import said

OUTLOGS = Path(__file__).resolve().parent / "outlogs"


def test_a_slog_ring_with_msg_on_every_send_is_safe_and_an_early_entry_is_found(cli):
    """Before: refused at line 4, `send event's 'msg' must be a JSON object or null, got "token to
    n2"`: no slog log could be read without renaming slog's message key."""
    done = cli("verify", OUTLOGS / "o14-slog-ring.log", "--expect-entries", "2")
    assert done.returncode == 0 and done.stdout.startswith("JSON Lines log: SAFE"), said(done)
    assert "events: enter 6, exit 6, recv 5, request 6, send 5" in done.stdout, said(done)
    done = cli("verify", OUTLOGS / "o14-slog-ring-early.log")
    assert done.returncode == 1 and "JSON Lines log: VIOLATION (1)" in done.stdout, said(done)
    assert "cs (capacity 1) held by n2 (1 unit, line 2), n1 (1 unit, line 4) at once" in done.stdout, said(
        done
    )


def test_a_pino_lock_server_is_safe_greedy_is_found_and_a_lost_tail_is_incomplete(cli):
    done = cli("verify", OUTLOGS / "o14-pino-lock.log")
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    assert "events: enter 6, exit 6, recv 18, request 6, send 18" in done.stdout, said(done)
    done = cli("verify", OUTLOGS / "o14-pino-lock-greedy.log")
    assert done.returncode == 1 and "JSON Lines log: VIOLATION (4)" in done.stdout, said(done)
    assert "held by client-2 (1 unit, line 10), client-1 (1 unit, line 29) at once" in done.stdout, said(done)
    # an async destination not flushed before process.exit(): the last grant's exit never written
    done = cli("verify", OUTLOGS / "o14-pino-lock-lost.log")
    assert done.returncode == 3 and "INCOMPLETE (1)" in done.stdout, said(done)
    assert "[request-unserved] client-3 asked for cs 2 times but entered 1 time" in done.stdout, said(done)


@pytest.mark.parametrize("fmt", [None, "jsonl"])
def test_pinos_own_pid_beside_a_childs_is_named_with_the_fix(cli, fmt):
    """pino's default base writes the OS process's number as `pid`; a child({pid: name}) writes it
    again. Before: with auto-detection `JSON past a limit (the key "pid" appears twice …)`, the
    line taken for a broken mutexlab trace; with --format jsonl `not JSON (…)`."""
    done = cli("verify", OUTLOGS / "o14-pino-lock-twice.log", *(["--format", fmt] if fmt else []))
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        'o14-pino-lock-twice.log:1: the key "pid" appears twice in one JSON object (which is the '
        "process's name cannot be told): pino writes its process's number as \"pid\" unless its base "
        "leaves it out, pino({ base: { hostname } }) with child({ pid: NAME })"
    ), said(done)
    assert "past a limit" not in done.stderr and "not JSON" not in done.stderr, said(done)


def test_a_string_msg_on_a_send_is_text_but_another_type_is_still_no_body(cli, tmp_path):
    """A send's body is a JSON object or null: a string is a logger's text, dropped; a number or
    a list is neither, and still refused naming the line."""
    lines = [
        {"level": 30, "pid": "a", "event": "send", "type": "T", "to": "b", "id": "1", "msg": "token to b"},
        {"level": 30, "pid": "b", "event": "recv", "type": "T", "from": "a", "id": "1", "msg": "got it"},
        {"level": 30, "pid": "b", "event": "request", "resource": "cs", "msg": "asks"},
        {"level": 30, "pid": "b", "event": "enter", "resource": "cs", "msg": "in"},
        {"level": 30, "pid": "b", "event": "exit", "resource": "cs", "msg": "out"},
    ]
    path = tmp_path / "zap.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    done = cli("verify", path)
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    lines[0]["msg"] = 7
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert "zap.log:1: send event's 'msg' must be a JSON object or null, got 7" in done.stderr, said(done)


def test_tracings_nested_json_names_where_the_fields_are_and_lifted_is_safe(cli, tmp_path):
    """tracing_subscriber's default JSON: the event's fields in `fields`, the philosopher's name in
    its `span`. Before: `event lacks event, pid: not mutexlab's event shape`, nothing said of where
    they were. Lifted as the error says (`jq -c '. + .span + .fields'`), the log is SAFE."""
    nested = OUTLOGS / "o14-tracing-waiter.log"
    done = cli("verify", nested)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        "o14-tracing-waiter.log:1: event lacks event, pid at the top level ('event' is in 'fields', 'pid' is "
        "in 'span'): verify reads an event's fields at the top level of its line; lift them, jq -c "
        "'. + .span + .fields' FILE (Rust tracing: fmt().json().flatten_event(true), the process's name a "
        "field 'pid')"
    ), said(done)
    lifted = tmp_path / "lifted.log"
    rows = [json.loads(line) for line in nested.read_text().splitlines()]
    lifted.write_text("".join(json.dumps({**r, **r.get("span", {}), **r["fields"]}) + "\n" for r in rows))
    done = cli("verify", lifted)
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    assert "events: enter 20, exit 20, recv 30, request 20, send 30" in done.stdout, said(done)


def test_tracings_flattened_json_is_safe_and_a_greedy_waiter_is_found(cli):
    done = cli("verify", OUTLOGS / "o14-tracing-waiter-flat.log")
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
    done = cli("verify", OUTLOGS / "o14-tracing-waiter-greedy.log")
    assert done.returncode == 1 and "JSON Lines log: VIOLATION (19)" in done.stdout, said(done)
    assert "fork:1 (capacity 1) held by phil-1 (1 unit, line 23), phil-5 (1 unit, line 25) at once" in (
        done.stdout
    ), said(done)


def test_fields_nested_elsewhere_get_no_tracing_advice(cli, tmp_path):
    """logback's JSON with the event in its MDC: where, and the jq, but no word of Rust."""
    path = tmp_path / "logback.json"
    path.write_text(
        json.dumps({"level": "INFO", "message": "in", "mdc": {"event": "enter", "pid": "a"}}) + "\n"
    )
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert (
        "('event' is in 'mdc', 'pid' is in 'mdc')" in done.stderr and "jq -c '. + .mdc' FILE" in done.stderr
    )
    assert "tracing" not in done.stderr, said(done)


SYSLOG = r"<\d+>1 \S+ (?<host>\S+) \S+ \S+ \S+ - (?<clock>{[^}]*}) (?<event>.*)"


def test_rfc5424_syslog_with_the_clock_in_msg_is_read_by_regex_and_judged(cli):
    done = cli("verify", "--regex", SYSLOG, OUTLOGS / "o14-syslog-ring.log")
    assert done.returncode == 0 and "ShiViz log: SAFE" in done.stdout, said(done)
    assert "events: enter 6, exit 6, other 10, request 6" in done.stdout, said(done)
    done = cli("verify", "--regex", SYSLOG, OUTLOGS / "o14-syslog-ring-early.log")
    assert done.returncode == 1 and "held by n1.lab (1 unit, line 2), n2.lab (1 unit, line 6)" in done.stdout
    # a datagram lost over UDP: the host's own clock entry skips it, and the log is not judged
    done = cli("verify", "--regex", SYSLOG, OUTLOGS / "o14-syslog-ring-udp.log")
    assert done.returncode == 2, said(done)
    assert (
        "o14-syslog-ring-udp.log:6: the vector clocks contradict each other: n2.lab's own entry skips "
        in (done.stderr)
        and "is a record missing" in done.stderr
    ), said(done)


def test_a_clock_in_rfc5424_structured_data_says_to_write_it_as_json(cli):
    """`[vc@32473 n1.lab="1"]` as the clock group. Before: `is not JSON (Expecting value: line 1
    column 2 (char 1))` and no more."""
    sd = SYSLOG.replace("- (?<clock>{[^}]*})", r"(?<clock>\[vc@\d+[^\]]*\])")
    done = cli("verify", "--regex", sd, OUTLOGS / "o14-syslog-ring-sd.log")
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        "o14-syslog-ring-sd.log:1: the clock '[vc@32473 n1.lab=\"1\"]' is not JSON (Expecting value: line 1 "
        "column 2 (char 1)) — RFC 5424 structured data? a clock is a JSON object of host names to counts: "
        'write it so in the message ({"a":3,"b":1} enter cs) and match it with the clock group of --regex'
    ), said(done)
    done = cli("verify", "--regex", SYSLOG.replace("{[^}]*}", r"\S+"), OUTLOGS / "o14-syslog-ring.log")
    assert done.returncode == 0, said(done)  # a JSON clock is not taken for structured data


def test_a_string_msg_holding_a_json_object_is_a_body_refused_not_dropped(cli, tmp_path):
    """A send's `msg` that is `json.dumps(body)` logged as a string is the message's body, not a
    logger's text: set aside, an audit that reads bodies (the elves' rounds) would judge the log
    without them. Refused naming the line; a logger's text beginning with a brace stays text."""
    lines = [
        {"pid": "a", "event": "send", "type": "T", "to": "b", "id": "1", "msg": '{"round": 1, "ts": 3}'},
        {"pid": "b", "event": "recv", "type": "T", "from": "a", "id": "1"},
        {"pid": "b", "event": "request", "resource": "cs"},
        {"pid": "b", "event": "enter", "resource": "cs"},
        {"pid": "b", "event": "exit", "resource": "cs"},
    ]
    path = tmp_path / "bodies.log"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    done = cli("verify", path)
    assert done.returncode == 2, said(done)
    assert done.stderr.strip().endswith(
        "bodies.log:1: send event's 'msg' is a JSON object written as a string "
        '(\'{"round": 1, "ts": 3}\'): the message\'s body; write the object itself, not its text'
    ), said(done)
    lines[0]["msg"] = "{token} to b"  # a brace, but no JSON: a logger's text
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    done = cli("verify", path)
    assert done.returncode == 0 and "JSON Lines log: SAFE" in done.stdout, said(done)
