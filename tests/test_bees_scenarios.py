"""Scripted bee schedules (``replay_scenario``) and the ``mutexlab simulate bees`` command."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from mutexlab_broken.bees import GreedyBee
from mutexlab_broken.bees_variants import CountsStaleAcks, DeafToDeaths

from mutexlab.audit import verify_events
from mutexlab.cli import main
from mutexlab.protocols import bees
from mutexlab.sim import replay_scenario


def deliver(frm: int, to: int) -> dict:
    return {"op": "deliver", "from": frm, "to": to}


def step(op: str, pid: int) -> dict:
    return {"op": op, "pid": pid}


DRAIN = {"op": "drain"}

# Three bees, two flowers (a bee needs 2 − 1 = 1 ACKflower), two reeds of two cocoons, two eggs each.
# Bee 1 (reed 1) and bee 3 (reed 2) are on flowers together; bee 3 deferred bee 1's request, so its
# ACKflower for that request is sent only when bee 3 leaves — after bee 1 has left and asked again.
# Step 15 delivers that late ACKflower; the rest of the file plays the colony to its end.
LATE_ACK_FILE = Path(__file__).resolve().parent.parent / "examples" / "scenarios" / "bees-late-ackflower.json"
LATE_ACK_STEP = 15


def late_ack_scenario(steps: int | None = None) -> dict:
    scenario = json.loads(LATE_ACK_FILE.read_text())
    scenario["steps"] = scenario["steps"][:steps]
    return scenario


def test_a_late_ackflower_from_an_earlier_request_is_not_counted():
    result = replay_scenario(late_ack_scenario(LATE_ACK_STEP))
    bee1 = result.protocols[1]
    late = [
        e
        for e in result.events
        if e["event"] == "send" and e["type"] == "ACKflower" and e["pid"] == "bee-3" and e["to"] == "bee-1"
    ][-1]
    assert late["msg"]["req_ts"] < bee1.flower_request[0]  # it answers the older request
    assert late_ack_scenario(LATE_ACK_STEP)["steps"][-1] == {"op": "deliver", "from": 3, "to": 1}
    assert result.events[-1]["event"] == "recv" and result.events[-1]["id"] == late["id"]
    assert bee1.state == "WAIT_FLOWER" and bee1.flower_acks == set()
    assert bee1.waiting_for() == {"ACKflower": [2, 3]}


def test_the_late_ack_scenario_ends_properly_and_passes_the_audit():
    result = replay_scenario(late_ack_scenario())
    assert result.states == {"bee-1": "DEAD", "bee-2": "RETIRED", "bee-3": "DEAD"}
    assert result.in_flight == 0
    verdict = verify_events(result.events)
    assert verdict.ok, verdict.render()
    assert sum(e["event"] == "egg" for e in result.events) == 4


def test_the_late_ack_scenario_tells_a_bee_that_counts_stale_acks(monkeypatch):
    monkeypatch.setattr(bees, "Bee", CountsStaleAcks)
    result = replay_scenario(late_ack_scenario(LATE_ACK_STEP))
    assert result.protocols[1].state == "ON_FLOWER"  # entered on the stale ACK


def test_the_third_bee_takes_reed_one_only_after_the_first_leaves():
    """Decision 2: rank 2 of T = 2 gets reed 1 as its second bee, and waits for rank 0's RELEASEreed."""
    scenario = {
        "algorithm": "bees",
        "processes": 3,
        "options": {
            "flowers": 1,
            "reeds": 2,
            "eggs": 1,
            "cocoons": 2,
            "initial_clocks": {"1": 0, "2": 0, "3": 0},
        },
        "steps": [step("request", 1), step("request", 2), step("request", 3), DRAIN],
    }
    result = replay_scenario(scenario)
    assert result.states == {"bee-1": "ON_REED", "bee-2": "ON_REED", "bee-3": "WAIT_REED"}
    assert result.protocols[3].waiting_for() == {"RELEASEreed": [1]}
    scenario["steps"] += [step("request", 2), DRAIN, step("exit", 2), DRAIN]  # bee 2 leaves reed 2
    assert replay_scenario(scenario).states["bee-3"] == "WAIT_REED"
    scenario["steps"] += [step("request", 1), DRAIN, step("exit", 1), DRAIN]  # bee 1 leaves reed 1
    result = replay_scenario(scenario)
    assert result.states["bee-3"] == "ON_REED" and result.protocols[3].reed == 1
    enters = [
        (e["pid"], e["resource"])
        for e in result.events
        if e["event"] == "enter" and e["resource"] != "flower"
    ]
    assert enters == [("bee-1", "reed:1"), ("bee-2", "reed:2"), ("bee-3", "reed:1")]


