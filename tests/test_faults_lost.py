"""A lost participant (also over RabbitMQ): a bee and a node killed with
SIGKILL mid-run, through ``mutexlab run``'s own code (``execute``).

What must hold: the monitor declares the stall ``STALL_TIMEOUT`` seconds after the last trace
event (not earlier, not much later), its stall text is the simulator's (``explain_stall``) and
names the killed process as the one the others wait for; nothing else crashes (every other
process exits 0, no traceback in any log); the exit code is 3 (stalled), the trace stays
capacity-safe, and ``mutexlab run`` names the killed process among the failed participants.
"""

from __future__ import annotations

import io
import json
import os
import re
import signal
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import DELIVERIES, RunTap, end_run

from mutexlab.transport.supervisor import Plan, execute

pytestmark = pytest.mark.broker
STALL = 6.0


def kill_mid_run(plan: Plan, victim_state: str) -> dict:
    """Run ``plan``; SIGKILL the first participant heard in ``victim_state`` on the run's exchange
    (so the monitor's queue has that status too: a killed process's last unconfirmed publishes may
    die with it); the run's results."""
    out = io.StringIO()
    with ThreadPoolExecutor(max_workers=1) as pool:
        with RunTap(plan.amqp_url, plan.run_id, durable=plan.delivery == "persistent") as tap:
            future = pool.submit(execute, plan, True, out)
            victim = tap.wait(
                lambda t: next((n for n in t.os_pids if t.state(n) == victim_state), None),
                f"a participant in {victim_state}",
                stop=future.done,
            )
            os.kill(tap.os_pids[victim], signal.SIGKILL)  # a participant this test started
        killed_at = time.monotonic()
        code = future.result(timeout=300)
        ended_at = time.monotonic()
    logs = Path(plan.logs)
    [victim_log] = [log for log in logs.glob("*-*.log") if f"admitted as {victim} " in log.read_text()]
    return {
        "code": code,
        "summary": json.loads(out.getvalue()),
        "victim": victim,
        "victim_log": victim_log,
        "monitor": (logs / "monitor.out").read_text(),
        "logs": logs,
        "after_kill": ended_at - killed_at,
    }


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_a_killed_bee_and_a_killed_node_are_named_and_nothing_else_crashes(
    delivery, amqp_url, tmp_path, capfd
):
    plans = {
        # One flower: every waiting bee needs an ACKflower from the bee on the flower, which never comes.
        "bees": (
            Plan(
                "bees",
                4,
                {"flowers": 1, "reeds": 2},
                seed=1,
                amqp_url=amqp_url,
                dwell=0.1,
                dwell_times={"flower": 1.5},
                stall_timeout=STALL,
                join_timeout=120,
                trace=str(tmp_path / "bees.jsonl"),
                logs=str(tmp_path / "bees"),
                delivery=delivery,
            ),
            "ON_FLOWER",
        ),
        "mutex": (
            Plan(
                "ricart-agrawala",
                3,
                {"requests": 20},
                seed=1,
                amqp_url=amqp_url,
                dwell=0.1,
                dwell_times={"cs": 1.5},
                stall_timeout=STALL,
                join_timeout=120,
                trace=str(tmp_path / "mutex.jsonl"),
                logs=str(tmp_path / "mutex"),
                delivery=delivery,
            ),
            "HELD",
        ),
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(plans, pool.map(lambda item: kill_mid_run(*item), plans.values())))
    stderr = capfd.readouterr().err
    for family, r in results.items():
        victim, summary, text = r["victim"], r["summary"], r["monitor"]
        print(
            f"\n{family}: killed {victim}; exit {r['code']}; monitor ended {r['after_kill']:.1f}s after the kill\n"
            + text[text.find("stalled:") : text.find("the run stalled")]
        )
        assert r["code"] == 3, text
        assert not summary["complete"] and summary["safe"] and victim in summary["stalled"], summary
        # The simulator's explanation: the others wait for the victim, the victim is the one blocking.
        waiting = "ACKflower" if family == "bees" else "REPLY"
        assert re.search(
            rf"^  \S+ \((?:WANTED|WAIT_\w+)(?:, holding [^)]*)?\) waits for (?:[^:\n]*: )?{waiting} from "
            rf"[^\n]*\b{victim}\b",
            text,
            re.M,
        ), text
        assert re.search(rf"^blocked on {victim}: ", text, re.M), text
        assert re.search(rf"stalled: {victim} in {plans[family][1]} .*silent for", text), text
        # Declared STALL seconds after the last trace event (the monitor polls every 0.2 s).
        events = [json.loads(line) for line in Path(plans[family][0].trace).read_text().splitlines()[1:]]
        gap = summary["duration"] - max(e["t"] for e in events)
        assert STALL <= gap < STALL + 2.0, gap
        # Nothing else crashed: only the victim failed, no traceback anywhere.
        failed = re.search(rf"participants that failed: ([^\n]*{r['victim_log'].stem}[^\n]*)", stderr)
        assert failed and failed.group(1).split(", ") == [r["victim_log"].stem], stderr
        for log in r["logs"].glob("*.log"):
            assert "Traceback" not in log.read_text(), log


