"""``mutexlab replay SCENARIO --over-rabbitmq``: a scenario played by real participant processes over
RabbitMQ, the director holding every message (transport/directed.py, docs/rabbitmq.md#directed-replay).

* the reorder counterexample of docs/tour.md (``check bees --reorder --search bfs``) reproduces:
  the same broken rules as the simulator's replay, exit 1, and the real trace shows the overtake
  (bee-1 receives bee-2's ACK before bee-2's older REQ);
* correct classic scenarios replay SAFE, exit 0, with the simulator's sequence of enters;
* a delivery the simulator's protocol refuses is rejected by the real participant: exit 1;
* a program that behaves differently when directed (a broken variant) is "diverged at step N",
  exit 3, never SAFE;
* a ``duplicate`` step releases a copy of the held message: the duplicated REPLY of ``check
  --duplicate`` lets two tolerant Ricart–Agrawala nodes in at once on real participants, exit 1,
  the real trace showing the REPLY received twice, a delivery its header declares (no
  ``recv-without-send``); the monitor is told to declare it for a scenario with duplicate steps only; a duplicated Suzuki–Kasami token is rejected
  by the real participant as by the simulator's, exit 1;
* a liveness counterexample (a ``loop``) plays its stem, then its cycle ``--rounds`` times: the
  starving variant's lasso is a LIVENESS finding, exit 1, node-2 never entering; a closed loop
  nobody starves in is none (exit as the simulator's); a loop that does not close is refused up
  front, exit 2;
* without a broker: the director takes a redelivered trace batch once, and names the step where a
  process records another event than the simulator's.

Every run's queues and exchanges are gone afterwards (the director's queue too).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pika
import pytest

from mutexlab.bus.topology import Topology

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
SCENARIOS = ROOT / "examples" / "scenarios"


def _mutexlab(*argv: str, extra_path: str | None = None) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    if extra_path:
        env["PYTHONPATH"] = os.pathsep.join([extra_path, env.get("PYTHONPATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "mutexlab", *argv], capture_output=True, text=True, timeout=300, env=env
    )


def _rules(text: str) -> set[str]:
    """The rules an audit's violation lines name (``  [capacity] ...``)."""
    return set(re.findall(r"^\s+\[([a-z-]+)\] ", text, re.M))


def _entered(text: str) -> str:
    return re.findall(r"^entered, in order: (.*)$", text, re.M)[-1]


def _over_rabbitmq(amqp_url: str, scenario: Path, tmp_path: Path, *more: str, extra_path: str | None = None):
    run_id = "replay-" + uuid.uuid4().hex[:8]
    trace = tmp_path / "real.jsonl"
    argv = ["replay", str(scenario), "--over-rabbitmq", "--amqp-url", amqp_url, "--run-id", run_id]
    argv += ["--trace", str(trace), "--logs", str(tmp_path / "logs"), *more]
    real = _mutexlab(*argv, extra_path=extra_path)
    _assert_gone(amqp_url, run_id)
    return real, trace


def _assert_gone(amqp_url: str, run_id: str) -> None:
    """Nothing of run ``run_id`` is left on the broker: no queue, no exchange."""
    topology = Topology(run_id)
    conn = pika.BlockingConnection(pika.URLParameters(amqp_url))
    try:
        left = []
        names = ["node-1", "node-2", "node-3", "bee-1", "bee-2", "director"]
        queues = [topology.queue(n) for n in names] + [topology.monitor_queue, topology.dead_queue]
        for queue in queues:
            channel = conn.channel()
            try:
                channel.queue_declare(queue, passive=True)
                left.append(queue)
                channel.close()
            except pika.exceptions.ChannelClosedByBroker:
                pass
        for exchange in (topology.exchange, topology.dlx, topology.unrouted):
            channel = conn.channel()
            try:
                channel.exchange_declare(exchange, passive=True)
                left.append(exchange)
                channel.close()
            except pika.exceptions.ChannelClosedByBroker:
                pass
    finally:
        conn.close()
    assert not left, f"left on the broker: {left}"


