"""A broker restart mid-run, on a PRIVATE RabbitMQ node, never the shared one.

The fixture starts its own node (own name, AMQP and distribution ports, data and log
directories, no plugins) so that ``rabbitmqctl stop_app`` cannot disturb the shared broker other
tests use concurrently; it shuts the node down and removes its files at teardown. If no private
node can be started the tests skip with the exact reason — except under CI (``CI`` set), where
that is a failure.

What must hold through ``stop_app`` … ``start_app`` while the bees work: every service
reconnects, no protocol message is lost or applied twice (every send has exactly one recv in
the trace), the run completes, the audit passes. The redelivered and duplicate counts are
printed; they are asserted > 0 where the test forces them (a delivery handled but not acked
when the broker stops comes back redelivered and is dropped as a duplicate).
"""

from __future__ import annotations

import io
import json
import os
import pwd
import random
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

import pytest
from conftest import RunTap, missing

from mutexlab.bus.inbox import LinkInbox
from mutexlab.bus.rabbit import Bus
from mutexlab.bus.topology import Topology
from mutexlab.cli import main as cli
from mutexlab.transport.membership import role_of
from mutexlab.transport.supervisor import Plan, execute, service_command

pytestmark = pytest.mark.broker


def _unavailable(reason: str):
    missing(f"cannot start a private RabbitMQ node: {reason}")


def _free_port() -> int:
    """A free port picked at random below the ephemeral range. Not a fixed one (5673): while a
    test has stopped its node's application the port is free, and a concurrent session's node
    taking it makes ``start_app`` fail with ``eaddrinuse``."""
    for port in [*random.sample(range(20000, 32000), 20), 0]:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return s.getsockname()[1]
    raise OSError("no free port")


