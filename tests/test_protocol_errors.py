"""One policy for impossible input (mutexlab/protocol.py): a protocol raises ProtocolError naming
process, state and input, and every driver reports it — none goes on as if nothing happened.

* the simulator stops the run; ``mutexlab simulate`` prints the error and exits 1;
* a scripted replay names the step (exit 2: the scenario asked for the impossible);
* the explorer records the path to it as an error;
* a RabbitMQ participant dead-letters a refused message with the error as reason and goes on;
  a refused local input (a timer) makes it exit with EXIT_FAILED.

The offender is the broken Ricart–Agrawala of tests/mutexlab_broken, which enters without waiting
for replies: the replies then reach it while HELD or RELEASED, which the protocol refuses.
"""

from __future__ import annotations

import logging
from typing import Literal

import pytest
from mutexlab_broken.ricart_agrawala import GreedyNode
from test_participant_steps import acks, admitted_node2, request, routes

from mutexlab.cli import main as cli
from mutexlab.messages import Message
from mutexlab.protocol import ProtocolError
from mutexlab.protocols import ricart_agrawala as ra
from mutexlab.protocols.registry import make_setup
from mutexlab.sim import SimConfig, Simulation, replay_scenario
from mutexlab.sim.explore import explore
from mutexlab.sim.scripted import ScenarioError
from mutexlab.transport.participant import EXIT_FAILED


def test_every_refusal_names_process_state_and_input():
    node = ra.RicartAgrawalaNode(2, 3)
    with pytest.raises(ProtocolError, match=r"^node-2 cannot take REPLY in state RELEASED$"):
        node.on_message(ra.Reply(sender=1, ts=4))
    assert node.clock.time == 0, "refused before it changed anything"
    with pytest.raises(ProtocolError, match=r"^node-2 cannot take local action 'dance' in state RELEASED"):
        node.on_local("dance")

    class Gimme(Message):  # a message class Ricart–Agrawala does not know
        type: Literal["GIMME"] = "GIMME"

    with pytest.raises(ProtocolError, match=r"^node-2 cannot take GIMME in state RELEASED$"):
        node.on_message(Gimme(sender=1, ts=1))


def test_the_simulator_stops_at_the_first_refusal():
    setup = make_setup("ricart-agrawala", 3, {"requests": 2})
    setup.protocols = {p: GreedyNode(p, 3, 2) for p in setup.protocols}
    with pytest.raises(ProtocolError, match=r"node-\d cannot take REPLY in state (HELD|RELEASED)"):
        Simulation(setup, SimConfig(seed=1)).run()


def test_simulate_prints_the_refusal_and_exits_1(capsys):
    code = cli(["simulate", "mutex", "-a", "mutexlab_broken.ricart_agrawala", "-N", "3", "--requests", "2"])
    err = capsys.readouterr().err
    assert code == 1
    assert err.startswith("mutexlab: protocol error: node-") and "cannot take REPLY in state" in err, err
    assert "Traceback" not in err


def test_a_replay_names_the_step_that_was_refused():
    steps = [{"op": "request", "pid": 1}, {"op": "request", "pid": 1}]
    with pytest.raises(ScenarioError, match=r"^step 2 \(request\): node-1 cannot request in state WANTED$"):
        replay_scenario({"algorithm": "ricart-agrawala", "processes": 2, "steps": steps})


def test_the_explorer_records_the_path_to_a_refusal():
    def greedy():
        setup = make_setup("ricart-agrawala", 2, {"requests": 1})
        setup.protocols = {p: GreedyNode(p, 2, 1) for p in setup.protocols}
        return setup

    found = explore(greedy)
    errors = [f for f in found.violations if f.kind == "error"]
    assert errors and "cannot take REPLY in state" in errors[0].message
    assert errors[0].path[-1].startswith("deliver REPLY")


@pytest.fixture
def node2():
    return admitted_node2()


def test_a_participant_dead_letters_a_refused_message_and_goes_on(node2, caplog):
    reply = {"type": "REPLY", "sender": 1, "ts": 3}  # node-2 asked for nothing: a REPLY cannot come
    with caplog.at_level(logging.ERROR, logger="mutexlab.participant"):
        node2._handle(request(41, 1, ts=3, body=reply))  # noqa: SLF001 - a participant's steps, driven one by one
    node2._handle(request(42, 2, ts=5))  # noqa: SLF001 - see above; the next message is handled as usual
    node2._publish_step()  # noqa: SLF001 - see above
    # Dead-lettered, then acked with the step's other deliveries (behind its batch), not at once.
    dead = [c for c in node2.bus.calls if c[0].startswith("dead")]
    assert dead == [("dead, acked already", 41, "protocol error: node-2 cannot take REPLY in state RELEASED")]
    assert "node-2: refused node-1#1 from node-1: node-2 cannot take REPLY in state RELEASED" in caplog.text
    assert node2.dead_letters == 1
    assert "REPLY.node-1" in routes(node2.bus.calls) and acks(node2.bus.calls)[-2:] == [41, 42]


def test_a_participant_whose_protocol_refuses_a_local_input_exits_failed(node2, caplog, monkeypatch):
    node2.bus.connect = node2.bus.close = lambda *a, **k: None
    monkeypatch.setattr(node2, "_join", lambda: None)
    monkeypatch.setattr(node2, "_work", lambda: node2._input(lambda p: p.on_local("exit")) or True)  # noqa: SLF001 - see above
    with caplog.at_level(logging.ERROR, logger="mutexlab.participant"):
        assert node2.run() == EXIT_FAILED
    assert (
        "node-2: protocol error on a local input, giving up: node-2 cannot exit: it is not in the "
        "critical section (state RELEASED)"
    ) in caplog.text
    assert node2.setup.protocols[2].state == "RELEASED", "refused before it changed anything"
