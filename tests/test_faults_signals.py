"""``mutexlab run`` stopped by a signal leaves nothing behind.

A run is started as a child process against the local broker and, mid-run, sent SIGTERM (``kill``,
``timeout``), SIGHUP (its terminal gone) or SIGINT (Ctrl-C): it must stop every process it
started, delete its queues and exchanges, and exit with 128 + the signal's number.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import BROKER, RunTap

from mutexlab.transport.topology import Topology

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


def leftovers(url: str, run_id: str) -> list[str]:
    """What run ``run_id`` left on the broker: every queue and exchange whose name holds its id
    (``rabbitmqctl``, when this machine has it), and those of its topology a passive declare finds."""
    import pika

    topology = Topology(run_id)
    left = []
    if shutil.which("rabbitmqctl") and BROKER.get("source") == "local":  # its control tool
        for what in ("list_queues", "list_exchanges"):
            done = subprocess.run(
                ["rabbitmqctl", "-q", what, "name"], capture_output=True, text=True, timeout=120, check=True
            )
            left += [line.strip() for line in done.stdout.splitlines() if run_id in line]
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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGINT], ids=lambda s: s.name)
def test_a_signal_stops_every_process_of_the_run_and_deletes_its_queues(sig, amqp_url, tmp_path):
    run_id = "run-sig-" + uuid.uuid4().hex[:8]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT), env.get("PYTHONPATH", "")])
    argv = [sys.executable, "-m", "mutexlab", "run", "mutex", "-N", "3", "--requests", "1000"]
    argv += ["--dwell", "0.05", "--run-id", run_id, "--amqp-url", amqp_url, "--logs", str(tmp_path / "logs")]
    with RunTap(amqp_url, run_id) as tap:
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
    assert not [pid for pid in started | set(tap.os_pids.values()) if alive(pid)], "processes left running"
    assert leftovers(amqp_url, run_id) == [], "queues or exchanges left on the broker"