class PrivateNode:
    """One RabbitMQ node of our own: ``ctl(...)`` runs rabbitmqctl against it."""

    def __init__(self) -> None:
        self.name = f"mutexlab-faults-{os.getpid()}-{uuid.uuid4().hex[:4]}@localhost"
        self.port = _free_port()
        self.dist_port = _free_port()
        self.url = f"amqp://127.0.0.1:{self.port}/%2F"  # pika's defaults: guest, from localhost only
        # rabbitmq-server drops to the 'rabbitmq' user when started by root: the directory must be its own
        # (pytest's tmp_path is private to root).
        self.base = Path(tempfile.mkdtemp(prefix="mutexlab-faults-node-"))
        (self.base / "enabled_plugins").write_text("[].\n")
        (self.base / "rabbitmq.conf").write_text(f"listeners.tcp.local = 127.0.0.1:{self.port}\n")
        self.env = dict(
            os.environ,
            RABBITMQ_NODENAME=self.name,
            RABBITMQ_NODE_PORT=str(self.port),
            RABBITMQ_DIST_PORT=str(self.dist_port),
            RABBITMQ_CONFIG_FILE=str(self.base / "rabbitmq.conf"),
            RABBITMQ_MNESIA_BASE=str(self.base / "mnesia"),
            RABBITMQ_LOG_BASE=str(self.base / "log"),
            RABBITMQ_ENABLED_PLUGINS_FILE=str(self.base / "enabled_plugins"),
            RABBITMQ_PID_FILE=str(self.base / "node.pid"),
        )
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("rabbitmq")
            except KeyError:
                user = None
            if user is not None:
                for path in [self.base, *self.base.iterdir()]:
                    os.chown(path, user.pw_uid, user.pw_gid)

    def ctl(self, *args: str, timeout: float = 90) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["rabbitmqctl", "-n", self.name, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def start(self) -> None:
        done = subprocess.run(
            ["rabbitmq-server", "-detached"], env=self.env, capture_output=True, text=True, timeout=60
        )
        if done.returncode != 0:
            raise RuntimeError(f"rabbitmq-server -detached exited {done.returncode}: {done.stderr.strip()}")
        # await_startup fails at once while the node has not registered with epmd yet: retry.
        deadline = time.monotonic() + 120
        last = None
        while time.monotonic() < deadline:
            last = self.ctl("await_startup", "--timeout", "30")
            if last.returncode == 0:
                return
            time.sleep(1)
        logs = (
            "\n".join(p.read_text(errors="replace")[-1500:] for p in (self.base / "log").glob("*.log"))
            if (self.base / "log").is_dir()
            else ""
        )
        raise RuntimeError(f"node {self.name} did not start: {last.stderr.strip()[-800:]}\n{logs}")

    def restart_app(self, down: float = 2.0) -> None:
        for args in (("stop_app",), ("start_app",)):
            done = self.ctl(*args)
            assert done.returncode == 0, f"rabbitmqctl {args[0]}: {done.stderr}"
            if args[0] == "stop_app":
                time.sleep(down)

    def stop(self) -> None:
        try:
            stopped = self.ctl("shutdown", timeout=60).returncode == 0
        except subprocess.TimeoutExpired:
            stopped = False
        pid_file = self.base / "node.pid"
        if not stopped and pid_file.exists():  # shutdown failed: end the node we started, by its own pid
            try:
                pid = int(pid_file.read_text().strip())
                if self.name.split("@")[0] in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                    os.kill(pid, 9)  # only if that pid still is our node
            except (ValueError, OSError):
                pass
        shutil.rmtree(self.base, ignore_errors=True)


@pytest.fixture(scope="module")
def private_node():
    for tool in ("rabbitmq-server", "rabbitmqctl"):
        if shutil.which(tool) is None:
            _unavailable(f"{tool} is not installed")
    try:
        node = PrivateNode()
    except OSError as exc:
        _unavailable(f"no free port or directory: {exc}")
    try:
        node.start()
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        node.stop()
        _unavailable(str(exc))
    yield node
    node.stop()


def test_a_handled_but_unacked_delivery_comes_back_after_a_restart_and_is_dropped(
    private_node, handled_not_acked
):
    """Forced: the broker stops between handling and ack. After start_app the bus reconnects,
    the persistent message is still there, flagged redelivered, and the link's sequence number
    recognises it as a duplicate; a message published before the stop and not yet consumed
    survives the restart too."""
    topology = Topology("t-" + uuid.uuid4().hex[:8])
    bus = Bus(private_node.url, topology, connect_timeout=60)
    bus.connect()
    try:
        inbox = LinkInbox()
        first = handled_not_acked(bus, topology, inbox)
        private_node.restart_app()  # ... and no ack
        bus.ack(first)  # the ack is lost with the connection (skipped or reconnects)
        got = []
        deadline = time.monotonic() + 60
        while len(got) < 2 and time.monotonic() < deadline:
            for delivery in bus.poll(0.5):
                got.append(delivery)
                bus.ack(delivery)
        seqs = [json.loads(d.body)["seq"] for d in got]
        accepted = [s for s in seqs if inbox.accept("node-1", s)]
        print(
            f"\nrestart: reconnects {bus.reconnects}, redelivered {bus.redelivered}, "
            f"duplicates dropped {inbox.duplicates}, deliveries {seqs}"
        )
        assert bus.reconnects >= 1
        assert seqs == [1, 2], "nothing lost, still in order"
        assert got[0].redelivered and bus.redelivered >= 1
        assert accepted == [2] and inbox.duplicates == 1, "the redelivered message is applied once only"
        topology.delete(bus.channel, ["node-2"])
    finally:
        bus.close()


def test_bees_survive_a_broker_restart_mid_run(private_node, tmp_path):
    plan = Plan(
        "bees",
        6,
        {"flowers": 2, "reeds": 2},
        seed=5,
        amqp_url=private_node.url,
        dwell=0.15,
        stall_timeout=40,
        join_timeout=120,
        trace=str(tmp_path / "restart.jsonl"),
        logs=str(tmp_path / "logs"),
    )
    out = io.StringIO()
    result: dict = {}
    worker = threading.Thread(target=lambda: result.setdefault("code", execute(plan, True, out)), daemon=True)
    with RunTap(plan.amqp_url, plan.run_id) as tap:
        worker.start()
        tap.wait(  # every bee admitted and past its first state
            lambda t: len(t.changes) == 6, "all 6 bees changing state", stop=lambda: not worker.is_alive()
        )
    on_reed_before = sum(states.count("ON_REED") for states in tap.states.values())
    logs = tmp_path / "logs"
    private_node.restart_app(down=2.5)
    worker.join(timeout=300)
    assert not worker.is_alive(), "the run did not end"
    summary = json.loads(out.getvalue())
    print(
        f"\nbroker restart mid-run: reconnects {summary['reconnects']}, redelivered {summary['redelivered']}, "
        f"duplicates dropped {summary['duplicates']}, dead-lettered {summary['dead_letters']}, "
        f"{summary['duration']}s; ON_REED states before the restart: {on_reed_before}"
    )
    assert result["code"] == 0 and summary["complete"] and summary["safe"], summary
    # Every service lost its connection and came back: the monitor and each of the six bees.
    for name in ["monitor.log", *(f"bee-{n}.log" for n in range(1, 7))]:
        text = (logs / name).read_text()
        assert "reconnected (reconnect #1)" in text, f"{name} did not reconnect:\n{text[-2000:]}"
    assert summary["reconnects"] >= 7
    # Nothing lost, nothing applied twice.
    events = [json.loads(line) for line in Path(plan.trace).read_text().splitlines()[1:]]
    sends = Counter(e["id"] for e in events if e["event"] == "send")
    recvs = Counter(e["id"] for e in events if e["event"] == "recv")
    assert sends == recvs and set(recvs.values()) == {1}, "each message sent is received exactly once"
    assert summary["notes"]["egg"] == 30 and set(summary["states"].values()) == {"DEAD"}
    assert cli(["verify", plan.trace]) == 0


def test_a_transient_run_hit_by_a_broker_restart_ends_incomplete_never_safe(private_node, tmp_path):
    """Transient delivery keeps the run's queues and messages in the broker's memory only: a restart
    loses them. The monitor tells (the run's epoch queue is gone when it reconnects) and ends the
    run at once as INCOMPLETE, not judged (exit 3): never SAFE, never a violation, no hang."""
    plan = Plan(
        "bees",
        6,
        {"flowers": 2, "reeds": 2},
        seed=5,
        amqp_url=private_node.url,
        dwell=0.15,
        stall_timeout=40,
        join_timeout=120,
        trace=str(tmp_path / "transient.jsonl"),
        logs=str(tmp_path / "logs"),
        delivery="transient",
    )
    out = io.StringIO()
    result: dict = {}
    worker = threading.Thread(target=lambda: result.setdefault("code", execute(plan, True, out)), daemon=True)
    with RunTap(plan.amqp_url, plan.run_id, durable=False) as tap:
        worker.start()
        tap.wait(
            lambda t: len(t.changes) == 6, "all 6 bees changing state", stop=lambda: not worker.is_alive()
        )
    private_node.restart_app(down=2.5)
    restarted = time.monotonic()
    worker.join(timeout=120)
    assert not worker.is_alive(), "the run did not end"
    took = time.monotonic() - restarted
    summary = json.loads(out.getvalue())
    print(
        f"\ntransient run, broker restart: exit {result['code']}, ended {took:.1f}s after; {summary['verdict']}"
    )
    assert result["code"] == 3 and not summary["safe"] and not summary["complete"], summary
    assert summary["verdict"].startswith("INCOMPLETE, NOT JUDGED") and "SAFE" not in summary["verdict"]
    assert summary["lost"] and summary["delivery"] == "transient"
    assert took < plan.stall_timeout, "ended by the restart's detection, not by the stall timeout"
    assert "the broker lost the run's transient queues" in (tmp_path / "logs" / "monitor.log").read_text()


def _service(role: str, env: dict, log: Path) -> subprocess.Popen:
    with open(log, "w") as out:
        return subprocess.Popen(
            service_command(role), env=env, stdout=out, stderr=subprocess.STDOUT, text=True
        )


def _wait_for(predicate, timeout: float, what: str, *shown: Path) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}:\n" + "\n".join(
            f"--- {p.name}\n{p.read_text()[-1500:]}" for p in shown if p.exists()
        )
        time.sleep(0.1)