@pytest.mark.broker
@pytest.mark.slow
def test_the_tours_reorder_counterexample_reproduces_on_real_participants(amqp_url, tmp_path):
    counterexample = tmp_path / "reed.json"
    check = _mutexlab(
        "check", "bees", "--reorder", "--search", "bfs", "--counterexample", str(counterexample)
    )
    assert check.returncode == 1, check.stdout + check.stderr
    steps = json.loads(counterexample.read_text())["steps"]
    assert {"op": "overtake", "from": 2, "to": 1, "index": 1} in steps  # the reorder itself
    simulated = _mutexlab("replay", str(counterexample))
    assert simulated.returncode == 1, simulated.stdout + simulated.stderr
    assert "capacity" in _rules(simulated.stdout)

    real, trace = _over_rabbitmq(amqp_url, counterexample, tmp_path)
    assert real.returncode == 1, real.stdout + real.stderr
    assert "[capacity] reed:1 (capacity 1) held by bee-1 (1 unit" in real.stdout
    assert _rules(real.stdout) == _rules(simulated.stdout)
    assert "reproduces the simulator's outcome: yes" in real.stdout
    assert "6 of 6 steps played, 4 messages released by the director" in real.stdout
    assert _entered(real.stdout) == _entered(simulated.stdout) == "bee-1, bee-2"
    assert "DIVERGED" not in real.stdout
    # the monitor's trace of the real run: bee-1 took bee-2's ACK (bee-2#2) before its REQ (bee-2#1)
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    received = [e["id"] for e in events if e["event"] == "recv" and e["pid"] == "bee-1"]
    assert received == ["bee-2#2", "bee-2#1"]
    assert events[0]["transport"] == "rabbitmq"


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.parametrize("name", ["lamport-timestamps", "suzuki-kasami-notes"])
def test_a_correct_classic_scenario_replays_safe_with_the_simulators_enters(amqp_url, tmp_path, name):
    scenario = SCENARIOS / f"{name}.json"
    simulated = _mutexlab("replay", str(scenario))
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr
    real, trace = _over_rabbitmq(amqp_url, scenario, tmp_path)
    assert real.returncode == 0, real.stdout + real.stderr
    algorithm = json.loads(scenario.read_text())["algorithm"]
    assert f"{algorithm}: SAFE" in real.stdout
    assert "— complete" in real.stdout
    assert _entered(real.stdout) == _entered(simulated.stdout)
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert ", ".join(e["pid"] for e in events if e["event"] == "enter") == _entered(simulated.stdout)


@pytest.mark.broker
@pytest.mark.slow
def test_a_delivery_the_simulators_protocol_refuses_is_refused_by_the_real_one(amqp_url, tmp_path):
    scenario = tmp_path / "spurious.json"
    steps = [{"op": "deliver", "from": 1, "to": 2}]  # node-1's unasked REPLY to node-2, RELEASED
    algorithm = "mutexlab_broken.ricart_agrawala_spurious"
    scenario.write_text(json.dumps({"algorithm": algorithm, "processes": 2, "steps": steps}))
    simulated = _mutexlab("replay", str(scenario), "--algorithm", algorithm, extra_path=str(TESTS))
    assert simulated.returncode == 1 and "REFUSED: step 1 (deliver)" in simulated.stdout
    real, _ = _over_rabbitmq(amqp_url, scenario, tmp_path, "--algorithm", algorithm, extra_path=str(TESTS))
    assert real.returncode == 1, real.stdout + real.stderr
    assert "rejected input: node-2 rejected 1: REPLY node-1#1 from node-1" in real.stdout
    assert "1 of 1 steps played, 1 messages released by the director" in real.stdout
    assert "reproduces the simulator's outcome: yes (real run exit 1)" in real.stdout


@pytest.mark.broker
@pytest.mark.slow
def test_a_program_that_behaves_otherwise_when_directed_diverges_never_safe(amqp_url, tmp_path):
    scenario = tmp_path / "ra.json"
    steps = [
        {"op": "request", "pid": 1},
        {"op": "deliver", "from": 1, "to": 2},
        {"op": "deliver", "from": 2, "to": 1},
        {"op": "exit", "pid": 1},
        {"op": "drain"},
    ]
    algorithm = "mutexlab_broken.ricart_agrawala_directed_differs"
    scenario.write_text(json.dumps({"algorithm": algorithm, "processes": 2, "steps": steps}))
    simulated = _mutexlab("replay", str(scenario), "--algorithm", algorithm, extra_path=str(TESTS))
    assert simulated.returncode == 0, simulated.stdout + simulated.stderr  # the simulator sees it reply
    real, _ = _over_rabbitmq(
        amqp_url, scenario, tmp_path, "--step-timeout", "3", "--algorithm", algorithm, extra_path=str(TESTS)
    )
    assert real.returncode == 3, real.stdout + real.stderr
    assert "DIVERGED at step 2 (deliver): not done within 3s (node-2 recorded 1 of" in real.stdout
    assert "reproduces" not in real.stdout


