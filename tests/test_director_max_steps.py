"""A run cut by --max-steps: a no-rest finding only when it had stopped getting anywhere.

A correct Ricart–Agrawala whose workload needs more steps than --max-steps is incomplete (exit 3),
never a finding and never a PASS; a program that keeps its nodes busy without serving (a livelock,
from the start or after a first request served) is still the no-rest finding.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "nodes"

# Node 1 serves its first ``served`` requests at once (node 2 none), then answers each later one by pinging its peers,
# who ping back forever: the nodes keep each other busy and nobody enters again.
LIVELOCK = """import json, sys
served = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg['type'] == 'init':
        peers, me = msg['peers'], msg['id']
    elif msg['type'] == 'request' and me == 1 and served < {served}:
        served += 1
        print(json.dumps({{'type': 'enter', 'resource': 'cs'}}))
    elif msg['type'] == 'request':
        for peer in peers:
            print(json.dumps({{'type': 'send', 'to': peer, 'body': {{'type': 'PING'}}}}))
    elif msg['type'] == 'release':
        print(json.dumps({{'type': 'exit', 'resource': 'cs'}}))
    elif msg['type'] == 'recv':
        print(json.dumps({{'type': 'send', 'to': msg['from'], 'body': {{'type': 'PING'}}}}))
    print(json.dumps({{'type': 'done'}}), flush=True)
"""


def test_a_workload_longer_than_max_steps_is_incomplete_not_a_finding(cli):
    program = f"{sys.executable} {EXAMPLES / 'ricart_agrawala.py'}"
    ran = cli(
        "test",
        "mutex",
        "--node",
        program,
        "-N",
        "3",
        "--requests",
        "150",
        "--max-steps",
        "300",
        "--runs",
        "3",
        "--json",
    )
    outcome = json.loads(ran.stdout)
    assert ran.returncode == 3, ran.stdout + ran.stderr
    assert outcome["verdict"] == "INCOMPLETE" and outcome["incomplete_runs"] == 3 and "finding" not in outcome
    text = cli(
        "test",
        "mutex",
        "--node",
        program,
        "-N",
        "3",
        "--requests",
        "150",
        "--max-steps",
        "300",
        "--runs",
        "1",
    )
    assert (
        text.returncode == 3 and "INCOMPLETE" in text.stdout and "requests still being served" in text.stdout
    )


@pytest.mark.parametrize("served", [0, 1])
def test_a_livelock_is_still_the_no_rest_finding(cli, tmp_path, served):
    program = tmp_path / "livelock.py"
    program.write_text(LIVELOCK.format(served=served))
    ran = cli(
        "test",
        "mutex",
        "--node",
        f"{sys.executable} {program}",
        "-N",
        "2",
        "--requests",
        "2",
        "--max-steps",
        "200",
        "--runs",
        "2",
        "--no-shrink",
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [no-rest]" in ran.stdout


def test_no_request_is_bad_input_not_a_pass(cli):
    program = f"{sys.executable} {EXAMPLES / 'ricart_agrawala.py'}"
    ran = cli("test", "mutex", "--node", program, "--requests", "0")
    assert ran.returncode == 2 and "--requests must be at least 1" in ran.stderr, ran.stdout + ran.stderr
    assert "PASS" not in ran.stdout and "Traceback" not in ran.stderr


def test_a_long_schedule_is_shown_elided(cli, tmp_path):
    program = tmp_path / "livelock.py"
    program.write_text(LIVELOCK.format(served=0))
    argv = ["test", "mutex", "--node", f"{sys.executable} {program}", "-N", "2", "--max-steps", "2000"]
    ran = cli(*argv, "--runs", "1", "--no-shrink")
    [schedule] = [line for line in ran.stdout.splitlines() if line.startswith("schedule: ")]
    assert ran.returncode == 1 and "FINDING [no-rest]" in ran.stdout
    assert "… 1980 steps elided" in schedule and schedule.count("→") + schedule.count("request") == 20
    whole = json.loads(cli(*argv, "--runs", "1", "--no-shrink", "--json").stdout)
    assert len(whole["schedule"]) == 2000
