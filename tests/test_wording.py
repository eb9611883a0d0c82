"""First-contact wording: plurals and articles, empty message lists, scenario step numbers counted
from 1 both when a scenario is validated and when it is played, and a mistyped flag reported by
the subcommand it was given to (its usage, the flag named) — for every subcommand."""

from __future__ import annotations

import json

import pytest

from mutexlab.cli import main
from mutexlab.sim.scripted import ScenarioError, replay_scenario
from mutexlab.transport.monitor import Outcome, render
from mutexlab.words import article, count, ordinal, plural, waits


def test_counted_nouns_and_articles():
    assert [count(n, "elf") for n in (0, 1, 4)] == ["0 elves", "1 elf", "4 elves"]
    assert count(1, "bee") == "1 bee" and count(2, "mayor") == "2 mayors" and count(3, "node") == "3 nodes"
    assert (
        count(2, "process") == "2 processes"
        and count(1, "time") == "1 time"
        and count(2, "entry") == "2 entries"
    )
    assert [article(w) for w in ("elf", "bee", "mayor", "node", "owl")] == [
        "an elf",
        "a bee",
        "a mayor",
        "a node",
        "an owl",
    ]
    assert plural("sample") == "samples" and plural("handover") == "handovers"


def test_ordinals_read_as_english():
    shown = {n: ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 23, 101, 112)}
    assert shown == {
        1: "1st",
        2: "2nd",
        3: "3rd",
        4: "4th",
        11: "11th",
        12: "12th",
        13: "13th",
        21: "21st",
        22: "22nd",
        23: "23rd",
        101: "101st",
        112: "112th",
    }


def test_the_monitor_counts_elves_not_elfs():
    outcome = Outcome(
        run_id="r",
        algorithm="elves",
        processes=5,
        complete=True,
        states={"mayor": "MAYOR_DONE", **{f"elf-{i}": "ELF_DONE" for i in range(1, 5)}},
    )
    head = render(outcome).splitlines()[0]
    assert "1 mayor, 4 elves" in head and "elfs" not in head
    one = Outcome(run_id="r", algorithm="bees", processes=1, complete=True, states={"bee-1": "DEAD"})
    assert "run r: 1 bee," in render(one)