def _counterexample(tmp_path: Path, name: str, *argv: str) -> Path:
    """``check mutex ARGV --counterexample``, which must find something (exit 1)."""
    counterexample = tmp_path / f"{name}.json"
    check = _mutexlab("check", "mutex", *argv, "--counterexample", str(counterexample), extra_path=str(TESTS))
    assert check.returncode == 1, check.stdout + check.stderr
    return counterexample


@pytest.mark.broker
@pytest.mark.slow
def test_a_duplicated_reply_lets_two_nodes_in_on_real_participants(amqp_url, tmp_path):
    algorithm = "mutexlab_broken.tolerant_ricart_agrawala"  # takes a stale REPLY for its next request
    argv = ["-a", algorithm, "-N", "2", "-M", "2", "--duplicate", "1", "--search", "bfs"]
    counterexample = _counterexample(tmp_path, "dup", *argv)
    steps = json.loads(counterexample.read_text())["steps"]
    assert {"op": "duplicate", "from": 2, "to": 1, "index": 0} in steps
    simulated = _mutexlab("replay", str(counterexample), "--algorithm", algorithm, extra_path=str(TESTS))
    assert simulated.returncode == 1 and "capacity" in _rules(simulated.stdout), simulated.stdout

    real, trace = _over_rabbitmq(
        amqp_url, counterexample, tmp_path, "--algorithm", algorithm, extra_path=str(TESTS)
    )
    assert real.returncode == 1, real.stdout + real.stderr
    assert "[capacity] cs (capacity 1) held by node-2 (1 unit" in real.stdout
    assert _rules(real.stdout) == _rules(simulated.stdout)
    assert "reproduces the simulator's outcome: yes" in real.stdout
    assert f"{len(steps)} of {len(steps)} steps played, 5 messages released by the director" in real.stdout
    assert _entered(real.stdout) == _entered(simulated.stdout) == "node-1, node-2, node-1"
    # the real node-1 took node-2's REPLY twice: the copy the director released, then the message
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    replies = [
        (e["id"], e.get("copy"))
        for e in events
        if e["event"] == "recv" and e["pid"] == "node-1" and e["type"] == "REPLY"
    ]
    # the copy says so, as the simulator's; both receipts are deliveries the header declares
    assert replies == [("node-2#2", True), ("node-2#2", None)]
    assert events[0]["duplicates"] is True
    assert "recv-without-send" not in real.stdout + simulated.stdout


@pytest.mark.broker
@pytest.mark.slow
def test_a_duplicated_token_is_rejected_by_the_real_participant(amqp_url, tmp_path):
    argv = ["-a", "suzuki-kasami", "-N", "2", "--duplicate", "1", "--search", "bfs"]
    counterexample = _counterexample(tmp_path, "token", *argv)
    simulated = _mutexlab("replay", str(counterexample))
    assert simulated.returncode == 1 and "REFUSED: step 4 (deliver)" in simulated.stdout
    real, _ = _over_rabbitmq(amqp_url, counterexample, tmp_path)
    assert real.returncode == 1, real.stdout + real.stderr
    assert "rejected input: node-2 rejected 1: TOKEN node-1#1 from node-1" in real.stdout
    assert "holds the token already" in real.stdout
    assert "4 of 4 steps played, 3 messages released by the director" in real.stdout
    assert "reproduces the simulator's outcome: yes (real run exit 1" in real.stdout


@pytest.mark.broker
@pytest.mark.slow
def test_a_starvation_lasso_plays_its_cycle_on_real_participants(amqp_url, tmp_path):
    algorithm = "mutexlab_broken.starving"
    counterexample = _counterexample(tmp_path, "lasso", "-a", algorithm, "-N", "2")
    scenario = json.loads(counterexample.read_text())
    stem, cycle = scenario["loop"], len(scenario["steps"]) - scenario["loop"]
    assert (stem, cycle) == (11, 4)
    simulated = _mutexlab("replay", str(counterexample), "--algorithm", algorithm, extra_path=str(TESTS))
    assert simulated.returncode == 1 and "LIVENESS: the last 4 steps" in simulated.stdout

    real, trace = _over_rabbitmq(
        amqp_url, counterexample, tmp_path, "--algorithm", algorithm, extra_path=str(TESTS)
    )
    assert real.returncode == 1, real.stdout + real.stderr
    assert "simulator: LIVENESS: the last 4 steps return to the world where they began" in real.stdout
    assert "23 of 23 steps played (a stem of 11 steps, then the 4-step cycle 3 times)" in real.stdout
    assert (
        "LIVENESS, as in the simulator: the cycle played 3 times on the real participants with no "
        "entry of node-2, waiting throughout" in real.stdout
    )
    assert "reproduces the simulator's outcome: yes (real run exit 1" in real.stdout
    assert "DIVERGED" not in real.stdout
    assert _entered(real.stdout) == ", ".join(["node-1"] * 5)  # 2 in the stem, 1 in each round
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e["state"] for e in events if e["event"] == "state" and e["pid"] == "node-2"] == ["WANTED"]
    assert not [e for e in events if e["event"] == "enter" and e["pid"] == "node-2"]


