"""``mutexlab replay SCENARIO --over-rabbitmq``: a scenario played by real participant processes over
RabbitMQ, the director holding every message (transport/directed.py, docs/rabbitmq.md#directed-replay).

* the reorder counterexample of docs/tour.md (``check bees --reorder --search bfs``) reproduces:
  the same broken rules as the simulator's replay, exit 1, and the real trace shows the overtake
  (bee-1 receives bee-2's ACK before bee-2's older REQ);
* correct classic scenarios replay SAFE, exit 0, with the simulator's sequence of enters;
* a delivery the simulator's protocol refuses is rejected by the real participant: exit 1;
* a program that behaves differently when directed (a broken variant) is "diverged at step N",
  exit 3, never SAFE;
* what cannot be replayed over RabbitMQ (a ``duplicate`` step) is refused up front, exit 2;
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

from mutexlab.transport.topology import Topology

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


def test_a_duplicate_step_is_refused_up_front(tmp_path):
    scenario = tmp_path / "dup.json"
    steps = [{"op": "request", "pid": 1}, {"op": "duplicate", "from": 1, "to": 2}, {"op": "drain"}]
    scenario.write_text(json.dumps({"algorithm": "ricart-agrawala", "processes": 2, "steps": steps}))
    real = _mutexlab("replay", str(scenario), "--over-rabbitmq", "--amqp-url", "amqp://127.0.0.1:1/%2F")
    assert real.returncode == 2, real.stdout + real.stderr
    assert "step 2 (duplicate): not replayed over RabbitMQ" in real.stderr
    assert real.stderr.count("\n") == 1


@pytest.mark.parametrize("value", ["nan", "inf", "1e300", "0"])
@pytest.mark.parametrize("flag", ["--step-timeout", "--stall-timeout"])
def test_a_timeout_that_is_no_finite_positive_time_is_refused_up_front(flag, value):
    scenario = SCENARIOS / "lamport-timestamps.json"
    real = _mutexlab(
        "replay", str(scenario), "--over-rabbitmq", "--amqp-url", "amqp://127.0.0.1:1/%2F", flag, value
    )
    assert real.returncode == 2 and f"argument {flag}:" in real.stderr, real.stdout + real.stderr
    assert "Traceback" not in real.stderr


def _director(name: str):
    """A director for an example scenario, not connected (what it makes of trace batches)."""
    from mutexlab.sim.scripted import load_scenario, replay_scenario
    from mutexlab.transport.directed import Director
    from mutexlab.transport.script import compile_script
    from mutexlab.transport.supervisor import Plan

    scenario = load_scenario(SCENARIOS / f"{name}.json")
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
