"""A replayed ``duplicate`` step is the network's copy, not a message nobody sent.

``check --duplicate`` explores a link delivering a message twice, and its counterexample's
``duplicate`` step replays as a second ``recv`` of the same message id. The trace's header declares
``duplicates`` (the receive itself is marked ``"copy": true``, information only) and the integrity
audit pairs both receives with their one send: before, the replay of every such counterexample
added a ``recv-without-send`` violation ("a message nobody sent was received") that the run never
had. Without the header's declaration a second receive stays that violation, marked or not.
"""

from __future__ import annotations

import json
from pathlib import Path

MUTANT = str(Path(__file__).resolve().parent / "mutants" / "ra_duplicate_cancels.py")


def test_a_duplicate_step_replays_as_a_marked_copy_and_no_violation(cli, tmp_path):
    scenario, trace = tmp_path / "dup.json", tmp_path / "dup.jsonl"
    done = cli("check", MUTANT, "-N", "2", "--duplicate", "1", "--counterexample", scenario)
    assert done.returncode == 1, done
    assert any(step["op"] == "duplicate" for step in json.loads(scenario.read_text())["steps"])
    assert "replay reproduces it: yes" in done.stdout and "recv-without-send" not in done.stdout
    again = cli("replay", scenario, "--algorithm", MUTANT, "--trace", trace)
    assert again.returncode == 1, again  # the deadlock, not the copy
    assert "DEADLOCK: nothing can move" in again.stdout and "recv-without-send" not in again.stdout
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    copies = [e for e in events if e.get("copy")]
    assert len(copies) == 1 and copies[0]["event"] == "recv"
    assert sum(e["event"] == "recv" and e["id"] == copies[0]["id"] for e in events) == 2
    verified = cli("verify", "--algorithm", MUTANT, trace)
    assert "recv-without-send" not in verified.stdout, verified.stdout
    assert sum(e.get("duplicates") is True for e in events) == 1  # the header declares them
    # the same trace with the declaration taken away: a receive no send carries, its mark kept
    unmarked = tmp_path / "undeclared.jsonl"
    unmarked.write_text(
        "".join(json.dumps({k: v for k, v in e.items() if k != "duplicates"}) + "\n" for e in events)
    )
    forged = cli("verify", "--algorithm", MUTANT, unmarked)
    assert forged.returncode == 1 and "[recv-without-send]" in forged.stdout, forged.stdout


def test_a_copy_survives_the_clock_free_export(cli, tmp_path):
    """``export --format jsonl`` keeps the mark; the clock-free reader lets a copy take its send's
    clock without consuming the send (the original's), before or after the original receipt."""
    scenario, trace = tmp_path / "dup.json", tmp_path / "dup.jsonl"
    cli("check", MUTANT, "-N", "2", "--duplicate", "1", "--counterexample", scenario)
    cli("replay", scenario, "--algorithm", MUTANT, "--trace", trace)
    judged = cli("verify", "--algorithm", MUTANT, trace, "--json")
    expected = json.loads(judged.stdout)
    log = tmp_path / "dup.log.jsonl"
    assert cli("export", trace, "--format", "jsonl", "-o", log).returncode == 0
    events = [json.loads(line) for line in log.read_text().splitlines()]
    copy = next(e for e in events if e.get("copy"))
    original = next(e for e in events if e["event"] == "recv" and e["id"] == copy["id"] and e is not copy)
    # the copy after the original (as mutexlab test --duplicate delivers it), then before it
    for order in ("after", "before"):
        rest = [e for e in events if e is not copy]
        at = rest.index(original) + (1 if order == "after" else 0)
        rest.insert(at, copy)
        log.write_text("".join(json.dumps(e) + "\n" for e in rest))
        done = cli("verify", "--algorithm", MUTANT, "--format", "jsonl", log, "--json")
        assert done.returncode == judged.returncode == 3, (order, done)  # as the trace: never 2
        rules = sorted(v["rule"] for v in json.loads(done.stdout)["violations"])
        assert rules == sorted(v["rule"] for v in expected["violations"]), (order, rules)
        assert "recv-without-send" not in rules