@pytest.mark.broker
@pytest.mark.slow
def test_a_closed_loop_nobody_waits_in_is_no_liveness_finding_over_rabbitmq(amqp_url, tmp_path):
    algorithm = "mutexlab_broken.starving"
    scenario = tmp_path / "quiet.json"
    steps = [
        {"op": "request", "pid": 1},
        {"op": "deliver", "from": 1, "to": 2},
        {"op": "deliver", "from": 2, "to": 1},
        {"op": "exit", "pid": 1},
        {"op": "request", "pid": 1},
    ]
    scenario.write_text(json.dumps({"algorithm": algorithm, "processes": 2, "steps": steps, "loop": 1}))
    simulated = _mutexlab("replay", str(scenario), "--algorithm", algorithm, extra_path=str(TESTS))
    assert "nobody waits throughout" in simulated.stdout and simulated.returncode == 3, simulated.stdout
    real, _ = _over_rabbitmq(
        amqp_url, scenario, tmp_path, "--rounds", "2", "--algorithm", algorithm, extra_path=str(TESTS)
    )
    assert "9 of 9 steps played (a stem of 1 step, then the 4-step cycle 2 times)" in real.stdout
    assert "LIVENESS" not in real.stdout
    assert real.returncode == 3, real.stdout + real.stderr  # as the simulator: stalled, no finding
    assert _entered(real.stdout) == "node-1, node-1"


def test_a_loop_that_does_not_return_where_it_began_is_refused_up_front(tmp_path):
    scenario = tmp_path / "open.json"
    steps = [{"op": "request", "pid": 1}, {"op": "deliver", "from": 1, "to": 2}]
    scenario.write_text(
        json.dumps({"algorithm": "ricart-agrawala", "processes": 2, "steps": steps, "loop": 0})
    )
    simulated = _mutexlab("replay", str(scenario))
    assert simulated.returncode == 2, simulated.stdout + simulated.stderr
    real = _mutexlab("replay", str(scenario), "--over-rabbitmq", "--amqp-url", "amqp://127.0.0.1:1/%2F")
    assert real.returncode == 2, real.stdout + real.stderr
    assert "loop does not return to the world where it began: it is not a cycle" in real.stderr
    assert real.stderr.count("\n") == 1


@pytest.mark.parametrize("value", ["0", "-1", "two", "1001"])
def test_rounds_is_a_whole_number_from_1_to_1000(value):
    scenario = SCENARIOS / "lamport-timestamps.json"
    real = _mutexlab(
        "replay", str(scenario), "--over-rabbitmq", "--amqp-url", "amqp://127.0.0.1:1/%2F", "--rounds", value
    )
    assert real.returncode == 2 and "argument --rounds:" in real.stderr, real.stdout + real.stderr
    assert "Traceback" not in real.stderr


@pytest.mark.parametrize("value", ["1", "3"])  # 3: the default, given all the same
def test_rounds_for_a_scenario_without_a_loop_is_refused_up_front(value):
    """--rounds would be ignored (nothing to repeat): refused before any broker is asked."""
    scenario = SCENARIOS / "lamport-timestamps.json"
    assert "loop" not in json.loads(scenario.read_text())
    real = _mutexlab(
        "replay", str(scenario), "--over-rabbitmq", "--amqp-url", "amqp://127.0.0.1:1/%2F", "--rounds", value
    )
    assert real.returncode == 2, real.stdout + real.stderr
    assert real.stderr == (
        "mutexlab: error: --rounds applies to a scenario with a loop; this one has none\n"
    ), real.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "1e300", "0"])
