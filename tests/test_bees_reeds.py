"""A reed the run does not have is a violation: with T = 3 reeds, a bee that enters, fills and
leaves ``reed:4`` broke the problem, whatever else its trace shows (it used to read SAFE)."""

from __future__ import annotations

import json

from mutexlab.cli import main


def _trace(tmp_path, capsys) -> list[dict]:
    path = tmp_path / "bees.jsonl"
    assert (
        main(["simulate", "bees", "--bees", "10", "--flowers", "3", "--reeds", "3", "--trace", str(path)])
        == 0
    )
    capsys.readouterr()
    return [json.loads(line) for line in path.read_text().splitlines()]


def _verify(tmp_path, capsys, events: list[dict]) -> tuple[int, str]:
    path = tmp_path / "moved.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    code = main(["verify", str(path)])
    return code, capsys.readouterr().out


def test_eggs_in_a_reed_beyond_T_are_a_violation(tmp_path, capsys):
    events = _trace(tmp_path, capsys)
    assert _verify(tmp_path, capsys, events)[0] == 0  # the run as simulated: SAFE
    # the bee that held reed:3 first does everything there in reed:4 instead
    bee = next(e["pid"] for e in events if e["event"] == "enter" and e.get("resource") == "reed:3")
    for e in events:
        if e["pid"] == bee and e.get("resource") == "reed:3":
            e["resource"] = "reed:4"
        if e["pid"] == bee and e["event"] == "egg" and e.get("reed") == 3:
            e["reed"] = 4
    code, out = _verify(tmp_path, capsys, events)
    assert code == 1, out
    assert "[reed-unknown]" in out and f"{bee} entered reed:4, but the run has T=3 reeds" in out
    assert f"{bee} laid an egg in reed:4, but the run has T=3 reeds" in out
