"""A message delivered twice, in the audit (docs/trace-format.md#duplicates).

A run that may deliver a message more than once (a scenario's ``duplicate`` steps, ``mutexlab test
--duplicate K``) says so in its header (``"duplicates": true``); the audit then pairs each receive
of an id with its one send and judges every one against it, the clocks as the first's. Without the
declaration a second receive stays ``recv-without-send``; with it, a copy that came from another
sender, went to another process or whose clock contradicts its send is still refused. The C node
tests (a program that answers duplicates, and its twin that counts a REPLY twice) are in
test_director.py.
"""

from __future__ import annotations

import json

import pytest

from mutexlab.audit.clocks import consistent
from mutexlab.audit.integrity import Integrity
from mutexlab.trace import TraceError

SCENARIO = {
    "algorithm": "ricart-agrawala",
    "processes": 2,
    "steps": [
        {"op": "request", "pid": 1},
        {"op": "duplicate", "from": 1, "to": 2},
        {"op": "deliver", "from": 1, "to": 2},
        {"op": "deliver", "from": 2, "to": 1},
        {"op": "exit", "pid": 1},
    ],
}


def _replayed(cli, tmp_path, scenario=SCENARIO) -> list[dict]:
    path, trace = tmp_path / "s.json", tmp_path / "t.jsonl"
    path.write_text(json.dumps(scenario))
    ran = cli("replay", path, "--trace", trace)
    assert ran.returncode == 0 and "ricart-agrawala: SAFE" in ran.stdout, ran.stdout + ran.stderr
    return [json.loads(line) for line in trace.read_text().splitlines()]


def _write(path, events) -> None:
    path.write_text("".join(json.dumps(e) + "\n" for e in events))


def test_a_replayed_duplicate_is_a_second_delivery_not_a_forgery(cli, tmp_path):
    events = _replayed(cli, tmp_path)
    assert events[0]["duplicates"] is True
    received = [e["id"] for e in events if e["event"] == "recv" and e["pid"] == "node-2"]
    assert received == ["node-1#1", "node-1#1"]
    verified = cli("verify", tmp_path / "t.jsonl")
    assert verified.returncode == 0 and "ricart-agrawala: SAFE" in verified.stdout, verified.stdout
    # undeclared, the same second receive is a message nobody sent
    events[0].pop("duplicates")
    _write(tmp_path / "undeclared.jsonl", events)
    refused = cli("verify", tmp_path / "undeclared.jsonl")
    assert refused.returncode == 1, refused.stdout
    assert "[recv-without-send] node-2 received message node-1#1 from node-1, which no send" in refused.stdout
    assert "(or received already: the run header declares no duplicates)" in refused.stdout


def test_a_scenario_without_duplicate_steps_declares_none(cli, tmp_path):
    steps = [s for s in SCENARIO["steps"] if s["op"] != "duplicate"]
    events = _replayed(cli, tmp_path, dict(SCENARIO, steps=steps))
    assert "duplicates" not in events[0]


def test_a_copy_whose_clock_contradicts_its_send_is_refused(cli, tmp_path):
    events = _replayed(cli, tmp_path)
    second = [i for i, e in enumerate(events) if e["event"] == "recv" and e["pid"] == "node-2"][1]
    events[second]["vc"]["node-1"] += 1  # knows an event of node-1 the message did not carry
    _write(tmp_path / "forged.jsonl", events)
    refused = cli("verify", tmp_path / "forged.jsonl")
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert f"forged.jsonl:{second + 1}: the vector clocks contradict each other" in refused.stderr
    assert "recv of message node-1#1 says it knows event" in refused.stderr


def _msg(kind, pid, key, vc, **extra) -> dict:
    return {"event": kind, "pid": pid, "id": key, "vc": vc, **extra}


SEND = _msg("send", "a", "a#1", {"a": 1}, to="b")
FIRST = _msg("recv", "b", "a#1", {"a": 1, "b": 1}, **{"from": "a"})
SECOND = _msg("recv", "b", "a#1", {"a": 1, "b": 2}, **{"from": "a"})
HEADER = {"event": "run", "pid": "run", "capacities": {}, "duplicates": True}


@pytest.mark.parametrize("order", [(SEND, FIRST, SECOND), (FIRST, SECOND, SEND), (FIRST, SEND, SECOND)])
def test_copies_pair_with_their_send_in_any_file_order(order):
    assert Integrity(HEADER).feed_all(order).findings() == []
    assert Integrity(dict(HEADER, duplicates=False)).feed_all(order).findings() != []
    numbered = [dict(event, _line=n) for n, event in enumerate(order, 2)]
    assert len(list(consistent([HEADER, *numbered], "t"))) == 4


def test_a_copy_from_another_sender_or_to_another_process_is_still_refused():
    wrong_sender = dict(SECOND, **{"from": "c"})
    found = Integrity(HEADER).feed_all([SEND, FIRST, wrong_sender]).findings()
    assert [v.rule for v in found] == ["recv-without-send"] and "but a sent it" in found[0].message
    elsewhere = _msg("recv", "c", "a#1", {"a": 1, "c": 1}, **{"from": "a"})
    found = Integrity(HEADER).feed_all([SEND, FIRST, elsewhere]).findings()
    assert [v.rule for v in found] == ["recv-without-send"] and "was sent to b, not to it" in found[0].message


def test_a_copy_that_does_not_know_its_send_breaks_the_clocks_even_when_declared():
    early = dict(SECOND, vc={"b": 2}, _line=4)
    with pytest.raises(TraceError, match="t:4: the vector clocks contradict each other"):
        list(consistent([HEADER, dict(SEND, _line=1), dict(FIRST, _line=2), early], "t"))
