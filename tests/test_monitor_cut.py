"""A participant stopped or killed between its protocol messages and the trace batch holding their
events (transport/participant.py) leaves a trace cut short: receivers know events of it the trace
lacks. The monitor's verdict does not call that a violation (audit/cut.py), and still judges what
the clocks do not prove cut."""

from __future__ import annotations

import json

from mutexlab.audit.cut import proven_cut
from mutexlab.transport.outcome import Outcome, decide

RUN = {
    "event": "run",
    "pid": "run",
    "algorithm": "ricart-agrawala",
    "processes": {"1": "node-1", "2": "node-2"},
    "capacities": {"cs": 1},
    "params": {"nodes": 2, "requests": 1},
}


def ev(event: str, pid: str, vc: dict, **more) -> dict:
    return {"event": event, "pid": pid, "vc": vc, **more}


# Ricart-Agrawala, N=2, one request each, as the simulator writes it (seed 1), line by line.
WHOLE = [
    RUN,
    ev("request", "node-1", {"node-1": 1}, resource="cs"),
    ev("send", "node-1", {"node-1": 2}, type="REQUEST", to="node-2", id="node-1#1"),
    ev("state", "node-1", {"node-1": 3}, state="WANTED"),
    ev("recv", "node-2", {"node-1": 2, "node-2": 1}, type="REQUEST", **{"from": "node-1"}, id="node-1#1"),
    ev("send", "node-2", {"node-1": 2, "node-2": 2}, type="REPLY", to="node-1", id="node-2#1"),
    ev("request", "node-2", {"node-1": 2, "node-2": 3}, resource="cs"),
    ev("send", "node-2", {"node-1": 2, "node-2": 4}, type="REQUEST", to="node-1", id="node-2#2"),
    ev("state", "node-2", {"node-1": 2, "node-2": 5}, state="WANTED"),
    ev("recv", "node-1", {"node-1": 4, "node-2": 2}, type="REPLY", **{"from": "node-2"}, id="node-2#1"),
    ev("enter", "node-1", {"node-1": 5, "node-2": 2}, resource="cs"),
    ev("state", "node-1", {"node-1": 6, "node-2": 2}, state="HELD"),
    ev("recv", "node-1", {"node-1": 7, "node-2": 4}, type="REQUEST", **{"from": "node-2"}, id="node-2#2"),
    ev("exit", "node-1", {"node-1": 8, "node-2": 4}, resource="cs"),
    ev("send", "node-1", {"node-1": 9, "node-2": 4}, type="REPLY", to="node-2", id="node-1#2"),
    ev("state", "node-1", {"node-1": 10, "node-2": 4}, state="RELEASED"),
    ev("recv", "node-2", {"node-1": 9, "node-2": 6}, type="REPLY", **{"from": "node-1"}, id="node-1#2"),
    ev("enter", "node-2", {"node-1": 9, "node-2": 7}, resource="cs"),
    ev("state", "node-2", {"node-1": 9, "node-2": 8}, state="HELD"),
    ev("exit", "node-2", {"node-1": 9, "node-2": 9}, resource="cs"),
    ev("state", "node-2", {"node-1": 9, "node-2": 10}, state="RELEASED"),
]


def lost_after(pid: str, clock: int) -> list[dict]:
    """The trace without ``pid``'s events after its own clock ``clock``: its last batch lost."""
    return [e for e in WHOLE if e["pid"] != pid or e["vc"][pid] <= clock]


def judged(events: list[dict], complete: bool, unheard: list[str]) -> Outcome:
    outcome = Outcome("r", "ricart-agrawala", 2, complete, no_final_status=unheard)
    decide(outcome, json.loads(json.dumps(events)))
    return outcome


def test_the_whole_run_is_safe():
    assert judged(WHOLE, True, []).exit_code == 0


def test_a_sender_cut_after_its_replies_left_is_not_a_violation():
    """node-2 stopped after its REPLY and REQUEST left, before their batch: node-1's receipts have no
    send in the trace. Not judged (exit 3), naming node-2's cut trace."""
    events = lost_after("node-2", 1)
    assert proven_cut(events, ["node-2"]) == {"node-2": (1, 4)}
    outcome = judged(events, False, ["node-2"])
    assert outcome.exit_code == 3 and outcome.safe, outcome.verdict
    assert "recv-without-send" in outcome.verdict and "cut short" in outcome.verdict
    assert "node-2's events end at its clock 1, others know it at 4" in outcome.verdict


def test_a_holder_cut_after_its_exit_is_not_a_violation():
    """node-1 stopped after its exit and REPLY left, before their batch: node-2 entered knowing an
    exit the trace lacks. Without the excuse that reads as two holders at once."""
    events = lost_after("node-1", 7)
    outcome = judged(events, False, ["node-1"])
    assert outcome.exit_code == 3, outcome.verdict
    assert "not judged (capacity:" in outcome.verdict


def test_the_same_traces_are_violations_when_the_monitor_heard_everyone():
    """The excuse is only for a participant whose final status never came (its batch may be lost),
    and only in a run that did not complete: otherwise the findings stand."""
    for events, pid in ((lost_after("node-2", 1), "node-2"), (lost_after("node-1", 7), "node-1")):
        assert judged(events, False, []).exit_code == 1
        assert judged(events, True, [pid]).exit_code == 1


def test_a_holder_stopped_with_nothing_shipped_after_its_enter_is_still_judged():
    """node-1 entered and was stopped holding; node-2 entered knowing nothing of it: a true
    violation, and no clock proves node-1's trace short, so it stands."""
    events = [
        RUN,
        ev("request", "node-1", {"node-1": 1}, resource="cs"),
        ev("enter", "node-1", {"node-1": 2}, resource="cs"),
        ev("request", "node-2", {"node-2": 1}, resource="cs"),
        ev("enter", "node-2", {"node-2": 2}, resource="cs"),
    ]
    assert proven_cut(events, ["node-1"]) == {}
    outcome = judged(events, False, ["node-1"])
    assert outcome.exit_code == 1 and "[capacity]" in outcome.verdict, outcome.verdict


def test_an_overlap_that_knows_nothing_of_the_lost_events_is_still_a_violation():
    """node-1 entered, then sent a message whose event was lost (node-2's receipt proves node-1 cut).
    node-2 entered knowing nothing of node-1: node-1's exit, if any, came after its clock 2, so it
    cannot have happened-before node-2's enter. A true violation, not excused; the receipt without
    its send (which knows the lost part) is."""
    events = [
        RUN,
        ev("request", "node-1", {"node-1": 1}, resource="cs"),
        ev("enter", "node-1", {"node-1": 2}, resource="cs"),
        ev("request", "node-2", {"node-2": 1}, resource="cs"),
        ev("enter", "node-2", {"node-2": 2}, resource="cs"),
        ev("recv", "node-2", {"node-1": 3, "node-2": 3}, type="REQUEST", **{"from": "node-1"}, id="node-1#1"),
    ]
    assert proven_cut(events, ["node-1"]) == {"node-1": (2, 3)}
    outcome = judged(events, False, ["node-1"])
    assert outcome.exit_code == 1 and "[capacity]" in outcome.verdict, outcome.verdict
    assert "not judged (recv-without-send:" in outcome.verdict, outcome.verdict