@pytest.mark.parametrize("flag", ["--step-timeout", "--stall-timeout"])
def test_a_timeout_that_is_no_finite_positive_time_is_refused_up_front(flag, value):
    scenario = SCENARIOS / "lamport-timestamps.json"
    real = _mutexlab(
        "replay", str(scenario), "--over-rabbitmq", "--amqp-url", "amqp://127.0.0.1:1/%2F", flag, value
    )
    assert real.returncode == 2 and f"argument {flag}:" in real.stderr, real.stdout + real.stderr
    assert "Traceback" not in real.stderr


def test_a_broker_flag_without_over_rabbitmq_is_refused_not_ignored():
    """A replay in the simulator has no broker, steps or rounds to time: such a flag is an error."""
    scenario = SCENARIOS / "lamport-timestamps.json"
    alone = _mutexlab("replay", str(scenario), "--stall-timeout", "3")
    assert alone.returncode == 2, alone.stdout + alone.stderr
    assert alone.stderr == "mutexlab: error: --stall-timeout applies only with --over-rabbitmq\n"
    several = _mutexlab("replay", str(scenario), "--rounds", "2", "--logs", "x", "--amqp-url", "amqp://h")
    assert several.returncode == 2 and several.stdout == "", several.stdout + several.stderr
    assert several.stderr == "mutexlab: error: --amqp-url, --logs, --rounds apply only with --over-rabbitmq\n"


def _director(name: str | dict):
    """A director for an example scenario (or a scenario's JSON), not connected (what it makes of
    trace batches)."""
    from mutexlab.sim.scripted import load_scenario, replay_scenario
    from mutexlab.transport.directed import Director
    from mutexlab.transport.script import compile_script
    from mutexlab.transport.supervisor import Plan

    scenario = load_scenario(name if isinstance(name, dict) else SCENARIOS / f"{name}.json")
    result = replay_scenario(scenario)
    plan = Plan(scenario.algorithm, scenario.processes, scenario.options, amqp_url="amqp://127.0.0.1:1/%2F")
    script = compile_script(scenario, result)
    director = Director(plan, dict(result.setup.names), list(result.setup.codec.types), script)
    return director, [e for e in result.events if e["event"] != "run"]


def test_the_director_follows_the_simulators_events_and_drops_a_redelivered_batch():
    director, events = _director("lamport-timestamps")
    first = [e for e in events if e["pid"] == "node-1"][:2]
    director.record("node-1", {"events": first})
    director.record("node-1", {"events": first})  # the same batch again: taken once
    assert director.events["node-1"] == first


def test_the_director_names_the_step_where_a_process_records_something_else():
    from mutexlab.transport.directed import Diverged

    director, events = _director("lamport-timestamps")
    wrong = dict(next(e for e in events if e["pid"] == "node-1"), event="enter", resource="cs")
    with pytest.raises(
        Diverged,
        match=r"^diverged at step 1: node-1 recorded enter resource=cs where the simulator recorded request resource=cs$",
    ):
        director.record("node-1", {"events": [wrong]})


@pytest.mark.parametrize("duplicated", [True, False])
def test_the_monitor_declares_duplicates_for_a_scenario_with_duplicate_steps(
    tmp_path, monkeypatch, duplicated
):
    from mutexlab.cli import main
    from mutexlab.commands import replay_rabbit

    steps = [{"op": "request", "pid": 1}, {"op": "deliver", "from": 1, "to": 2}]
    if duplicated:
        steps.insert(1, {"op": "duplicate", "from": 1, "to": 2})
    scenario = tmp_path / "s.json"
    scenario.write_text(json.dumps({"algorithm": "ricart-agrawala", "processes": 2, "steps": steps}))
    plans = []

    def direct(plan, *_):
        plans.append(plan)
        raise SystemExit(0)  # no broker: the plan is what this test reads

    monkeypatch.setattr(replay_rabbit, "broker_problem", lambda url: None)
    monkeypatch.setattr(replay_rabbit, "direct", direct)
    with pytest.raises(SystemExit):
        main(["replay", str(scenario), "--over-rabbitmq"])
    assert [p.duplicates for p in plans] == [duplicated]


