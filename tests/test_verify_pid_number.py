"""A process named by a number (`"pid": 1`, as a C or Java program writes its rank) or an event
kind that is no string is refused naming the field and its value, with the string to write:
before, every such line said only "'event' and 'pid' must be strings"."""

from __future__ import annotations

import json

import pytest


@pytest.mark.parametrize(
    ("event", "said"),
    [
        ({"event": "enter", "pid": 1, "resource": "cs"}, "'pid' must be a string, got 1 (write \"1\")"),
        ({"event": "enter", "pid": 2.5, "resource": "cs"}, "'pid' must be a string, got 2.5"),
        ({"event": None, "pid": "a"}, "'event' must be a string, got null"),
    ],
)
@pytest.mark.parametrize("clocks", [False, True], ids=["clock-free", "trace"])
def test_a_name_that_is_no_string_is_named(cli, tmp_path, event, said, clocks):
    lines = [{"event": "enter", "pid": "a", "resource": "cs"}, event]
    if clocks:
        header = {"event": "run", "pid": "run", "processes": {"1": "a"}, "capacities": {"cs": 1}}
        lines = [header, *({**e, "vc": {"a": 1}} for e in lines)]
    path = tmp_path / "ranks.txt"
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    ran = cli("verify", str(path))
    assert ran.returncode == 2 and f"ranks.txt:{3 if clocks else 2}: {said}" in ran.stderr, ran.stderr
