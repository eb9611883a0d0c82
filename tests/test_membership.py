"""Membership: pids and P agreed before the start; extra and late participants refused (docs/rabbitmq.md)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import uuid
from pathlib import Path

import pytest

from mutexlab.transport.supervisor import Plan, execute, service_command
from mutexlab.protocols.registry import make_setup
from mutexlab.setup import ConfigError
from mutexlab.transport.membership import Roster, build_setup
from mutexlab.transport.rabbit import delete_run


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
    assert not roster.ready(now=2.5)          # y joined 1.5 s ago
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


def test_roster_refuses_to_close_on_a_setup_that_does_not_match():
    roster = Roster("ricart-agrawala", expected=0, window=0.0)
    roster.join("a", "node", now=0)
    with pytest.raises(ConfigError, match="slot"):
        roster.close(make_setup("ricart-agrawala", 2, {}))


# -- over the broker ------------------------------------------------------------------------
@pytest.mark.broker
def test_more_participants_than_announced_are_refused(amqp_url, tmp_path):
    # The run must outlast the start-up of all five processes, or a late extra finds the monitor
    # gone instead of being refused: 9 critical sections of 0.3 s take at least 2.7 s.
    plan = Plan("ricart-agrawala", 3, {"requests": 3}, amqp_url=amqp_url, dwell=0.3, join_timeout=120,
                logs=str(tmp_path), extra_participants={"node": 2})
    out = io.StringIO()
    assert execute(plan, json_out=True, out=out) == 0
    summary = json.loads(out.getvalue())
    assert summary["complete"] and summary["safe"] and summary["processes"] == 3
    assert len(summary["refused"]) == 2
    logs = {p.name: p.read_text() for p in tmp_path.glob("node-*.log")}
    refused = [n for n, text in logs.items() if "REFUSED by the monitor" in text]
    assert len(refused) == 2
    for name in refused:
        assert "admitted" not in logs[name]
        assert "announced with P=3" in logs[name] or "membership is closed" in logs[name]


def _start(role: str, env: dict, log: Path, **kw) -> subprocess.Popen:
    return subprocess.Popen(service_command(role), env=env, stdout=kw.pop("stdout", open(log, "w")),
                            stderr=subprocess.STDOUT, text=True, **kw)


@pytest.mark.broker
def test_discovered_p_and_a_late_participant_refused(amqp_url, tmp_path):
    run_id = "t-" + uuid.uuid4().hex[:8]
    base = dict(os.environ, AMQP_URL=amqp_url, RUN_ID=run_id, JOIN_TIMEOUT="120", PYTHONUNBUFFERED="1")
    monitor_env = dict(base, ALGORITHM="ricart-agrawala", PROCESSES="0", JOIN_WINDOW="8",
                       OPTIONS='{"requests": 4}', DWELL="0.3", STALL_TIMEOUT="30",
                       SUMMARY_JSON=str(tmp_path / "summary.json"))
    procs = []
    try:
        monitor = _start("monitor", monitor_env, tmp_path / "monitor.log", stdout=subprocess.PIPE)
        procs.append(monitor)
        procs += [_start("node", base, tmp_path / f"node-{n}.log") for n in range(3)]
        for line in monitor.stdout:                        # wait for the roster to close
            if "started" in line:
                assert "node-1, node-2, node-3" in line
                break
        late = _start("node", base, tmp_path / "late.log")
        procs.append(late)
        assert late.wait(timeout=60) == 0, "a refused participant exits cleanly"
        text = (tmp_path / "late.log").read_text()
        assert "REFUSED by the monitor" in text and "membership is closed" in text
        monitor.stdout.read()
        assert monitor.wait(timeout=120) == 0
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert summary["processes"] == 3 and summary["complete"] and summary["safe"]
        assert summary["entries"] == {"cs": 12} and len(summary["refused"]) == 1
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        delete_run(amqp_url, run_id, ["node-1", "node-2", "node-3"])


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
        monitor = _start("monitor", dict(base, ALGORITHM="ricart-agrawala", PROCESSES="2", JOIN_TIMEOUT="60",
                                         OPTIONS='{"requests": 2}', DWELL="0.05", STALL_TIMEOUT="20",
                                         SUMMARY_JSON=str(tmp_path / "summary.json")), tmp_path / "monitor.log")
        procs.append(monitor)
        procs += [_start("node", dict(base, JOIN_TIMEOUT="60"), tmp_path / f"node-{n}.log") for n in range(2)]
        assert monitor.wait(timeout=120) == 0, (tmp_path / "monitor.log").read_text()[-2000:]
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert summary["complete"] and summary["safe"] and summary["entries"] == {"cs": 4}
        assert summary["dead_letters"] == 1, "the expired join went to the run's dead-letter queue"
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
            proc.wait()
        delete_run(amqp_url, run_id, ["node-1", "node-2"])
