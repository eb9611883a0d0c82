"""Full runs over real RabbitMQ: every participant its own OS process, the monitor deciding.

All runs of this module start at once (one thread each, distinct run ids) to keep the suite
short; each must end with the monitor's verdict, and each safe trace must pass ``mutexlab
verify``. The deliberately broken variants (tests/mutexlab_broken) must be flagged, exit 1.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import re
import shutil
import signal
import subprocess
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import RunTap, end_run

from mutexlab.cli import main as cli
from mutexlab.protocols.registry import CLASSIC, SPECS
from mutexlab.transport.supervisor import Plan, execute, service_command

pytestmark = pytest.mark.broker
TESTS = Path(__file__).resolve().parent


def _available(name: str) -> bool:
    try:
        importlib.import_module(SPECS[name].make_setup.__module__)
        return True
    except ImportError:
        return False


CLASSIC_HERE = [a for a in CLASSIC if _available(a)]

PLANS = {
    **{f"mutex-{a}": dict(algorithm=a, processes=5, options={"requests": 2}) for a in CLASSIC_HERE},
    "bees": dict(algorithm="bees", processes=6, options={"flowers": 2, "reeds": 2}),
    "elves": dict(algorithm="elves", processes=4, options={"rounds": 2}),
    "broken-node": dict(
        algorithm="mutexlab_broken.ricart_agrawala",
        processes=4,
        options={"requests": 2},
        dwell_times={"cs": 0.3},
    ),
    "broken-bee": dict(
        algorithm="mutexlab_broken.bees",
        processes=3,
        options={"flowers": 1, "reeds": 3},
        dwell_times={"flower": 0.3},
    ),
}
if not _available("elves"):
    PLANS.pop("elves")
if not _available("bees"):
    PLANS.pop("bees")
    PLANS.pop("broken-bee")


@pytest.fixture(scope="module")
def runs(amqp_url, tmp_path_factory):
    """name -> (exit code, summary, trace path) for every plan, run concurrently."""
    base = tmp_path_factory.mktemp("runs")
    path = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(TESTS) + (os.pathsep + path if path else "")  # the broken variants

    def one(name: str):
        spec = dict(PLANS[name])
        plan = Plan(
            spec.pop("algorithm"),
            spec.pop("processes"),
            spec.pop("options"),
            seed=3,
            amqp_url=amqp_url,
            dwell=0.0,
            stall_timeout=20,
            join_timeout=120,
            trace=str(base / f"{name}.jsonl"),
            logs=str(base / f"{name}-logs"),
            **spec,
        )
        out = io.StringIO()
        code = execute(plan, json_out=True, out=out)
        return code, json.loads(out.getvalue() or "{}"), plan.trace

    try:
        with ThreadPoolExecutor(max_workers=len(PLANS)) as pool:
            results = dict(zip(PLANS, pool.map(one, PLANS)))
    finally:
        os.environ["PYTHONPATH"] = path
    return results


SAFE = [n for n in PLANS if not n.startswith("broken")]


@pytest.mark.parametrize("name", SAFE)
def test_run_over_rabbitmq_is_complete_and_safe(runs, name):
    code, summary, trace = runs[name]
    assert summary, f"{name}: the monitor wrote no summary (exit {code})"
    assert summary["complete"] and summary["safe"], summary
    assert code == 0
    assert sum(summary["messages"].values()) > 0
    assert summary["tapped"] >= sum(summary["messages"].values()), "the monitor taps every protocol message"
    assert cli(["verify", trace]) == 0, "the monitor's trace passes mutexlab verify"
    header = json.loads(Path(trace).read_text().splitlines()[0])
    assert header["event"] == "run" and header["transport"] == "rabbitmq"


def test_bees_lay_every_egg(runs):
    _, summary, _ = runs["bees"]
    assert summary["notes"]["egg"] == 6 * 5 and summary["notes"]["death"] == 6
    assert set(summary["states"].values()) == {"DEAD"}


@pytest.mark.parametrize("name", [n for n in PLANS if n.startswith("broken")])
def test_broken_variant_is_flagged_by_the_monitor(runs, name):
    code, summary, trace = runs[name]
    assert code == 1, f"{name}: exit {code}, summary {summary}"
    assert not summary["safe"]
    assert any("capacity" in v for v in summary["violations"])
    assert cli(["verify", trace]) == 1


def _connections(run_id: str) -> dict[str, str]:
    """Broker connection pid -> connection name, for the connections of ``run_id``."""
    done = subprocess.run(
        ["rabbitmqctl", "-q", "list_connections", "pid", "client_properties"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    found = {}
    for line in done.stdout.splitlines():
        match = re.search(r'connection_name","(mutexlab ' + re.escape(run_id) + r' [^"]+)"', line)
        if match:
            found[line.split("\t", 1)[0]] = match.group(1)
    return found


def _close_connections(run_id: str, expected: int) -> None:
    """Close every connection of run ``run_id`` (``expected`` of them) with rabbitmqctl, at once."""
    connections = _connections(run_id)
    assert len(connections) == expected, connections
    closing = [
        subprocess.Popen(
            ["rabbitmqctl", "-q", "close_connection", pid, "test: connection lost"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for pid in connections
    ]
    assert all(p.wait(timeout=60) == 0 for p in closing)


# rabbitmqctl is the local broker's control tool; a remote broker (AMQP_URL, testcontainers)
# has none here. CI uses the local broker, so there its absence is a failure, not a skip.
needs_rabbitmqctl = pytest.mark.skipif(
    shutil.which("rabbitmqctl") is None and not os.environ.get("CI"),
    reason="needs rabbitmqctl to close connections (under CI its absence fails the test)",
)


@needs_rabbitmqctl
def test_participants_and_monitor_survive_lost_connections(amqp_url, tmp_path):
    """The broker drops every connection of a run in mid-run: all reconnect, nothing is lost or
    applied twice, the run completes safely."""
    plan = Plan(
        "ricart-agrawala",
        4,
        {"requests": 10},
        amqp_url=amqp_url,
        dwell=0.3,
        stall_timeout=30,
        join_timeout=120,
        trace=str(tmp_path / "trace.jsonl"),
        logs=str(tmp_path / "logs"),
    )
    out = io.StringIO()
    with ThreadPoolExecutor(max_workers=1) as pool:
        with RunTap(amqp_url, plan.run_id) as tap:
            future = pool.submit(execute, plan, True, out)
            tap.wait(  # every node admitted and working
                lambda t: sum("WANTED" in states for states in t.states.values()) == 4,
                "all 4 nodes in WANTED",
                stop=future.done,
            )
        _close_connections(plan.run_id, 5)
        code = future.result(timeout=300)
    summary = json.loads(out.getvalue())
    assert code == 0 and summary["complete"] and summary["safe"], summary
    # rabbitmqctl is slow: the last connections may be closed only as the run ends.
    assert summary["reconnects"] >= 1
    assert summary["entries"] == {"cs": 40}
    events = [json.loads(line) for line in Path(plan.trace).read_text().splitlines()[1:]]
    sends = [e["id"] for e in events if e["event"] == "send"]
    recvs = [e["id"] for e in events if e["event"] == "recv"]
    assert sorted(sends) == sorted(recvs) and len(set(recvs)) == len(recvs), (
        "each message received exactly once"
    )
    assert cli(["verify", plan.trace]) == 0


def test_a_killed_participant_is_named_by_the_stall_diagnosis(amqp_url, tmp_path):
    """SIGKILL one node mid-run: the others wait for it; the monitor says who waits for whom and
    who went silent, and exits 3 (stalled), not 0 and not 1."""
    run_id = "t-" + uuid.uuid4().hex[:8]
    base = dict(os.environ, AMQP_URL=amqp_url, RUN_ID=run_id, JOIN_TIMEOUT="120", PYTHONUNBUFFERED="1")
    monitor_env = dict(
        base,
        ALGORITHM="ricart-agrawala",
        PROCESSES="3",
        OPTIONS='{"requests": 50}',
        DWELL="0.2",
        STALL_TIMEOUT="10",
        SUMMARY_JSON=str(tmp_path / "summary.json"),
    )
    monitor = subprocess.Popen(
        service_command("monitor"),
        env=monitor_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    logs = [tmp_path / f"node-{n}.log" for n in range(3)]
    nodes: list[subprocess.Popen] = []
    try:
        with RunTap(amqp_url, run_id) as tap:  # open before anyone joins: it hears the joins and welcomes
            nodes += [
                subprocess.Popen(
                    service_command("node"),
                    env=base,
                    stdout=open(log, "w"),  # noqa: SIM115 - the child's log, open while it runs
                    stderr=subprocess.STDOUT,
                )
                for log in logs
            ]
            name = tap.wait(
                lambda t: next((n for n in t.os_pids if t.state(n) == "HELD"), None),
                "a node in HELD",
                stop=lambda: monitor.poll() is not None,
            )
        [victim] = [proc for proc in nodes if proc.pid == tap.os_pids[name]]
        victim.send_signal(signal.SIGKILL)
        output = monitor.communicate(timeout=120)[0]
        assert monitor.returncode == 3, output
        assert "STALLED" in output
        assert re.search(rf"stalled: {name} .*silent for", output), output
        others = [f"node-{n}" for n in (1, 2, 3) if f"node-{n}" != name]
        assert any(
            re.search(rf"stalled: {o} in WANTED waits for REPLY from [^—]*{name}", output) for o in others
        ), output
        summary = json.loads((tmp_path / "summary.json").read_text())
        assert summary["safe"] and not summary["complete"] and name in summary["stalled"]
    finally:
        end_run([monitor, *nodes], amqp_url, run_id, ["node-1", "node-2", "node-3"])