def test_a_lone_bee_or_elf_reads_right(capsys):
    assert main(["simulate", "bees", "--bees", "1"]) == 0
    out = capsys.readouterr().out
    assert "messages: none (total 0)" in out and "messages:  (" not in out
    assert main(["simulate", "elves", "--elves", "1", "--rounds", "1", "--contracts", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("hamster killers: 1 elf, 1 round × 1 contract (hamsters")
    assert main(["simulate", "mutex", "-a", "lamport", "-N", "1", "-M", "1"]) == 0
    out = capsys.readouterr().out
    assert "lamport: N=1, 1 request per node" in out and "(request → enter, 1 sample)" in out
    assert "(0 handovers)" in out and "(s)" not in out


def test_scenario_steps_count_from_1_when_validated_and_when_played():
    request = {"op": "request", "pid": 1}
    invalid = {"algorithm": "lamport", "processes": 2, "steps": [request, {"op": "exit"}]}  # no pid
    unplayable = {"algorithm": "lamport", "processes": 2, "steps": [request, {"op": "exit", "pid": 2}]}
    with pytest.raises(ScenarioError) as validated:
        replay_scenario(invalid)
    with pytest.raises(ScenarioError) as played:
        replay_scenario(unplayable)
    assert "step 2 (exit): pid: Field required" in str(validated.value)
    assert str(played.value).startswith("step 2 (exit): node-2 cannot exit")
    with pytest.raises(ScenarioError, match=r"step 1 \(fly\): Input tag 'fly'"):
        replay_scenario({"algorithm": "lamport", "processes": 2, "steps": [{"op": "fly"}]})
    with pytest.raises(ScenarioError, match=r"step 3: Input should be a valid dictionary"):
        replay_scenario({"algorithm": "lamport", "processes": 2, "steps": [request, request, "x"]})


def test_the_cli_names_the_step_from_1(tmp_path, capsys):
    path = tmp_path / "s.json"
    path.write_text(
        json.dumps(
            {
                "algorithm": "lamport",
                "processes": 2,
                "steps": [{"op": "request", "pid": 1}, {"op": "deliver", "from": 1, "to": 2, "x": 1}],
            }
        )
    )
    assert main(["replay", str(path)]) == 2
    assert "step 2 (deliver): x: Extra inputs are not permitted" in capsys.readouterr().err


SUBCOMMANDS = [
    ("simulate bees", []),
    ("simulate elves", []),
    ("simulate mutex", ["-a", "lamport", "-N", "3"]),
    ("replay", ["x.json"]),
    ("verify", ["x.jsonl"]),
    ("report", ["x.jsonl"]),
    ("compare", ["-N", "3"]),
    ("run bees", []),
    ("run elves", []),
    ("run mutex", ["-a", "lamport", "-N", "3"]),
]


@pytest.mark.parametrize("command, needed", SUBCOMMANDS, ids=[c for c, _ in SUBCOMMANDS])
@pytest.mark.parametrize("given", ["all", "none"])
def test_an_unknown_flag_is_reported_by_its_subcommand(command, needed, given, capsys):
    argv = command.split() + (needed if given == "all" else []) + ["--frobnicate"]
    with pytest.raises(SystemExit) as exc:
        main(argv)
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert err.startswith(f"usage: mutexlab {command} "), err
    assert f"mutexlab {command}: error:" in err and "unrecognized arguments: --frobnicate" in err
    assert "usage: mutexlab [-h]" not in err


def test_an_unknown_flag_before_the_subcommand_is_the_top_levels(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--frobnicate", "verify", "x.jsonl"])
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.startswith("usage: mutexlab [-h]") and "--frobnicate" in err


def test_known_flags_values_and_abbreviations_are_not_called_unknown(capsys):
    with pytest.raises(SystemExit):
        main(["simulate", "mutex", "--node", "3", "--seed", "-1", "-a", "lamport"])  # --node: --nodes
    err = capsys.readouterr().err
    assert "--seed: must be at least 0" in err and "unrecognized" not in err


def test_what_a_stuck_process_waits_for_in_words():
    """A deadlock's waiters in words: senders by name, and a ``waiting_for()`` that names none
    (the kit's default, ``{"entry": []}`` or a kind with no sender) said so, not ``?``."""
    stuck = {
        "node-1": {"REPLY": ["node-2", "node-3"]},
        "node-2": {"entry": []},
        "node-3": {"TOKEN": []},
        "node-4": {},
    }
    assert waits(stuck) == (
        "node-1 REPLY from node-2, node-3; node-2 to enter (its waiting_for() names no message nor sender); "
        "node-3 TOKEN from a sender its waiting_for() does not name; "
        "node-4 (unfinished; its waiting_for() names nothing)"
    )


def test_a_stuck_process_that_names_nothing_says_its_state_and_final_states():
    """A bee left ``DEAD`` by a class that declares no ``final_states`` reads as stuck; the
    deadlock says its state and why it counts as unfinished (it said only ``(unfinished; its
    waiting_for() names nothing)``, which names nothing to fix)."""
    from enum import StrEnum

    from mutexlab.protocol import Protocol
    from mutexlab.sim.stuck import said

    class S(StrEnum):
        WAIT = "WAIT"
        DEAD = "DEAD"

    class Undeclared:
        final_states: frozenset = frozenset()
        state = S.DEAD
        wants = Protocol.wants

    class Declared:
        final_states = frozenset({S.DEAD})
        state = S.WAIT
        wants = Protocol.wants

    stuck = [
        ("bee-1", Undeclared(), {}),
        ("bee-2", Declared(), {}),
        ("bee-3", Declared(), {"TOKEN": ["bee-1"]}),
    ]
    assert said({}, stuck, {}) == (
        "bee-1 (unfinished in state DEAD: Undeclared.final_states is empty; its waiting_for() names nothing); "
        "bee-2 (unfinished in state WAIT: not one of Declared.final_states; its waiting_for() names nothing); "
        "bee-3 TOKEN from bee-1"
    )
