"""``mutexlab run`` stopped by a signal leaves nothing behind.

A run is started as a child process against the local broker and, mid-run, sent SIGTERM (``kill``,
``timeout``), SIGHUP (its terminal gone) or SIGINT (Ctrl-C): it must stop every process it
started, delete its queues and exchanges, and exit with 128 + the signal's number. Sent SIGKILL,
it can do nothing: its processes die with it and its queues and exchanges expire. Its monitor
killed, it says so (exit 3, no verdict). Its logs and its blame name the nodes as the monitor does.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import BROKER, DELIVERIES, RunTap

from mutexlab.bus.topology import Topology, delete_run

pytestmark = pytest.mark.broker
ROOT = Path(__file__).resolve().parent.parent
NAMES = ["node-1", "node-2", "node-3"]


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                found.add(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# Whether the broker's control tool can list what a run left. A passive declare renews a queue's
# lease (x-expires), as the monitor's renewal does: polled every 0.5 s, it kept a killed run's
# queues alive for ever. So the tool, which renews nothing, looks when it can.
def listed() -> bool:
    return bool(shutil.which("rabbitmqctl")) and BROKER.get("source") == "local"  # known once a test runs


def leftovers(url: str, run_id: str) -> list[str]:
    """What run ``run_id`` left on the broker: every queue and exchange whose name holds its id
    (``rabbitmqctl``, when this machine has it), else those of its topology a passive declare finds
    (which renews their lease: poll it less often than the lease, ``expiry_step()``)."""
    import pika

    topology = Topology(run_id)
    left = []
    if listed():  # its control tool
        for what in ("list_queues", "list_exchanges"):
            done = subprocess.run(
                ["rabbitmqctl", "-q", what, "name"], capture_output=True, text=True, timeout=120, check=True
            )
            left += [line.strip() for line in done.stdout.splitlines() if run_id in line]
        return sorted(set(left))
    conn = pika.BlockingConnection(pika.URLParameters(url))
    try:
        queues = [topology.queue(n) for n in NAMES] + [topology.monitor_queue, topology.dead_queue]
        for kind, names in (
            ("queue", queues),
            ("exchange", [topology.exchange, topology.dlx, topology.unrouted]),
        ):
            for name in names:
                channel = conn.channel()
                try:
                    if kind == "queue":
                        channel.queue_declare(name, passive=True)
                    else:
                        channel.exchange_declare(name, passive=True)
                    left.append(name)
                except pika.exceptions.ChannelClosedByBroker:
                    pass  # 404: gone
                finally:
                    if channel.is_open:
                        channel.close()
    finally:
        conn.close()
    return sorted(set(left))


@pytest.mark.parametrize("delivery", DELIVERIES)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_stops_every_process_of_the_run_and_deletes_its_queues(sig, delivery, amqp_url, tmp_path):
    run_id = "run-sig-" + uuid.uuid4().hex[:8]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "mutexlab", "run", "mutex", "-N", "3", "--requests", "1000"]
    argv += ["--dwell", "0.05", "--run-id", run_id, "--amqp-url", amqp_url, "--logs", str(tmp_path / "logs")]
    argv += ["--delivery", delivery, "--trace", str(tmp_path / "t.jsonl")]
    with RunTap(amqp_url, run_id, durable=delivery == "persistent") as tap:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            tap.wait(lambda t: len(t.states) == 3, "every node working", stop=lambda: proc.poll() is not None)
            started = children(proc.pid)
            assert len(started) == 4, f"the monitor and 3 nodes: {started}"
            proc.send_signal(sig)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:  # the test failed: leave nothing running
                proc.kill()
                proc.wait()
    assert proc.returncode == 128 + sig, (proc.returncode, err[-2000:])
    assert f"stopped by {sig.name}" in err and "Traceback" not in err, err[-2000:]
    assert "t.jsonl holds the trace up to the interrupt, cut short" in err, err[-2000:]
    assert not [pid for pid in started | set(tap.os_pids.values()) if alive(pid)], "processes left running"
    assert leftovers(amqp_url, run_id) == [], "queues or exchanges left on the broker"


def run_argv(run_id: str, amqp_url: str, logs: Path, *more: str) -> tuple[list[str], dict]:
    """``mutexlab run mutex -N 3`` with a workload that does not end by itself, and its environment."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "mutexlab", "run", "mutex", "-N", "3", "--requests", "1000000"]
    argv += ["--dwell", "0.05", "--run-id", run_id, "--amqp-url", amqp_url, "--logs", str(logs), *more]
    return argv, env