@pytest.mark.parametrize("delivery", DELIVERIES)
def test_participants_give_up_when_the_monitor_is_killed(delivery, amqp_url, tmp_path):
    """The monitor SIGKILLed mid-run: no stop will ever come. Each participant notices that
    nobody consumes the run's monitor queue any more and exits 3 after MONITOR_TIMEOUT seconds,
    saying why — instead of waiting forever."""
    import subprocess
    import uuid

    from mutexlab.transport.supervisor import service_command

    run_id = "t-" + uuid.uuid4().hex[:8]
    base = dict(
        os.environ,
        AMQP_URL=amqp_url,
        RUN_ID=run_id,
        JOIN_TIMEOUT="120",
        PYTHONUNBUFFERED="1",
        MONITOR_TIMEOUT="3",
        HEARTBEAT="0.5",
        DELIVERY=delivery,
    )
    monitor = subprocess.Popen(
        service_command("monitor"),
        env=dict(base, ALGORITHM="ricart-agrawala", PROCESSES="3", OPTIONS='{"requests": 500}', DWELL="0.2"),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    logs = [tmp_path / f"node-{n}.log" for n in range(3)]
    nodes: list[subprocess.Popen] = []
    try:
        with RunTap(amqp_url, run_id, durable=delivery == "persistent") as tap:  # open before anyone joins
            nodes += [
                subprocess.Popen(
                    service_command("node"),
                    env=base,
                    stdout=open(log, "w"),  # noqa: SIM115 - the child's log, open while it runs
                    stderr=subprocess.STDOUT,
                )
                for log in logs
            ]
            tap.wait(lambda t: len(t.states) == 3, "the run's start: a state from every node")
        monitor.kill()
        monitor.wait()
        killed = time.monotonic()
        codes = [node.wait(timeout=60) for node in nodes]
        waited = time.monotonic() - killed
        print(f"\nmonitor killed: participants exited {codes} after {waited:.1f}s")
        assert codes == [3, 3, 3]
        # Absence counts from the last check that still saw the monitor: up to one heartbeat before the kill.
        assert 3 - 0.5 <= waited < 3 + 10
        for log in logs:
            text = log.read_text()
            assert "the monitor is gone" in text and "Traceback" not in text, text[-2000:]
    finally:
        end_run([monitor, *nodes], amqp_url, run_id, ["node-1", "node-2", "node-3"])


def test_the_monitor_check_never_swallows_a_lost_connection():
    """The check runs on a channel of its own; a connection lost under it goes to the bus's
    reconnect (swallowing it left pika's closed connection in use: 'Timeout closed before call'),
    and a missing monitor queue counts as nobody consuming it."""
    import pika

    from mutexlab.transport.participant import Participant
    from mutexlab.transport.settings import ParticipantSettings

    node = Participant(
        "node", ParticipantSettings(amqp_url="amqp://127.0.0.1:1/%2F", run_id="r", monitor_timeout=5)
    )
    lost = []
    node.bus.reconnect = lost.append

    class Dropped:
        is_open = True

        def channel(self):
            raise pika.exceptions.ConnectionClosedByBroker(320, "CONNECTION_FORCED")

    node.bus.conn = Dropped()
    assert node._monitor_present() is True and len(lost) == 1  # noqa: SLF001 - the monitor-presence probe, without waiting for real time

    class NoQueue:
        is_open = False

        def queue_declare(self, *args, **kwargs):
            raise pika.exceptions.ChannelClosedByBroker(404, "NOT_FOUND")

    class Open:
        is_open = True

        def channel(self):
            return NoQueue()

    node.bus.conn = Open()
    node._monitor_seen = time.monotonic() - 4  # noqa: SLF001 - see above
    assert node._monitor_present() is True  # noqa: SLF001 - see above; not yet MONITOR_TIMEOUT without a consumer
    node._monitor_seen = time.monotonic() - 6  # noqa: SLF001 - see above
    assert node._monitor_present() is False and len(lost) == 1  # noqa: SLF001 - see above


def test_the_monitor_check_keeps_its_channel():
    """Each look at the monitor's queue is one passive declare on a channel kept for the looks (no
    channel opened and closed per look: three round trips and a channel the broker starts and
    stops); a missing queue closes it, and the next look, or a new connection, opens another."""
    import pika

    from mutexlab.transport.participant import Participant
    from mutexlab.transport.settings import ParticipantSettings

    node = Participant(
        "node", ParticipantSettings(amqp_url="amqp://127.0.0.1:1/%2F", run_id="r", monitor_timeout=5)
    )
    opened, consumers = [], [1]

    class Declared:
        class method:  # noqa: N801 - pika's frame: .method.consumer_count
            consumer_count = 1

    class Probe:
        is_open = True

        def queue_declare(self, queue, passive=False):
            assert passive and queue == node.topology.monitor_queue
            if not consumers[0]:
                self.is_open = False
                raise pika.exceptions.ChannelClosedByBroker(404, "NOT_FOUND")
            return Declared

        def close(self):
            self.is_open = False

    class Conn:
        is_open = True

        def channel(self):
            opened.append(Probe())
            return opened[-1]

    node.bus.conn = Conn()
    for _ in range(3):
        assert node._monitor_present() is True  # noqa: SLF001 - the monitor-presence probe, without waiting for real time
    assert len(opened) == 1 and opened[0].is_open
    consumers[0] = 0  # the queue gone: its channel closed by the broker, reopened at the next look
    assert node._monitor_present() is True and len(opened) == 1  # noqa: SLF001 - see above
    consumers[0] = 1
    assert node._monitor_present() is True and len(opened) == 2  # noqa: SLF001 - see above
    node.bus.conn = Conn()  # a reconnect: the old connection's channel is not used
    assert node._monitor_present() is True and len(opened) == 3  # noqa: SLF001 - see above