def test_a_bee_asking_after_others_died_needs_nobody():
    """Decision 3: the dead are never waited for — the last bee asks nobody."""
    scenario = {
        "algorithm": "bees",
        "processes": 2,
        "options": {"flowers": 1, "reeds": 2, "eggs": 1, "cocoons": 1},
        "steps": [
            step("request", 1),
            DRAIN,
            step("request", 1),
            DRAIN,
            step("exit", 1),
            DRAIN,
            step("request", 2),
        ],
    }
    result = replay_scenario(scenario)
    assert result.states == {"bee-1": "DEAD", "bee-2": "ON_REED"}
    assert result.in_flight == 0
    assert result.events[-1]["event"] == "state" and result.events[-1]["state"] == "ON_REED"


# -- the command -----------------------------------------------------------------------------------
def test_simulate_bees_prints_a_summary(capsys, tmp_path):
    trace = tmp_path / "bees.jsonl"
    assert (
        main(
            [
                "simulate",
                "bees",
                "--bees",
                "7",
                "--flowers",
                "2",
                "--reeds",
                "2",
                "--seed",
                "4",
                "--trace",
                str(trace),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "eggs per reed: reed:1 15, reed:2 15 (total 30, expected 30)" in out
    assert "6 dead, 1 retired" in out
    assert "audit: SAFE" in out and f"trace written to {trace}" in out
    assert main(["verify", str(trace)]) == 0


def test_simulate_bees_json_is_one_object(capsys):
    assert main(["simulate", "bees", "-P", "5", "-K", "1", "-T", "4", "--seed", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["eggs_total"] == data["eggs_expected"] == 25
    assert data["deaths"] == 5 and data["retired"] == 0
    assert data["entries"] == {"flower": 25, "reed": 5}
    assert data["audit"]["safe"] is True and data["stalled"] == {}
    reed_msgs = sum(data["messages"].get(t, 0) for t in ("REQreed", "ACKreed", "RELEASEreed"))
    assert data["messages_per_reed_entry"] == round(reed_msgs / 5, 2)


def test_simulate_bees_is_deterministic(capsys):
    args = ["simulate", "bees", "--seed", "11", "--json"]
    main(args)
    first = capsys.readouterr().out
    main(args)
    assert capsys.readouterr().out == first


@pytest.mark.parametrize(
    "args, words",
    [
        (["--bees", "0"], "--bees/-P: must be at least 1, got 0"),
        (["--flowers", "-2"], "--flowers/-K: must be at least 1"),
        (["--reeds", "many"], "--reeds/-T: 'many' is not a whole number"),
        (["--seed", "1.5"], "--seed: '1.5' is not a whole number"),
    ],
)
def test_simulate_bees_refuses_bad_arguments(capsys, args, words):
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", "bees", *args])
    assert exit_.value.code == 2
    assert words in capsys.readouterr().err


def test_simulate_bees_refuses_cocoons_that_are_not_a_multiple_of_eggs(capsys):
    assert main(["simulate", "bees", "--eggs", "4", "--cocoons", "10"]) == 2
    assert "must be a multiple of eggs per bee" in capsys.readouterr().err


CONSOLE_SCRIPT = """
import sys, tomllib
module, _, name = tomllib.load(open(sys.argv[1], "rb"))["project"]["scripts"]["mutexlab"].partition(":")
main = getattr(__import__(module, fromlist=[name]), name)
sys.argv = ["mutexlab", *sys.argv[2:]]
sys.exit(main())  # what the installed `mutexlab` script does
"""


@pytest.mark.parametrize("how", ["python -m mutexlab", "console script"])
def test_the_installed_command_exits_2_on_bad_input(how):
    """The two real entry points, each in a fresh process (most CLI tests call ``main`` in this one):
    ``python -m mutexlab`` and the ``mutexlab`` script pyproject.toml declares."""
    argv = ["simulate", "bees", "--bees", "-3"]
    if how == "console script":
        pyproject = Path(__file__).resolve().parents[1] / "pyproject.toml"
        command = [sys.executable, "-c", CONSOLE_SCRIPT, str(pyproject), *argv]
    else:
        command = [sys.executable, "-m", "mutexlab", *argv]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "must be at least 1" in done.stderr, (done.returncode, done.stderr)


def test_simulate_bees_exits_1_when_the_audit_fails(monkeypatch, capsys):
    monkeypatch.setattr(bees, "Bee", GreedyBee)  # takes a flower with no permission at all
    assert main(["simulate", "bees", "-P", "6", "-K", "1", "-T", "3", "--seed", "1"]) == 1
    assert "audit: VIOLATION" in capsys.readouterr().out


def test_simulate_bees_exits_3_and_names_the_waiting_when_the_run_stalls(monkeypatch, capsys):
    monkeypatch.setattr(bees, "Bee", DeafToDeaths)
    assert main(["simulate", "bees", "-P", "4", "-K", "1", "-T", "2", "--seed", "0"]) == 3
    out = capsys.readouterr().out
    assert "STALLED — stalled:" in out and "audit: INCOMPLETE" in out
    assert re.search(r"bee-\d \(WAIT_\w+\) waits for reed: \w+ from bee-\d", out)
    assert "[left-waiting]" in out
