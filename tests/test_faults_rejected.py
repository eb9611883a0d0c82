"""A protocol refusal during ``mutexlab run`` is a finding.

A participant whose protocol refuses a message (``ProtocolError``) dead-letters it and reports it
in its status; the monitor stops the run there and decides as ``check``, ``replay`` and
``simulate`` do: rejected input, exit 1, never "complete, SAFE", named in the summary. The
offender is ``mutexlab_broken.ricart_agrawala_spurious``: node-1 greets every other node with a
REPLY nobody asked for, which each refuses; mutual exclusion still holds, so only the refusal
tells that something is wrong.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from conftest import DELIVERIES

from mutexlab.protocols.registry import make_setup
from mutexlab.transport.outcome import EXIT_VIOLATION, Outcome, decide, render
from mutexlab.transport.supervisor import Plan, execute

TESTS = Path(__file__).resolve().parent
REFUSAL = "protocol error: node-{} cannot take REPLY in state RELEASED"


def test_a_rejected_input_is_never_safe_even_in_a_complete_run():
    outcome = Outcome("r", "ricart-agrawala", 2, complete=True, states={"node-1": "RELEASED"})
    outcome.rejected = [{"process": "node-2", "count": 3, "reasons": ["REPLY node-1#1 from node-1: boom"]}]
    header = make_setup("ricart-agrawala", 2, {"requests": 0}).run_event()
    assert decide(outcome, [header]) == EXIT_VIOLATION
    assert not outcome.safe
    assert (
        outcome.violations[0]
        == "rejected input: node-2 rejected 3: REPLY node-1#1 from node-1: boom (and 2 more)"
    )
    text = render(outcome)
    assert "REJECTED INPUT: 3 protocol messages refused by the protocol of node-2" in text
    assert "rejected inputs 3" in text


@pytest.mark.broker
@pytest.mark.parametrize("delivery", DELIVERIES)
def test_a_refusal_during_a_run_stops_it_with_exit_1_and_names_it(delivery, amqp_url, tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    plan = Plan(
        "mutexlab_broken.ricart_agrawala_spurious",
        3,
        {"requests": 1},
        amqp_url=amqp_url,
        dwell=0.05,
        dwell_times={"think": 1.0},  # the others are RELEASED, thinking, when node-1's REPLY arrives
        stall_timeout=30,
        join_timeout=120,
        trace=str(tmp_path / "trace.jsonl"),
        logs=str(tmp_path / "logs"),
        delivery=delivery,
    )
    out = io.StringIO()
    code = execute(plan, json_out=True, out=out)
    summary = json.loads(out.getvalue())
    text = (tmp_path / "logs" / "monitor.out").read_text()
    assert code == EXIT_VIOLATION, text
    assert not summary["safe"] and not summary["complete"], summary
    assert summary["delivery"] == delivery
    rejected = {r["process"]: r for r in summary["rejected"]}
    assert set(rejected) == {"node-2", "node-3"}, summary["rejected"]
    for n in (2, 3):
        assert rejected[f"node-{n}"]["count"] == 1
        assert rejected[f"node-{n}"]["reasons"] == [f"REPLY node-1#{n - 1} from node-1: " + REFUSAL.format(n)]
    assert any(v.startswith("rejected input: node-2 rejected 1") for v in summary["violations"])
    assert summary["dead_letters"] == 2
    assert "STOPPED: a rejected input" in text and "REJECTED INPUT: 2 protocol messages" in text, text
    assert "rejected input: node-3 rejected 1: REPLY node-1#2 from node-1: " + REFUSAL.format(3) in text
    assert "— complete" not in text