def test_a_duplicate_releases_a_copy_renumbered_and_keeps_the_message_held():
    steps = [
        {"op": "request", "pid": 1},
        {"op": "duplicate", "from": 1, "to": 2},
        {"op": "deliver", "from": 1, "to": 2},
    ]
    director, _ = _director({"algorithm": "ricart-agrawala", "processes": 2, "steps": steps})
    kinds = [(a.kind, a.keep, a.msg_id) for a in director.script.actions]
    assert kinds == [
        ("start", False, None),
        ("request", False, None),
        ("duplicate", True, "node-1#1"),
        ("deliver", False, "node-1#1"),
    ]
    published: list[tuple[str, dict]] = []
    director.bus.publish = lambda key, body, **_: published.append((key, body))  # type: ignore[method-assign]
    request = {"type": "REQUEST", "sender": 1, "ts": 1}
    director.held[(1, 2)] = [
        {"id": "node-1#1", "from": "node-1", "seq": 1, "vc": {"node-1": 2}, "msg": request}
    ]
    duplicate, deliver = director.script.actions[2:]
    director._release(duplicate)  # noqa: SLF001
    assert [e["id"] for e in director.held[(1, 2)]] == ["node-1#1"]  # still held: it may come again
    director._release(deliver)  # noqa: SLF001
    assert director.held[(1, 2)] == []
    # the same message twice, each the next of its link for the receiver's inbox
    assert [(k, b["id"], b["seq"], b["msg"]) for k, b in published] == [
        ("release.node-2", "node-1#1", 1, request),
        ("release.node-2", "node-1#1", 2, request),
    ]
    assert director.out.released == 2


def test_a_loop_is_played_unrolled_against_the_simulators_replay_of_every_round():
    from mutexlab.sim.scripted import load_scenario, replay_scenario
    from mutexlab.transport.script import compile_script, unroll

    cycle = [
        {"op": "deliver", "from": 1, "to": 2},
        {"op": "deliver", "from": 2, "to": 1},
        {"op": "exit", "pid": 1},
        {"op": "request", "pid": 1},
    ]
    source = {
        "algorithm": "ricart-agrawala",
        "processes": 2,
        "steps": [{"op": "request", "pid": 1}, *cycle],
        "loop": 1,
    }
    played, cycle_from = unroll(load_scenario(source), 3)
    assert cycle_from == 2 and played.loop is None
    assert [s.model_dump(by_alias=True) for s in played.steps] == [{"op": "request", "pid": 1}, *cycle * 3]
    script = compile_script(played, replay_scenario(played))
    assert [a.step for a in script.actions] == list(range(14))
    # every round's requests and replies are new messages: the simulator's ids, round by round
    delivered = [a.msg_id for a in script.actions if a.kind == "deliver"]
    assert delivered == ["node-1#1", "node-2#1", "node-1#2", "node-2#2", "node-1#3", "node-2#3"]


def test_a_starvation_is_shown_only_when_no_waiting_process_enters_in_the_rounds():
    from types import SimpleNamespace

    from mutexlab.commands.replay_rabbit import starvation_shown
    from mutexlab.transport.directed import Directed

    loop = {"steps": 4, "closes": True, "waiting": ["node-2"], "unfair": []}
    starving = SimpleNamespace(loop=loop)
    stem = ["node-1", "node-1"]
    played = Directed(entered=[*stem, "node-1", "node-1", "node-1"], stem_entered=2)
    assert starvation_shown(starving, played) == ["node-2"]  # type: ignore[arg-type]
    # node-2 entering in a round: the real run did not starve it, whatever the simulator found
    entered = Directed(entered=[*stem, "node-1", "node-2", "node-1"], stem_entered=2)
    assert starvation_shown(starving, entered) == []  # type: ignore[arg-type]
    # node-2 entering in the stem only: still starved in every round
    before = Directed(entered=["node-2", "node-1", "node-1"], stem_entered=1)
    assert starvation_shown(starving, before) == ["node-2"]  # type: ignore[arg-type]
    # the rounds never reached, or left: nothing shown
    assert starvation_shown(starving, Directed(entered=stem)) == []  # type: ignore[arg-type]
    left = Directed(diverged="diverged at step 14: …", entered=stem, stem_entered=2)
    assert starvation_shown(starving, left) == []  # type: ignore[arg-type]
    # no starvation in the simulator: an unfair loop, one that does not close, nobody waiting
    for change in ({"unfair": ["node-1 request"]}, {"closes": False}, {"waiting": []}):
        other = SimpleNamespace(loop=dict(loop, **change))
        assert starvation_shown(other, played) == []  # type: ignore[arg-type]
    assert starvation_shown(SimpleNamespace(loop=None), played) == []  # type: ignore[arg-type]