def wait_until(done, timeout: float, step: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        time.sleep(step)
    return True


EXPIRES = 2.0  # QUEUE_EXPIRES of the killed run: its queues go this long after their last use


def expiry_step() -> float:
    """How often to look whether they went: a passive declare (no rabbitmqctl) renews their lease."""
    return 0.5 if listed() else 2 * EXPIRES


@pytest.mark.parametrize("delivery", DELIVERIES)
@pytest.mark.parametrize("spawn", ["fork", "exec"])
def test_sigkill_of_the_run_leaves_no_process_and_its_queues_and_exchanges_expire(
    spawn, delivery, amqp_url, tmp_path
):
    """SIGKILL cannot be handled: the services (forked, or fresh interpreters) die with their parent
    (PR_SET_PDEATHSIG, or their own watch of it) and the queues, no longer renewed by the monitor,
    expire (x-expires) and take the auto-deleted exchanges with them."""
    run_id = "run-kill-" + uuid.uuid4().hex[:8]
    argv, env = run_argv(run_id, amqp_url, tmp_path / "logs", "--delivery", delivery)
    env["QUEUE_EXPIRES"] = str(EXPIRES)
    env["MUTEXLAB_SPAWN"] = spawn
    started: set[int] = set()
    with RunTap(amqp_url, run_id, durable=delivery == "persistent", expires=EXPIRES) as tap:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            tap.wait(lambda t: len(t.states) == 3, "every node working", stop=lambda: proc.poll() is not None)
            started = children(proc.pid)
            assert len(started) == 4, f"the monitor and 3 nodes: {started}"
            proc.kill()
            proc.communicate(timeout=30)
            gone = wait_until(lambda: not [pid for pid in started if alive(pid)], timeout=10)
        finally:
            for pid in started:  # the test failed: leave nothing running
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert gone, f"processes of the killed run still running 10 s later: {[p for p in started if alive(p)]}"
    # Every queue of the run is unused for longer than its lease after EXPIRES; the broker drops
    # expired queues on its own timer, later on a loaded machine: polled, not slept for.
    wait_until(lambda: leftovers(amqp_url, run_id) == [], timeout=EXPIRES + 30, step=expiry_step())
    left = leftovers(amqp_url, run_id)
    if left:  # the test failed: clean up what it made
        delete_run(amqp_url, run_id, NAMES)
    assert left == [], "queues or exchanges of the killed run left on the broker"


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=lambda s: s.name)
@pytest.mark.parametrize("delivery", DELIVERIES)
def test_a_killed_monitor_is_reported_as_no_verdict_exit_3(sig, delivery, amqp_url, tmp_path):
    run_id = "run-mon-" + uuid.uuid4().hex[:8]
    argv, env = run_argv(run_id, amqp_url, tmp_path / "logs", "--delivery", delivery)
    with RunTap(amqp_url, run_id, durable=delivery == "persistent") as tap:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            tap.wait(lambda t: len(t.states) == 3, "every node working", stop=lambda: proc.poll() is not None)
            (monitor,) = children(proc.pid) - set(tap.os_pids.values())
            os.kill(monitor, sig)
            out, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    assert proc.returncode == 3, (proc.returncode, err[-2000:])
    assert f"the monitor died (signal {int(sig)}, {sig.name}): no verdict" in err, err[-2000:]
    assert "SAFE" not in out and "Traceback" not in err
    assert leftovers(amqp_url, run_id) == [], "the run's queues are deleted all the same"


def test_logs_and_blame_go_by_node_name(amqp_url, tmp_path):
    """Stop node-2 (SIGSTOP): the stalled summary blames node-2, and ``node-2.log`` is its log."""
    run_id = "run-logs-" + uuid.uuid4().hex[:8]
    logs = tmp_path / "logs"
    argv, env = run_argv(run_id, amqp_url, logs, "--stall-timeout", "3", "--json")
    with RunTap(amqp_url, run_id) as tap:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stopped = None
        try:
            tap.wait(
                lambda t: len(t.changes) == 3, "every node at work", stop=lambda: proc.poll() is not None
            )
            stopped = tap.os_pids["node-2"]
            os.kill(stopped, signal.SIGSTOP)
            out, err = proc.communicate(timeout=120)
        finally:
            if stopped is not None:
                with contextlib.suppress(ProcessLookupError):  # (the run kills it once it ends)
                    os.kill(stopped, signal.SIGCONT)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    summary = json.loads(out)
    assert proc.returncode == 3 and not summary["complete"], (proc.returncode, err[-2000:])
    assert summary["os_pids"] == tap.os_pids
    silent = {name: info.get("silent_for") or 0 for name, info in summary["stalled"].items()}
    assert max(silent, key=silent.get) == "node-2", summary["stalled"]
    for name, pid in tap.os_pids.items():  # each log is its node's (its instance id holds its pid)
        assert f"-{pid}-" in (logs / f"{name}.log").read_text(), name
    assert sorted(p.name for p in logs.glob("node*.log")) == ["node-1.log", "node-2.log", "node-3.log"]


def test_sigkill_of_the_run_removes_its_temporary_log_directory(amqp_url, tmp_path):
    """Without ``--logs`` the processes log into a temporary directory, kept (and named) only
    when the run fails; a SIGKILLed run can name nothing, so its watcher removes it."""
    run_id = "run-kilt-" + uuid.uuid4().hex[:8]
    argv, env = run_argv(run_id, amqp_url, tmp_path / "unused")
    argv = argv[: argv.index("--logs")]
    env["TMPDIR"] = str(tmp_path)
    env["QUEUE_EXPIRES"] = str(EXPIRES)
    started: set[int] = set()
    with RunTap(amqp_url, run_id, expires=EXPIRES) as tap:
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            tap.wait(lambda t: len(t.states) == 3, "every node working", stop=lambda: proc.poll() is not None)
            started = children(proc.pid)
            logs = list(tmp_path.glob(f"mutexlab-{run_id}-*"))
            assert len(logs) == 1 and (logs[0] / "monitor.log").exists(), logs
            proc.kill()
            proc.communicate(timeout=30)
            removed = wait_until(lambda: not logs[0].exists(), timeout=10)
            wait_until(lambda: not [pid for pid in started if alive(pid)], timeout=10)
        finally:
            for pid in started:  # leave nothing running, whatever happened
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    wait_until(lambda: leftovers(amqp_url, run_id) == [], timeout=EXPIRES + 30, step=expiry_step())
    if leftovers(amqp_url, run_id):
        delete_run(amqp_url, run_id, NAMES)
    assert removed, f"the killed run's log directory {logs[0]} is still there 10 s later"
