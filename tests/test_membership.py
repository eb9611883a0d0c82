"""Membership: pids and P agreed before the start; extra and late participants refused (docs/rabbitmq.md)."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from conftest import RUN_SECRET, RunTap, end_run

from mutexlab.bus.rabbit import Bus
from mutexlab.bus.topology import Topology, delete_run
from mutexlab.protocols.registry import build_setup, make_setup
from mutexlab.setups import ConfigError
from mutexlab.transport.membership import REJOIN_GRACE, Roster, wanted_name
from mutexlab.transport.monitor import Monitor, Outcome, render
from mutexlab.transport.participant import Participant
from mutexlab.transport.settings import MonitorSettings, ParticipantSettings, load
from mutexlab.transport.supervisor import Plan, execute, service_command


# -- the decisions (no broker) ------------------------------------------------------------
def test_pids_in_arrival_order_once_p_have_joined():
    roster = Roster("ricart-agrawala", expected=3, window=1.0)
    for n, instance in enumerate(["c", "a", "b"]):
        assert roster.join(instance, "node", now=n) is None
        assert roster.ready(now=n) == (n == 2)
    assert "announced with P=3" in roster.join("d", "node", now=3)
    members = roster.close(make_setup("ricart-agrawala", 3, {}))
    assert {name: m.instance for name, m in members.items()} == {"node-1": "c", "node-2": "a", "node-3": "b"}
    assert "membership is closed" in roster.join("e", "node", now=4)
    assert roster.join("a", "node", now=5) is None, "a member re-joining after a reconnect is not refused"


def test_discovery_closes_after_a_quiet_window():
    roster = Roster("bees", expected=0, window=2.0)
    assert not roster.ready(now=0)
    roster.join("x", "bee", now=0)
    roster.join("y", "bee", now=1)
    assert not roster.ready(now=2.5)  # y joined 1.5 s ago
    assert roster.ready(now=3.0)
    assert roster.count("bee") == 2


def test_fixed_roles_and_wrong_roles():
    roster = Roster("elves", expected=2, window=1.0)
    assert "no role 'bee'" in roster.join("b", "bee", now=0)
    roster.join("e1", "elf", now=0)
    roster.join("e2", "elf", now=0)
    assert not roster.ready(now=9), "the mayor is missing"
    assert roster.join("m1", "mayor", now=1) is None
    assert "already has its mayor" in roster.join("m2", "mayor", now=1)
    assert roster.ready(now=1)
    members = roster.close(build_setup("elves", 2, {}, 0))
    assert members["mayor"].pid == 0 and members["elf-1"].instance == "e1"


def test_a_stable_name_is_given_its_name_whatever_the_arrival_order():
    roster = Roster("ricart-agrawala", expected=4, window=1.0)
    assert roster.join("c", "node", now=0, wants="node-3") is None
    assert roster.join("z", "node", now=1, wants="node-9") is None  # beyond P=4: takes what is left
    assert roster.join("a", "node", now=2, wants="node-1") is None
    assert roster.join("b", "node", now=3) is None  # no stable name: what is left, in arrival order
    members = roster.close(make_setup("ricart-agrawala", 4, {}))
    assert {name: m.instance for name, m in members.items()} == {
        "node-1": "a",
        "node-2": "z",
        "node-3": "c",
        "node-4": "b",
    }
    assert members["node-3"].pid == 3


def test_a_later_joiner_with_the_same_stable_name_replaces_the_earlier_until_the_roster_closes():
    roster = Roster("ricart-agrawala", expected=2, window=1.0)
    assert roster.join("x", "node", now=0, wants="node-2") is None
    assert roster.join("a", "node", now=1, wants="node-1") is None
    assert roster.ready(now=1)
    assert roster.join("y", "node", now=2, wants="node-2") is None, "the restarted pod node-2"
    assert roster.count("node") == 2 and roster.member("x") is None
    assert "replaced by y" in roster.join("x", "node", now=3, wants="node-2"), "the earlier one refused"
    members = roster.close(make_setup("ricart-agrawala", 2, {}))
    assert members["node-2"].instance == "y" and members["node-1"].instance == "a"
    assert "membership is closed" in roster.join("z", "node", now=4, wants="node-2")
    assert members["node-2"].instance == "y", "after closing nobody is replaced"


def test_a_stable_name_gives_the_name_of_its_ordinal_and_must_have_one():
    assert wanted_name("bee", "mutexlab-bee-3") == "bee-3"
    assert wanted_name("node", "node-07") == "node-7"
    assert wanted_name("bee", None) is None
    with pytest.raises(ValueError, match="must end in -<number>"):
        wanted_name("bee", "bee")
    common = {"AMQP_URL": "amqp://u:p@h/", "RUN_ID": "r", "MUTEXLAB_RUN_SECRET": RUN_SECRET}
    with pytest.raises(ConfigError, match="STABLE_NAME: .*must end in -<number>.*'web'"):
        load(ParticipantSettings, **{k.lower(): v for k, v in common.items()}, stable_name="web")
    assert load(ParticipantSettings, **{k.lower(): v for k, v in common.items()}, stable_name="bee-2")


def test_roster_refuses_to_close_on_a_setup_that_does_not_match():
    roster = Roster("ricart-agrawala", expected=0, window=0.0)
    roster.join("a", "node", now=0)
    with pytest.raises(ConfigError, match="slot"):
        roster.close(make_setup("ricart-agrawala", 2, {}))


def test_a_join_is_idempotent_by_instance_id():
    """A participant re-announces its join after every reconnect, and the broker may hand a join
    over twice: the same instance never gets two places, never moves in the order, never extends
    the window, and a refused one is refused again for the same reason."""
    roster = Roster("elves", expected=0, window=2.0)
    assert roster.join("e1", "elf", now=0) is None
    assert roster.join("m", "mayor", now=1) is None
    assert roster.join("e2", "elf", now=1) is None
    for now in (1.5, 2.5, 2.9):  # e1 re-announced (reconnects), m twice
        assert roster.join("e1", "elf", now=now) is None
        assert roster.join("m", "mayor", now=now) is None
    assert [m.instance for m in roster.members] == ["e1", "m", "e2"]
    assert roster.last_join == 1 and roster.ready(now=3.0), "re-joins of members do not extend the window"
    reason = roster.join("m2", "mayor", now=3)
    assert "already has its mayor" in reason
    assert roster.join("m2", "mayor", now=3.5) == reason and roster.refusals == {"m2": reason}
    members = roster.close(build_setup("elves", 2, {}, 0))
    assert {n: m.instance for n, m in members.items()} == {"mayor": "m", "elf-1": "e1", "elf-2": "e2"}
    assert roster.join("e2", "elf", now=9) is None, "a member re-joining after the close keeps its place"
    assert roster.join("m2", "mayor", now=9) == reason, "the first refusal stands"
    late = roster.join("e3", "elf", now=9)
    assert "membership is closed" in late and roster.join("e3", "elf", now=10) == late


def test_a_reconnect_of_the_monitor_starts_the_discovery_window_again():
    """The join window must not run out while the monitor is cut off from the joins: after it
    reconnects, the roster stays open for the window again, and at least REJOIN_GRACE."""
    roster = Roster("bees", expected=0, window=2.0)
    roster.join("a", "bee", now=0)
    roster.reconnected(now=10)  # down from about 1 s to 10 s: the old window is long over
    assert not roster.ready(now=10)
    assert not roster.ready(now=10 + REJOIN_GRACE - 0.1), "participants cut off too need time to re-join"
    assert roster.join("b", "bee", now=12) is None
    assert not roster.ready(now=13.9), "a newcomer after the reconnect opens a full window"
    assert roster.ready(now=10 + REJOIN_GRACE) and roster.count("bee") == 2
    longer = Roster("bees", expected=0, window=8.0)
    longer.join("a", "bee", now=0)
    longer.reconnected(now=10)
    assert not longer.ready(now=17.9) and longer.ready(now=18), "the window itself when longer than the grace"
    fixed = Roster("ricart-agrawala", expected=2, window=2.0)
    fixed.join("a", "node", now=0)
    fixed.join("b", "node", now=0)
    fixed.reconnected(now=1)
    assert fixed.ready(now=1), "with P announced, a reconnect changes nothing: P joiners are P joiners"


def _offline_monitor(out):
    """A monitor that never touches a broker: what it would send is collected instead."""
    settings = MonitorSettings(
        amqp_url="amqp://127.0.0.1:1/%2F", run_id="offline", algorithm="elves", processes=0, join_window=1.0
    )
    monitor = Monitor(settings, out=out)
    sent: list[tuple[str, dict]] = []
    monitor._send_control = lambda target, body: sent.append((target, body))  # noqa: SLF001 - the monitor's join step without a broker
    return monitor, sent


def test_the_monitor_answers_a_repeated_join_the_same_way_and_counts_each_refusal_once(caplog):
    out = io.StringIO()
    monitor, sent = _offline_monitor(out)
    with caplog.at_level(logging.INFO, logger="mutexlab.monitor"):
        for _ in range(3):
            monitor._join({"instance": "e1", "role": "elf"})  # noqa: SLF001 - see above
            monitor._join({"instance": "b1", "role": "bee"})  # noqa: SLF001 - see above
    assert [m.instance for m in monitor.roster.members] == ["e1"]
    assert [(r["instance"], r["role"]) for r in monitor.refused] == [("b1", "bee")]
    assert "no role 'bee'" in monitor.refused[0]["reason"]
    assert [body["kind"] for target, body in sent if target == "b1"] == ["refused"] * 3, "answered every time"
    assert out.getvalue().count("monitor: refused bee b1") == 1
    assert caplog.text.count("e1 joined as an elf") == 1 and caplog.text.count("e1 joined again") == 2


def test_a_refused_joiner_is_named_with_its_reason_in_the_summary_and_the_verdict_text():
    outcome = Outcome(
        run_id="r",
        algorithm="elves",
        processes=1,
        complete=True,
        states={"mayor": "DONE", "elf-1": "DONE"},
        refused=[
            {
                "instance": "elf-h-7-abc",
                "role": "elf",
                "reason": "membership is closed: the run started with 1 elf; late elf refused",
            }
        ],
    )
    text = render(outcome)
    assert "refused joiners 1" in text
    assert (
        "membership: 1 joiner refused, not part of this run:\n  refused: elf elf-h-7-abc — membership is "
        "closed: the run started with 1 elf; late elf refused"
    ) in text
    assert json.loads(json.dumps(outcome.as_dict()))["refused"][0]["instance"] == "elf-h-7-abc"
    assert "membership:" not in render(Outcome(run_id="r", algorithm="elves", processes=1, complete=True))


# -- over the broker ------------------------------------------------------------------------
@pytest.mark.broker
def test_more_participants_than_announced_are_refused(amqp_url, tmp_path):
    # The run must outlast the start-up of all five processes, or a late extra finds the monitor
    # gone instead of being refused: 9 critical sections of 0.3 s take at least 2.7 s.
    plan = Plan(
        "ricart-agrawala",
        3,
        {"requests": 3},
        amqp_url=amqp_url,
        dwell=0.3,
        join_timeout=120,
        logs=str(tmp_path),
        extra_participants={"node": 2},
    )
    out = io.StringIO()
    assert execute(plan, json_out=True, out=out) == 0
    summary = json.loads(out.getvalue())
    assert summary["complete"] and summary["safe"] and summary["processes"] == 3
    assert len(summary["refused"]) == 2
    # members' logs by name (node-1.log), the refused ones' by pid (node.<pid>.log)
    logs = {p.name: p.read_text() for p in tmp_path.glob("node*.log")}
    refused = [n for n, text in logs.items() if "REFUSED by the monitor" in text]
    assert len(refused) == 2
    for name in refused:
        assert "admitted" not in logs[name]
        assert "announced with P=3" in logs[name] or "membership is closed" in logs[name]


def _start(role: str, env: dict, log: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        service_command(role),
        env=env,
        stdout=kw.pop("stdout", open(log, "w")),
        stderr=subprocess.STDOUT,
        text=True,
        **kw,
    )


@pytest.mark.broker
def test_discovered_p_and_a_late_participant_refused(amqp_url, tmp_path):
    run_id = "t-" + uuid.uuid4().hex[:8]
    base = dict(os.environ, AMQP_URL=amqp_url, RUN_ID=run_id, JOIN_TIMEOUT="120", PYTHONUNBUFFERED="1")
    monitor_env = dict(
        base,
        ALGORITHM="ricart-agrawala",
        PROCESSES="0",
        JOIN_WINDOW="8",
        OPTIONS='{"requests": 10}',  # 30 entries of 0.3 s: outlasts a loaded machine starting the late one
        DWELL="0.3",
        STALL_TIMEOUT="30",
        SUMMARY_JSON=str(tmp_path / "summary.json"),
    )
    procs = []
    try:
        with RunTap(amqp_url, run_id) as tap:  # open before anyone joins
            monitor = _start("monitor", monitor_env, tmp_path / "monitor.log", stdout=subprocess.PIPE)
            procs.append(monitor)
            procs += [_start("node", base, tmp_path / f"node-{n}.log") for n in range(3)]
            # The roster closes when the window ends: the monitor welcomes whoever joined.
            tap.wait(lambda t: len(t.os_pids) == 3, "3 welcomes", stop=lambda: monitor.poll() is not None)
        assert sorted(tap.os_pids) == ["node-1", "node-2", "node-3"]
        late = _start("node", base, tmp_path / "late.log")
        procs.append(late)
        assert late.wait(timeout=60) == 0, "a refused participant exits cleanly"
        text = (tmp_path / "late.log").read_text()
        assert "REFUSED by the monitor" in text and "membership is closed" in text
        verdict = monitor.stdout.read()
        assert monitor.wait(timeout=120) == 0
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert summary["processes"] == 3 and summary["complete"] and summary["safe"]
        assert summary["entries"] == {"cs": 30} and len(summary["refused"]) == 1
        # The run started with fewer than joined: the summary and the verdict's text say who and why.
        refused = summary["refused"][0]
        assert refused["role"] == "node" and "membership is closed" in refused["reason"]
        assert refused["instance"] in text
        assert f"  refused: node {refused['instance']} — {refused['reason']}" in verdict
    finally:
        end_run(procs, amqp_url, run_id, ["node-1", "node-2", "node-3"])


def _logged(log: Path, text: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while text not in log.read_text():
        assert time.monotonic() < deadline, f"{log.name}: no {text!r} within {timeout:g}s"
        time.sleep(0.1)


@pytest.mark.broker
def test_stable_names_give_the_participants_their_names_over_the_broker(amqp_url, tmp_path):
    """As a StatefulSet's pods (STABLE_NAME from the pod's name), started in another order."""
    run_id = "t-" + uuid.uuid4().hex[:8]
    base = dict(os.environ, AMQP_URL=amqp_url, RUN_ID=run_id, JOIN_TIMEOUT="120", PYTHONUNBUFFERED="1")
    monitor_env = dict(
        base,
        ALGORITHM="ricart-agrawala",
        PROCESSES="3",
        OPTIONS='{"requests": 1}',
        DWELL="0.05",
        SUMMARY_JSON=str(tmp_path / "summary.json"),
    )
    procs = []
    try:
        with RunTap(amqp_url, run_id) as tap:
            monitor = _start("monitor", monitor_env, tmp_path / "monitor.log")
            procs.append(monitor)
            for n in (3, 1, 2):
                env = dict(base, STABLE_NAME=f"run-node-{n}")
                procs.append(_start("node", env, tmp_path / f"pod-{n}.log"))
                _logged(tmp_path / f"pod-{n}.log", "asked to join run")  # published: the next starts
            tap.wait(lambda t: len(t.os_pids) == 3, "3 welcomes", stop=lambda: monitor.poll() is not None)
        for n, proc in zip((3, 1, 2), procs[1:]):
            assert tap.os_pids[f"node-{n}"] == proc.pid, f"pod run-node-{n} is node-{n}"
        assert monitor.wait(timeout=120) == 0
        assert json.loads((tmp_path / "summary.json").read_text())["safe"]
    finally:
        end_run(procs, amqp_url, run_id, ["node-1", "node-2", "node-3"])


@pytest.mark.broker
def test_a_participant_that_gave_up_is_not_admitted_by_a_later_monitor(amqp_url, tmp_path):
    """A participant with no monitor gives up after JOIN_TIMEOUT; its join must not outlive it,
    or a monitor started later admits a process that is gone and the run stalls."""
    run_id = "t-" + uuid.uuid4().hex[:8]
    base = dict(os.environ, AMQP_URL=amqp_url, RUN_ID=run_id, PYTHONUNBUFFERED="1")
    procs = []
    try:
        ghost = _start("node", dict(base, JOIN_TIMEOUT="3"), tmp_path / "ghost.log")
        procs.append(ghost)
        assert ghost.wait(timeout=60) != 0, "giving up is a failure exit"
        assert "no roster from the monitor within 3s" in (tmp_path / "ghost.log").read_text()
        monitor = _start(
            "monitor",
            dict(
                base,
                ALGORITHM="ricart-agrawala",
                PROCESSES="2",
                JOIN_TIMEOUT="60",
                OPTIONS='{"requests": 2}',
                DWELL="0.05",
                STALL_TIMEOUT="20",
                SUMMARY_JSON=str(tmp_path / "summary.json"),
            ),
            tmp_path / "monitor.log",
        )
        procs.append(monitor)
        procs += [_start("node", dict(base, JOIN_TIMEOUT="60"), tmp_path / f"node-{n}.log") for n in range(2)]
        assert monitor.wait(timeout=120) == 0, (tmp_path / "monitor.log").read_text()[-2000:]
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert summary["complete"] and summary["safe"] and summary["entries"] == {"cs": 4}
        assert summary["dead_letters"] == 1, "the expired join went to the run's dead-letter queue"
    finally:
        end_run(procs, amqp_url, run_id, ["node-1", "node-2"])


@pytest.mark.broker
def test_a_participant_asks_again_after_a_reconnect_while_joining(amqp_url):
    """The participant's connection is lost before any answer: it re-declares its join queue and
    publishes its join again, through the bus (confirmed, with the remaining TTL), and takes the
    answer sent after that. Before, the re-join was published behind the bus's back from the
    connect hook: the broker's confirm numbers then ran one ahead of the bus's, and the next
    message the bus published was never seen confirmed (a flush waited until its timeout)."""
    run_id = "t-" + uuid.uuid4().hex[:8]
    elf = Participant("elf", ParticipantSettings(amqp_url=amqp_url, run_id=run_id, join_timeout=30))
    monitor = Bus(amqp_url, Topology(run_id), connect_timeout=10, name="test-monitor", secret=RUN_SECRET)
    joins: list = []
    try:
        monitor.connect()
        monitor.consume(monitor.topology.monitor_queue)
        elf.bus.connect()
        poll = elf.bus.poll

        def poll_with_a_lost_connection(timeout):
            if not elf.bus.reconnects:
                elf.bus.reconnect(RuntimeError("test: connection lost"))  # as after a broker restart
            for delivery in monitor.poll(0.2):
                monitor.ack(delivery)
                if delivery.routing_key == "join.elf":
                    joins.append(delivery)
                    if len(joins) == 2:  # answer only the join asked after the reconnect
                        monitor.publish(
                            f"control.{elf.instance}",
                            {"kind": "refused", "instance": elf.instance, "reason": "test"},
                        )
            return poll(timeout)

        elf.bus.poll = poll_with_a_lost_connection
        assert elf._join() == 0, "the answer sent after the reconnect arrives"  # noqa: SLF001 - the join step, after a reconnect
        assert elf.bus.reconnects == 1 and len(joins) == 2
        assert [json.loads(d.body)["instance"] for d in joins] == [elf.instance] * 2
        elf.bus.send("status.elf-x", {"kind": "status"})
        elf.bus.flush(timeout=5)  # TransportError "1 messages not confirmed within 5s" before
    finally:
        elf.bus.close()
        monitor.close()
        delete_run(amqp_url, run_id, [])