def test_every_joiner_is_admitted_across_a_broker_restart_in_the_join_window(private_node, tmp_path):
    """Discovery (PROCESSES=0), the broker stopped inside the join window for
    longer than the window. Before: the monitor reconnected, found the window long over and closed
    the roster with whoever it had, refusing whoever came after (the run then completed "SAFE" with
    fewer participants, exit 0). Now every joiner is admitted: the mayor and elves A, B, C were
    connected and had joined, waiting for their welcome, when the broker went away; elf D started
    while it was down and comes back *after* the monitor (held with SIGSTOP from its first failed
    attempt until the monitor has reconnected): the case the old code lost, whatever the timing.
    (One that first reaches the broker after the roster closed is late, and refused by name:
    tests/test_membership.py.)"""
    window, down = 6.0, 8.0
    run_id = "t-" + uuid.uuid4().hex[:8]
    # JOIN_TIMEOUT bounds how long a service waits for the broker too: generous, as a private node can take
    # a minute to start its application again on a loaded machine.
    base = dict(
        os.environ, AMQP_URL=private_node.url, RUN_ID=run_id, JOIN_TIMEOUT="300", PYTHONUNBUFFERED="1"
    )
    monitor_env = dict(
        base,
        ALGORITHM="elves",
        PROCESSES="0",
        JOIN_WINDOW=str(window),
        OPTIONS='{"rounds": 1}',
        DWELL="0.05",
        STALL_TIMEOUT="40",
        TRACE=str(tmp_path / "elves.jsonl"),
        SUMMARY_JSON=str(tmp_path / "summary.json"),
    )
    early = ("mayor", "elf-a", "elf-b", "elf-c")
    logs = {name: tmp_path / f"{name}.log" for name in ("monitor", *early, "elf-d")}
    procs: dict[str, subprocess.Popen] = {}
    try:
        procs["monitor"] = _service("monitor", monitor_env, logs["monitor"])
        for name in early:
            procs[name] = _service(role_of(name), base, logs[name])
        _wait_for(
            lambda: logs["monitor"].read_text().count(" joined as a") >= 4, 120, "four joins", *logs.values()
        )
        stopped = private_node.ctl("stop_app")
        assert stopped.returncode == 0, stopped.stderr
        assert "started" not in logs["monitor"].read_text(), "the roster closed before the restart: no test"
        down_since = time.monotonic()
        procs["elf-d"] = _service("elf", base, logs["elf-d"])
        _wait_for(
            lambda: "cannot reach RabbitMQ" in logs["elf-d"].read_text(),
            120,
            "elf D to try the broker",
            logs["elf-d"],
        )
        os.kill(procs["elf-d"].pid, signal.SIGSTOP)  # D will come back after the monitor
        time.sleep(max(0.0, down - (time.monotonic() - down_since)))  # down longer than the join window
        started = private_node.ctl("start_app", timeout=240)
        assert started.returncode == 0, started.stderr
        down_for = time.monotonic() - down_since
        _wait_for(
            lambda: "reconnected" in logs["monitor"].read_text(),
            120,
            "the monitor to reconnect",
            logs["monitor"],
        )
        time.sleep(0.5)
        os.kill(procs["elf-d"].pid, signal.SIGCONT)
        code = procs["monitor"].wait(timeout=400)
        monitor_log = logs["monitor"].read_text()
        assert code == 0, monitor_log[-3000:]
        summary = json.loads((tmp_path / "summary.json").read_text())
        print(
            f"\nrestart in the join window: broker down {down_for:.1f}s, processes {summary['processes']}, "
            f"refused {summary['refused']}, reconnects {summary['reconnects']}, {summary['duration']}s"
        )
        timeline = (
            "\n".join(
                line
                for line in monitor_log.splitlines()
                if re.search(r"reconnect|joined|started|refused", line) and "ERROR" not in line
            )
            + "\nelf D: "
            + "\n".join(
                line
                for line in logs["elf-d"].read_text().splitlines()
                if re.search(r"RabbitMQ|asked|REFUSED", line)
            )
        )
        assert summary["refused"] == [], (
            f"joiners refused across the restart: {summary['refused']}\n{timeline}"
        )
        assert summary["processes"] == 4 and summary["complete"] and summary["safe"], summary
        assert "reconnected while participants were joining" in monitor_log
        assert "elves with mayor, elf-1, elf-2, elf-3, elf-4 — started" in monitor_log, monitor_log[-3000:]
        for name in (*early, "elf-d"):
            assert procs[name].wait(timeout=60) == 0, logs[name].read_text()[-2000:]
            assert "admitted as" in logs[name].read_text(), f"{name} never admitted"
        for name in early:  # connected when the broker went away
            assert "reconnected (reconnect #1)" in logs[name].read_text(), name
        assert cli(["verify", str(tmp_path / "elves.jsonl")]) == 0
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
            proc.wait()
