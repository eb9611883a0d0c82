"""A kind or description that reads as an audit keyword without being it — blanks around it
(`"enter "`), inflected (`entering`, `exited`) or joined to more (`enter_cs`) — makes a log
unreadable, exit 2 naming the line (docs/trace-format.md, docs/verify-any-log.md): read as an
event of no meaning, one host's holding went unaudited and two overlapping holders passed SAFE
beside another host's plain `enter`. Words that merely start with one (`entertain`, `exitcode`)
stay other events; and a file detect calls a trace only because it is no other format (empty,
not UTF-8, broken JSON) is named for what it is, not refused for a foreign flag."""

from __future__ import annotations

import json

import pytest

from mutexlab.trace import check_event


def clock_free(tmp_path, enter: str, exit_: str) -> str:
    """a holds cs under the look-alike kinds, b under the audit's own, never ordered."""
    events = [
        {"event": enter, "pid": "a", "resource": "cs"},
        {"event": "enter", "pid": "b", "resource": "cs"},
        {"event": exit_, "pid": "a", "resource": "cs"},
        {"event": "exit", "pid": "b", "resource": "cs"},
    ]
    path = tmp_path / "kinds.txt"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return str(path)


@pytest.mark.parametrize(
    ("enter", "exit_", "meant"),
    [
        ("enter ", "exit ", "enter"),
        ("\u00a0enter", "exit", "enter"),
        ("entering", "exiting", "enter"),
        ("entered", "exited", "enter"),
        ("enter_cs", "exit_cs", "enter"),
        ("Enters", "exits", "enter"),
    ],
)
def test_a_kind_that_reads_as_enter_is_refused_never_safe(cli, tmp_path, enter, exit_, meant):
    ran = cli("verify", clock_free(tmp_path, enter, exit_))
    assert ran.returncode == 2, ran.stdout + ran.stderr  # before: SAFE, exit 0
    assert f"kinds.txt:1: the event kind {enter!r} " in ran.stderr and f"{meant!r}" in ran.stderr, ran.stderr
    assert "SAFE" not in ran.stdout


def test_the_same_log_with_the_audits_kinds_is_the_violation(cli, tmp_path):
    ran = cli("verify", clock_free(tmp_path, "enter", "exit"))
    assert ran.returncode == 1 and "[capacity] cs (capacity 1) held by a" in ran.stdout, ran.stdout


def test_other_kinds_that_start_like_a_keyword_stay_unread_events():
    for kind in ("entertain", "exitcode", "requestor", "entry", "lock_acquired", "Exitus"):
        assert check_event({"event": kind, "pid": "a", "vc": {"a": 1}}) is None, kind
    assert "reads as 'request'" in str(check_event({"event": "requested", "pid": "a", "vc": {"a": 1}}))


def shiviz(tmp_path, words: str) -> str:
    path = tmp_path / "words.log"
    path.write_text(
        f'a {{"a":1}}\n{words} cs\na {{"a":2}}\nexit cs\nb {{"b":1}}\nenter cs\nb {{"b":2}}\nexit cs\n'
    )
    return str(path)


@pytest.mark.parametrize("words", ["entering", "Entered", "enter_cs"])
def test_a_shiviz_description_that_reads_as_enter_is_refused(cli, tmp_path, words):
    ran = cli("verify", shiviz(tmp_path, words))
    assert ran.returncode == 2, ran.stdout + ran.stderr  # before: SAFE, a's holding unread
    assert f"words.log:2: '{words} cs' starts like an audit event" in ran.stderr, ran.stderr


def test_a_shiviz_description_of_another_word_stays_an_other_event(cli, tmp_path):
    ran = cli("verify", shiviz(tmp_path, "entertain"))  # a's exit then has no enter: a violation
    assert ran.returncode == 1 and "[exit-without-enter] a left cs" in ran.stdout, ran.stdout + ran.stderr
