"""Runs over a three-node RabbitMQ cluster (docs/cluster.md).

The module's fixture starts a private cluster with ``scripts/cluster.sh`` (own node names,
random ports, its own directory and Erlang cookie; never the machine's broker on 5672) and stops
it at the end. If it cannot start, the tests skip with the reason — except under CI (``CI`` set),
where that is a failure.

What must hold, with the run's queues declared as quorum queues (three URLs given):

* bees (P = 6) and Ricart–Agrawala (N = 5), their processes spread over the three nodes,
  complete SAFE;
* a node stopped gracefully mid-run, and separately one SIGKILLed: every process connected to it
  fails over to another node, the run completes, the audit passes, every message sent is
  received exactly once (nothing lost, nothing applied twice) and nothing is dead-lettered. The
  redeliveries, duplicates dropped and messages held back until a missing one of their link came
  (a queue can hand unacked deliveries back behind newer ones) are printed; the bus-level test forces
  both (a delivery handled but not acked when its node goes away comes back redelivered from the
  queue's new leader and is dropped by its sequence number) and asserts them exactly.
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from conftest import missing

from mutexlab.bus.inbox import LinkInbox
from mutexlab.bus.rabbit import Bus
from mutexlab.bus.topology import Topology
from mutexlab.cli import main as cli
from mutexlab.transport.supervisor import Plan, execute

pytestmark = [pytest.mark.broker, pytest.mark.slow]

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "cluster.sh"
CONNECTED = re.compile(r"connected to (127\.0\.0\.1:\d+)")


def _unavailable(reason: str):
    missing(f"cannot start a private RabbitMQ cluster: {reason}")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Cluster:
    """The private cluster of this module: ``script(...)`` runs scripts/cluster.sh against it."""

    def __init__(self) -> None:
        for _ in range(50):  # three AMQP ports and three distribution ports (+20000), all free
            base = random.randrange(21000, 24900)
            if all(_free(p) for n in range(3) for p in (base + n, base + 20000 + n)):
                break
        else:
            raise OSError("no free ports")
        self.base = base
        self.dir = tempfile.mkdtemp(prefix="mutexlab-cluster-test-")
        os.rmdir(self.dir)  # the script makes it (and refuses an existing cluster directory)
        self.env = dict(
            os.environ,
            MUTEXLAB_CLUSTER_NAME=f"mlt{os.getpid()}{uuid.uuid4().hex[:4]}",
            MUTEXLAB_CLUSTER_PORT=str(base),
            MUTEXLAB_CLUSTER_DIR=self.dir,
        )
        self.nodes = [f"127.0.0.1:{base + n}" for n in range(3)]
        self.url = ",".join(f"amqp://{node}/%2F" for node in self.nodes)

    def script(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", str(SCRIPT), *args], env=self.env, capture_output=True, text=True, timeout=timeout
        )

    def number(self, node: str) -> str:
        return str(self.nodes.index(node) + 1)


@pytest.fixture(scope="module")
def cluster():
    for tool in ("rabbitmq-server", "rabbitmqctl", "bash"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is not installed")
    failed: list[str] = []
    for _ in range(2):  # a second try on fresh ports and names: a start once failed under heavy load
        try:
            cluster = Cluster()
        except OSError as exc:
            _unavailable(str(exc))
        try:
            started = cluster.script("start")
        except subprocess.TimeoutExpired:
            cluster.script("stop")
            failed.append("scripts/cluster.sh start did not finish within 300s")
            continue
        if started.returncode == 0:
            break
        cluster.script("stop")
        failed.append(f"scripts/cluster.sh start exited {started.returncode}: {started.stderr[-2000:]}")
    else:
        _unavailable("; then, again: ".join(failed))
    if failed:
        print(f"the cluster started at the second try; the first: {failed[0]}", file=sys.stderr)
    yield cluster
    cluster.script("stop")


@pytest.fixture
def whole(cluster):
    """The cluster, with every node started again after the test (a test may stop one)."""
    yield cluster
    for n in ("1", "2", "3"):
        started = cluster.script("start-node", n)  # a running node is left alone
        assert started.returncode == 0, started.stderr
    status = cluster.script("status")
    assert status.returncode == 0, f"the cluster did not come back whole:\n{status.stdout}{status.stderr}"


def _plan(cluster: Cluster, tmp_path: Path, algorithm: str, processes: int, options: dict, **kw) -> Plan:
    return Plan(
        algorithm,
        processes,
        options,
        seed=3,
        amqp_url=cluster.url,
        dwell=kw.pop("dwell", 0.05),
        stall_timeout=kw.pop("stall_timeout", 40),
        join_timeout=120,
        trace=str(tmp_path / f"{algorithm}.jsonl"),
        logs=str(tmp_path / "logs"),
        **kw,
    )


def _nodes_used(logs: Path) -> dict[str, str]:
    """Process log → the node it first connected to."""
    used = {}
    for path in logs.glob("*.log"):
        match = CONNECTED.search(path.read_text())
        if match:
            used[path.stem] = match.group(1)
    return used


def _exactly_once(trace: str) -> None:
    events = [json.loads(line) for line in Path(trace).read_text().splitlines()[1:]]
    sends = Counter(e["id"] for e in events if e["event"] == "send")
    recvs = Counter(e["id"] for e in events if e["event"] == "recv")
    assert sends == recvs and set(recvs.values()) == {1}, "each message sent is received exactly once"


def test_bees_and_ricart_agrawala_spread_over_the_three_nodes_complete_safe(cluster, tmp_path):
    used: dict[str, str] = {}
    for algorithm, processes, options in (
        ("bees", 6, {"flowers": 2, "reeds": 2}),
        ("ricart-agrawala", 5, {"requests": 3}),
    ):
        plan = _plan(cluster, tmp_path / algorithm, algorithm, processes, options)
        (tmp_path / algorithm).mkdir()
        out = io.StringIO()
        code = execute(plan, json_out=True, out=out)
        summary = json.loads(out.getvalue())
        assert code == 0 and summary["complete"] and summary["safe"], summary
        _exactly_once(plan.trace)
        assert cli(["verify", plan.trace]) == 0
        for name, node in _nodes_used(Path(plan.logs)).items():
            used[f"{algorithm}/{name}"] = node
        text = (Path(plan.logs) / "monitor.log").read_text()
        assert "(quorum queues)" in text, "three URLs given: the run's queues are quorum queues"
    print(f"\nnodes used: {Counter(used.values())}")
    assert len(used) == 6 + 5 + 2, used  # every process (and both monitors) said where it connected
    # Each process starts at a random node: all 13 on one node has probability 3 / 3**13.
    assert len(set(used.values())) >= 2, f"the processes did not spread over the nodes: {used}"


def test_quorum_queues_have_a_member_on_every_node(cluster):
    topology = Topology("t-" + uuid.uuid4().hex[:8], "quorum")
    bus = Bus(cluster.url, topology, connect_timeout=60)
    bus.connect()
    try:
        queue = topology.declare_participant(bus.channel, "node-1", ["REQUEST"])
        done = subprocess.run(
            ["rabbitmq-queues", "--erlang-cookie", Path(cluster.dir, "cookie").read_text().strip()]
            + ["-n", f"{cluster.env['MUTEXLAB_CLUSTER_NAME']}-c1@localhost", "quorum_status", queue],
            env=cluster.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        members = set(re.findall(r"-c(\d)@localhost", done.stdout))
        assert members == {"1", "2", "3"}, done.stdout
        topology.delete(bus.channel, ["node-1"])
    finally:
        bus.close()


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_a_handled_but_unacked_delivery_comes_back_from_another_node(whole, handled_not_acked, how):
    """Forced: the consumer's node (which also leads the queue: it was declared there) goes away
    between handling and ack. The bus fails over to another node, the queue's new leader
    redelivers the message, flagged, and the link's sequence number drops it; a confirmed message
    queued behind it survives too."""
    cluster = whole
    topology = Topology("t-" + uuid.uuid4().hex[:8], "quorum")
    bus = Bus(cluster.url, topology, connect_timeout=60, first_node=0)
    bus.connect()
    try:
        assert bus.node == cluster.nodes[0]
        inbox = LinkInbox()
        first = handled_not_acked(bus, topology, inbox)  # both messages confirmed by a majority
        gone = cluster.script(f"{how}-node", "1")
        assert gone.returncode == 0, gone.stderr
        bus.ack(first)  # ... and the ack is lost with the connection
        handled, copies = [1], []
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and not (
            handled == [1, 2] and any(seq == 1 and d.redelivered for d, seq in copies)
        ):
            for delivery in bus.poll(0.5):
                seq = json.loads(delivery.body)["seq"]
                copies.append((delivery, seq))
                if inbox.accept("node-1", seq):
                    handled.append(seq)
                bus.ack(delivery)
        print(
            f"\nnode {how}: failover to {bus.node}, reconnects {bus.reconnects}, redelivered {bus.redelivered}, "
            f"duplicates dropped {inbox.duplicates}, deliveries after the first "
            f"{[(seq, 'redelivered' if d.redelivered else 'new', d.generation) for d, seq in copies]}"
        )
        assert bus.reconnects >= 1 and bus.node != cluster.nodes[0]
        assert handled == [1, 2], "nothing lost, nothing applied twice, in order"
        # 1 was handled and never acked: it comes back, flagged, from the queue's new leader. (2 may
        # have been delivered before the node went, then it comes back too.)
        assert any(seq == 1 and d.redelivered for d, seq in copies), "the unacked delivery came back"
        assert 1 <= bus.redelivered <= 2
        assert inbox.duplicates == len(copies) - 1 and inbox.gaps == 0, "every extra copy dropped"
        topology.delete(bus.channel, ["node-2"])
    finally:
        bus.close()


def _run_queues_left(cluster: Cluster, plan: Plan) -> list[str]:
    """The run's queues the cluster still lists (asked of any running node)."""
    for n in ("1", "2", "3"):
        listed = subprocess.run(
            ["rabbitmqctl", "--erlang-cookie", Path(cluster.dir, "cookie").read_text().strip()]
            + ["-n", f"{cluster.env['MUTEXLAB_CLUSTER_NAME']}-c{n}@localhost", "-q", "list_queues", "name"],
            env=cluster.env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        if listed.returncode == 0:
            return [q for q in listed.stdout.split() if q.startswith(f"mutexlab.{plan.run_id}.")]
    raise AssertionError(f"no node answered list_queues: {listed.stderr}")


def _connected_logs(logs: Path) -> dict[str, str]:
    return {name: node for name, node in _nodes_used(logs).items() if name != "monitor"}


@pytest.mark.parametrize("how", ["stop", "kill"])
def test_bees_fail_over_when_a_node_goes_away_mid_run(whole, tmp_path, how):
    cluster = whole
    plan = _plan(cluster, tmp_path, "bees", 6, {"flowers": 2, "reeds": 2}, dwell=0.15, stall_timeout=60)
    out = io.StringIO()
    result: dict = {}

    def run() -> None:
        result["code"] = execute(plan, True, out)
        result["returned"] = time.time()

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    logs = Path(plan.logs)
    deadline = time.monotonic() + 120
    working: list[Path] = []
    while time.monotonic() < deadline and len(working) < 6:  # every bee admitted and past its first state
        working = [p for p in logs.glob("bee*.log") if re.search(r"bee-\d+ state ", p.read_text())]
        time.sleep(0.1)
    assert len(working) == 6, "the bees never got going"
    where = _nodes_used(logs)
    # The node most processes (the monitor included) are connected to goes away.
    victim, moved = Counter(where.values()).most_common(1)[0]
    on_victim = sorted(name for name, node in where.items() if node == victim)
    gone_at = time.monotonic()
    gone = cluster.script(f"{how}-node", cluster.number(victim))
    assert gone.returncode == 0, gone.stderr
    worker.join(timeout=300)
    assert not worker.is_alive(), "the run did not end"
    summary = json.loads(out.getvalue())
    monitor_log = (logs / "monitor.log").read_text()
    failovers = {}
    # a log is <role>.<pid>.log while the run goes on, <name>.log after it (supervisor.name_logs)
    renamed = {f"{name.split('-')[0]}.{pid}": name for name, pid in summary["os_pids"].items()}
    for name in on_victim:
        text = (logs / f"{renamed.get(name, name)}.log").read_text()
        match = re.search(
            r"reconnected \(reconnect #1\) to (\S+) \(failover from "
            + re.escape(victim)
            + r"\) in ([\d.]+)s",
            text,
        )
        assert match, f"{name} was on {victim} and did not fail over:\n{text[-2000:]}"
        assert match.group(1) != victim
        failovers[name] = float(match.group(2))
    # The end: the run decided (summary), then the stop, the final statuses, the clean-up and the
    # reaping. Each quorum queue's deletion waits RabbitMQ's 5 s for its member on the lost node:
    # one after another the 8 queues took 40 s; deleted concurrently, about 5 s.
    end = result["returned"] - (summary["started"] + summary["duration"])
    cleanup = re.search(r"monitor: the run's exchanges and queues deleted in ([\d.]+)s", monitor_log)
    took = float(cleanup.group(1)) if cleanup else None
    # A message that came ahead of a missing one of its link (handed back behind newer ones, or
    # re-sent after a nack) waited for it: counted, not an error.
    held = sum(p.read_text().count("held back until it comes") for p in logs.glob("*.log"))
    print(
        f"\nnode {victim} {'stopped' if how == 'stop' else 'killed'} (the run's end, cleanup included, "
        f"{time.monotonic() - gone_at:.1f}s later); processes on it: {on_victim}; "
        f"failover (reconnect) seconds {failovers}; reconnects {summary['reconnects']}, "
        f"redelivered {summary['redelivered']}, duplicates dropped {summary['duplicates']}, "
        f"dead-lettered {summary['dead_letters']}, held back until a missing one came {held}, "
        f"{summary['duration']}s; the end {end:.1f}s (clean-up {took}s)"
    )
    assert result["code"] == 0 and summary["complete"] and summary["safe"], summary
    assert took is not None, f"the monitor did not delete the run's queues:\n{monitor_log[-2000:]}"
    # one after another the 8 deletions cannot take less than 40 s (5 s each): below 35 s they
    # overlapped, whatever the machine's load adds (the end, printed above, moves with the load)
    assert took < 35, f"clean-up {took}s, the end {end:.1f}s: the deletions waited in turn"
    assert not _run_queues_left(cluster, plan), "the run's queues are removed"
    assert summary["reconnects"] >= moved
    assert summary["dead_letters"] == 0, summary["dead_letters"]
    # Nothing lost, nothing applied twice: each send received once; every bee laid its eggs and died.
    _exactly_once(plan.trace)
    assert summary["notes"]["egg"] == 30 and set(summary["states"].values()) == {"DEAD"}
    assert cli(["verify", plan.trace]) == 0
