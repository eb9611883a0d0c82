"""A replay whose schedule ends with nobody waiting but steps still possible — a message held,
whose delivery was never played — never says SAFE of it: on another program (a fix) the run goes
on past the schedule's last step, in the default order, to its end, and that whole run is judged;
on the program it was found on (where the recorded finding did not show) it is INCOMPLETE
(exit 3), naming the steps. Both said SAFE, exit 0, of a run whose last deliveries never came."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mutexlab.director.scenario import program_files

RA = Path(__file__).resolve().parents[1] / "examples" / "nodes" / "ricart_agrawala.py"

# Ricart–Agrawala that also tells every peer BYE when it leaves (a fix one might write): a BYE is
# read and ignored, so the run's requests are all served before the BYEs are delivered.
BYE = """            out({"type": "exit", "resource": "cs"})
            for peer in self.peers:
                out({"type": "send", "to": peer, "body": {"type": "BYE", "ts": 0}})"""


def _fix(tmp_path: Path) -> Path:
    text = RA.read_text()
    exit_line = '            out({"type": "exit", "resource": "cs"})'
    assert text.count(exit_line) == 1
    text = text.replace(exit_line, BYE)
    assert 'if body["type"] == "REQUEST":' in text
    fixed = tmp_path / "ra_bye.py"
    fixed.write_text(text)
    return fixed


def _scenario(tmp_path: Path, steps: list[dict], program: list[str] | None = None) -> Path:
    scenario = {
        "kind": "mutexlab-program-scenario",
        "problem": "mutex",
        "nodes": 2,
        "requests": 1,
        "options": {},
        "seed": 0,
        "faults": {"reorder": False, "duplicate": 0, "crash": 0},
        "program": program or ["found-on-another-program"],
        **({"files": program_files(program)} if program else {}),
        "finding": {"rule": "violation", "message": "the audit: VIOLATION (1)"},
        "steps": steps,
    }
    path = tmp_path / "ce.json"
    path.write_text(json.dumps(scenario))
    return path


# node 1 asks and is served, leaves (its BYE, node-1#2, is sent); node 2 asks, node 1 replies
# (node-1#3, behind the BYE on their link), node 2 enters and leaves: its BYE, node-2#3, is still
# held at the end, and node 1's too when its delivery is left out.
SERVED = [
    {"do": "request", "node": 1},
    {"do": "deliver", "node": 2, "id": "node-1#1"},
    {"do": "deliver", "node": 1, "id": "node-2#1"},
    {"do": "release", "node": 1},
    {"do": "request", "node": 2},
    {"do": "deliver", "node": 1, "id": "node-2#2"},
    {"do": "deliver", "node": 2, "id": "node-1#2"},
    {"do": "deliver", "node": 2, "id": "node-1#3"},
    {"do": "release", "node": 2},
]
LAST_BYE = [{"do": "deliver", "node": 1, "id": "node-2#3"}]


def test_a_fix_replayed_goes_on_to_the_end_of_its_run_and_is_judged_whole(cli, tmp_path):
    node = f"{sys.executable} {_fix(tmp_path)}"
    ran = cli("replay", _scenario(tmp_path, SERVED), "--node", node)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "9 steps of 9 played (and 1 step more, in the default order, to the run's end)" in ran.stdout
    assert ": SAFE" in ran.stdout
    as_json = json.loads(cli("replay", _scenario(tmp_path, SERVED), "--node", node, "--json").stdout)
    assert as_json["onward"] == 1 and as_json["steps"] == 10 and as_json["steps_left"] == []


def test_on_the_program_it_was_found_on_a_schedule_ending_with_messages_held_is_incomplete(cli, tmp_path):
    argv = [sys.executable, str(_fix(tmp_path))]
    ran = cli("replay", _scenario(tmp_path, SERVED, argv), "--node", " ".join(argv))
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert "9 steps of 9 played" in ran.stdout and "more, in the default order" not in ran.stdout
    assert "INCOMPLETE — the schedule ended before the run did: nobody waits, but 1 step" in ran.stdout
    assert "(deliver node-2#3→1) is still possible" in ran.stdout
    assert "SAFE" not in ran.stdout.split("\n")[1]
    as_json = json.loads(
        cli("replay", _scenario(tmp_path, SERVED, argv), "--node", " ".join(argv), "--json").stdout
    )
    assert as_json["steps_left"] == ["deliver node-2#3→1"]
    assert as_json["unfinished"] == []


def test_the_same_replay_played_to_rest_is_safe(cli, tmp_path):
    node = f"{sys.executable} {_fix(tmp_path)}"
    ran = cli("replay", _scenario(tmp_path, SERVED + LAST_BYE), "--node", node)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "10 steps of 10 played" in ran.stdout and "more, in the default order" not in ran.stdout
    assert ": SAFE" in ran.stdout
