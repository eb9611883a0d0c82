"""The explorer's session (no web): steps, undo/redo, jump, random walks, findings, import/export.

Every path exported is replayed with ``replay_scenario`` (what ``mutexlab replay`` runs) and
must give the very same trace, event for event.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from mutexlab.explore.describe import describe_process
from mutexlab.explore.session import Config, ExploreError, Session, derive, session_from_scenario
from mutexlab.sim.scripted import ScenarioError, replay_scenario

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "scenarios"
RA3 = Config("ricart-agrawala", 3, {"requests": 1})


def ids(session: Session) -> list[str]:
    return [s["id"] for s in session.state()["steps"]]


def fields(state: dict, name: str) -> dict:
    proc = next(p for p in state["procs"] if p["name"] == name)
    return dict(proc["fields"])


def replays_exactly(session: Session) -> None:
    result = replay_scenario(session.scenario())
    assert result.events == session.world.events
    assert result.entered == session.state()["findings"]["entered"]


def test_enabled_steps_are_pending_decisions_and_link_heads():
    s = Session(RA3)
    assert ids(s) == ["request:1", "request:2", "request:3"]
    s.step("request:2")
    assert ids(s) == ["request:1", "request:3", "deliver:2-1", "deliver:2-3"]
    state = s.state()
    assert state["links"][0]["messages"][0]["type"] == "REQUEST"
    assert state["history"] == [
        {"n": 1, "id": "request:2", "label": "node-2: request", "step": {"op": "request", "pid": 2}}
    ]


def test_step_not_enabled_or_malformed_changes_nothing():
    s = Session(RA3)
    s.step("request:1")
    before = s.state()
    for bad, status in [
        ("deliver:2-1", 409),
        ("request:1", 409),
        ("exit:1", 409),
        ("nonsense", 409),
        (7, 400),
        (None, 400),
    ]:
        with pytest.raises(ExploreError) as err:
            s.step(bad)
        assert err.value.status == status
        assert s.state() == before
    with pytest.raises(ExploreError, match="not enabled now; enabled: request:2, request:3, deliver:1-2"):
        s.step("deliver:2-1")


def test_undo_restores_the_world_redo_replays_it_and_a_new_branch_drops_the_redo_list():
    s = Session(RA3)
    states = [s.state()]
    for sid in ["request:1", "deliver:1-2", "deliver:1-3", "deliver:2-1", "deliver:3-1"]:
        s.step(sid)
        states.append(s.state())
    assert states[-1]["findings"]["entered"] == ["node-1"]
    s.undo()
    assert {k: v for k, v in s.state().items() if k != "redo"} == {
        k: v for k, v in states[-2].items() if k != "redo"
    }
    assert s.state()["redo"] == ["deliver:3-1"]
    s.redo()
    assert s.state() == states[-1]
    s.undo()
    s.undo()
    s.step("deliver:3-1")  # not what was undone: a different branch
    assert s.state()["redo"] == []
    s.jump(2)  # history r1 d12 | ahead d13 d31
    s.step("deliver:1-3")  # the next step ahead, taken by hand: the rest stays redoable
    assert s.state()["redo"] == ["deliver:3-1"]
    with pytest.raises(ExploreError, match="nothing to undo"):
        Session(RA3).undo()
    with pytest.raises(ExploreError, match="nothing to redo"):
        Session(RA3).redo()


def test_jump_back_and_forward_along_the_path():
    s = Session(RA3)
    s.run_to_end(seed=3)
    end = s.state()
    n = end["position"]
    s.jump(2)
    assert s.state()["position"] == 2 and len(s.state()["redo"]) == n - 2
    assert s.state()["history"] == end["history"][:2]
    s.jump(n)
    assert s.state() == end
    with pytest.raises(ExploreError, match="cannot jump") as err:
        s.jump(n + 1)
    assert err.value.status == 409
    for bad in ("3", -1):  # as docs/explore.md and the OpenAPI document say: 400, not 409
        with pytest.raises(ExploreError, match="whole number of steps ≥ 0") as err:
            s.jump(bad)
        assert err.value.status == 400
    assert s.state() == end


@pytest.mark.parametrize(
    "config",
    [
        Config("bees", 3, {"flowers": 1, "reeds": 2, "eggs": 2, "cocoons": 4}),
        Config("elves", 2, {"rounds": 1, "contracts": 2}),
        Config("lamport", 3, {"requests": 2}),
        Config("ricart-agrawala", 3, {"requests": 2}),
        Config("maekawa", 4, {"requests": 1}),
        Config("sanders", 3, {"requests": 1}),
        Config("suzuki-kasami", 3, {"requests": 2}),
        Config("raymond", 4, {"requests": 1}),
    ],
    ids=lambda c: c.algorithm,
)
def test_run_to_the_end_of_every_protocol_then_replay_the_export(config):
    s = Session(config)
    outcome = s.run_to_end(seed=1)
    assert outcome["stopped"] == "end"
    f = s.state()["findings"]
    assert f["status"] == "end", f["summary"]
    assert f["violations"] == [] and f["end_violations"] == [] and f["deadlock"] is None
    assert s.state()["steps"] == []
    replays_exactly(s)


def test_random_walks_are_reproducible_per_seed():
    a, b, c = Session(RA3), Session(RA3), Session(RA3)
    a.random(7, seed=5)
    b.random(7, seed=5)
    c.random(7, seed=6)
    assert a.scenario() == b.scenario()
    assert a.state()["position"] == 7
    assert a.scenario() != c.scenario()  # (seeds 5 and 6 happen to differ within 7 steps)
    for bad in ({"count": -1}, {"count": "3"}, {"count": 10**6}, {"count": 3, "seed": -2}):
        with pytest.raises(ExploreError):
            a.random(bad["count"], bad.get("seed", 0))


def test_a_broken_variant_stops_the_walk_at_its_first_violation():
    s = Session(Config("tests.mutexlab_broken.ricart_agrawala", 3, {"requests": 2}))
    outcome = s.run_to_end(seed=0)
    assert outcome["stopped"] == "violation"
    f = s.state()["findings"]
    assert f["status"] == "violation"
    assert any(v["rule"] == "capacity" and "cs (capacity 1)" in v["message"] for v in f["violations"])
    position = s.state()["position"]
    s.undo()
    assert s.state()["findings"]["violations"] == [], "the walk went past the first violation"
    assert position == outcome["position"]


def test_a_late_violation_is_traced_back_to_its_first_step(monkeypatch):
    """Long walks audit every 25 steps; a violation the audit finds late is bisected back to the
    step where it began. (Seed 4: two bees on the one flower one after the other without
    happened-before — only the audit sees it, the exact occupancy never exceeds 1.)"""
    config = Config("tests.mutexlab_broken.bees", 6, {"flowers": 1, "reeds": 2, "eggs": 3, "cocoons": 9})
    every_step = Session(config)
    assert every_step.run_to_end(seed=4)["stopped"] == "violation"
    first = every_step.state()["position"]
    monkeypatch.setattr(Session, "_audit_due", lambda self, taken: taken % 25 == 0)
    late = Session(config)
    outcome = late.run_to_end(seed=4)
    assert first % 25 != 0  # so the periodic audit finds it after the fact
    assert outcome == {"taken": first, "stopped": "violation", "position": first}
    f = late.state()["findings"]
    assert [v["rule"] for v in f["violations"]] == ["capacity"]
    assert derive(config, late.world.steps[: first - 1]).findings()["violations"] == []
    assert late.world.steps == every_step.world.steps


def test_deadlock_is_found_and_explained_in_the_audits_words():
    s = Session(Config("tests.mutexlab_broken.ricart_agrawala_proud", 2, {"requests": 1}))
    for sid in ["request:1", "request:2", "deliver:1-2", "deliver:2-1"]:
        s.step(sid)
    f = s.state()["findings"]
    assert f["status"] == "deadlock"
    assert "deadlock: wait-for cycle node-1 → node-2 → node-1" in f["deadlock"]
    assert "node-1 (WANTED) waits for cs: REPLY from node-2" in f["deadlock"]
    assert {v["rule"] for v in f["end_violations"]} == {"request-unserved", "not-idle-at-end"}


def test_end_of_run_rules_are_judged_only_at_the_end():
    s = Session(RA3)
    s.step("request:1")
    f = s.state()["findings"]
    assert f["status"] == "running" and f["violations"] == [] and f["end_violations"] == []
    assert [v["rule"] for v in f["open_at_end"]] == [
        "request-unserved",
        "not-idle-at-end",
        "workload-short",  # node-2 and node-3 have not asked yet: their requests = 1 is still to do
        "workload-short",
    ]
    assert f["summary"].startswith("no violation in the 1 step so far")


def test_capacity_shows_who_holds_what():
    s = Session(RA3)
    for sid in ["request:1", "deliver:1-2", "deliver:1-3", "deliver:2-1", "deliver:3-1"]:
        s.step(sid)
    f = s.state()["findings"]
    assert f["capacity"] == [
        {
            "resource": "cs",
            "capacity": 1,
            "in_use": 1,
            "over": False,
            "holders": [{"name": "node-1", "units": 1}],
        }
    ]
    assert next(p for p in s.state()["procs"] if p["name"] == "node-1")["holds"] == ["cs"]


def test_a_scenario_loads_at_step_0_with_its_steps_ahead():
    s = session_from_scenario(EXAMPLES / "suzuki-kasami-notes.json")
    assert s.state()["position"] == 0 and len(s.state()["redo"]) == 10
    s.jump(10)
    state = s.state()
    assert fields(state, "node-3")["token"] == "L = [1, 0, 1], Q = []"
    assert fields(state, "node-1")["token"] == "no token"
    assert state["findings"]["entered"] == ["node-1", "node-3"]
    assert state["findings"]["status"] == "end"
    replays_exactly(s)
    # hand-written scenarios have no workload: idle nodes may request again (extra steps) ...
    assert [x["id"] for x in state["steps"]] == ["request:1", "request:2", "request:3"]
    assert all(x["extra"] for x in state["steps"])
    s.step("request:2")  # ... and taking one is an ordinary step
    assert s.state()["findings"]["status"] == "running"
    replays_exactly(s)


@pytest.mark.parametrize("path", sorted(EXAMPLES.glob("*.json")), ids=lambda p: p.stem)
def test_every_example_scenario_steps_forward_to_its_end_and_exports_the_same(path):
    s = session_from_scenario(path)
    s.jump(len(s.state()["redo"]))
    assert s.scenario()["steps"] == json.loads(path.read_text())["steps"]
    replays_exactly(s)


def test_invalid_scenarios_are_refused_and_change_nothing():
    s = Session(RA3)
    s.step("request:1")
    before = s.state()
    bad = [
        (
            {"algorithm": "ricart-agrawala", "processes": 2, "steps": [{"op": "fly", "pid": 1}]},
            "invalid scenario",
        ),
        (
            {
                "algorithm": "ricart-agrawala",
                "processes": 2,
                "steps": [{"op": "deliver", "from": 1, "to": 2}],
            },
            "step 1 (deliver): no message in flight from 1 to 2",
        ),
        (
            {"algorithm": "ricart-agrawala", "processes": 2, "steps": [{"op": "exit", "pid": 1}]},
            "step 1 (exit): node-1 cannot exit",
        ),
        (
            {"algorithm": "ricart-agrawala", "processes": 2, "steps": [{"op": "request", "pid": 5}]},
            "no process 5",
        ),
        ({"algorithm": "nope", "processes": 2, "steps": []}, "unknown algorithm"),
        (
            {"algorithm": "maekawa", "processes": 3, "options": {"quorums": {"1": [2]}}, "steps": []},
            "invalid configuration",
        ),
        ({"processes": 2, "steps": []}, "algorithm"),
    ]
    for scenario, words in bad:
        with pytest.raises(ExploreError, match=re.escape(words)) as err:
            s.load(scenario)
        assert err.value.status == 422
        assert s.state() == before
    with pytest.raises(ScenarioError):
        session_from_scenario(ROOT / "nothere.json")


def test_cards_show_what_each_state_table_talks_about():
    s = session_from_scenario(EXAMPLES / "maekawa-inquire-yield.json")
    s.jump(14)
    f = fields(s.state(), "node-6")
    assert {"quorum", "my request", "grants (REPLY)", "locked for", "queue", "INQUIRE sent"} <= set(f)
    r = Session(Config("raymond", 3, {"requests": 1}))
    assert fields(r.state(), "node-2")["holder"] == "1"
    assert fields(r.state(), "node-1")["holder"] == "self"
    b = Session(Config("bees", 2, {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 2}))
    fb = fields(b.state(), "bee-1")
    assert {"reed", "eggs laid", "ACKreed", "ACKflower", "deferred REQflower"} <= set(fb)
    e = Session(Config("elves", 2, {"rounds": 1, "contracts": 2}))
    assert "round" in fields(e.state(), "mayor") and "pins queue" in fields(e.state(), "elf-1")
    # every attribute not named by the protocol's own rows still shows (nothing is hidden)
    node = Session(RA3).world.setup.protocols[1]
    node.surprise = {3, 1}
    assert ["surprise", "{1, 3}"] in describe_process(node)


# -- an endless workload (``explore mutex --endless``, as ``check mutex --endless``) -------------
def test_an_endless_workload_requests_forever_and_replays():
    s = Session(Config("ricart-agrawala", 2, {"requests": 3}, endless=True))
    first = s.state()["steps"]
    assert [(x["id"], x["extra"]) for x in first] == [("request:1", False), ("request:2", False)]
    result = s.random(400, seed=3, to_end=True)  # new requests are ordinary steps: no end
    assert result["stopped"] == "limit" and result["taken"] == 400
    taken = [h["id"] for h in s.state()["history"]]
    assert taken.count("exit:1") >= 3 and taken.count("exit:2") >= 3  # past any budget
    assert s.state()["findings"]["status"] == "running" and s.state()["endless"]
    exported = s.scenario()
    assert exported["options"]["requests"] == 0  # no budget: every request is a step of the path
    replays_exactly(s)
    assert session_from_scenario(exported).redo_steps[::-1] == s.world.steps


def test_without_endless_the_same_run_ends():
    s = Session(Config("ricart-agrawala", 2, {"requests": 1}))
    assert s.random(400, seed=3, to_end=True)["stopped"] == "end"
    assert not s.state()["endless"]


def test_explore_mutex_takes_endless_and_the_families_without_requests_do_not(capsys):
    from mutexlab.cli import build_parser
    from mutexlab.commands.explore import build_session

    args = build_parser().parse_args(["explore", "mutex", "-a", "lamport", "-N", "3", "--endless"])
    session = build_session(args)
    assert session.config.endless and session.world.setup.params.get("requests") == 0
    with pytest.raises(SystemExit):
        build_parser().parse_args(["explore", "bees", "--endless"])
    assert "--endless" in capsys.readouterr().err
