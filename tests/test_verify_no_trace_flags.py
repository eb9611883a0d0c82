"""A file `verify --format auto` calls a mutexlab trace only because it is no other format —
empty, not UTF-8, broken JSON, no JSON object — is named for what it is under a flag for foreign
logs (`--capacity`, `--expect-entries`), exit 2 naming the line, as without the flag; before, it
was refused for the flag: "a mutexlab trace's run header gives the capacities", of a log with no
header at all (an empty log from a program that crashed before writing, a Latin-1 host name)."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    ("content", "named"),
    [
        (b"", "empty.txt: the trace is empty (no events)"),
        (b"\n\n", "empty.txt: the trace is empty (no events)"),
        (b'{"event":"enter","pid":"a","resource":"cs"\n', "empty.txt:1: not JSON"),
        (b"h\xf6st {}\n", "empty.txt:1: not UTF-8 text"),
        (b"[1, 2]\n", "empty.txt:1: an event must be a JSON object, not list"),
    ],
)
@pytest.mark.parametrize("flag", [("--capacity", "cs=2"), ("--expect-entries", "1")])
def test_no_trace_is_named_for_what_it_is_under_a_foreign_flag(cli, tmp_path, content, named, flag):
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    ran = cli("verify", str(path), *flag)
    # before: "a mutexlab trace's run header gives the capacities", as if it were a trace
    assert ran.returncode == 2 and named in ran.stderr, ran.stderr
    assert "run header" not in ran.stderr
