"""``mutexlab test`` on nodes written outside mutexlab from docs/test-any-program.md alone:
Ricart–Agrawala in Perl (examples/nodes/ricart_agrawala.pl, core modules only), whose JSON has
its own spacing, its ``type`` key last, unicode in its bodies and a body's keys in Perl's hash
order — another in every process — and its misbehaving twins (``--broken``, ``--hang``,
``--chatty``, ``--huge``, ``--die``, ``--deaf``), each judged as docs/exit-codes.md says and none
left running.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import missing

ROOT = Path(__file__).resolve().parent.parent
PERL_RA = ROOT / "examples" / "nodes" / "ricart_agrawala.pl"
# A Python node whose REQUEST body's keys come in an order of its own process: the same answer,
# spelt differently by every process (as a Perl or an unsorted map of another language writes it),
# and replying while inside (the bug to find).
SHUFFLED = r"""
import json, os, random, sys
order = random.Random(os.getpid())
me = peers = None
for line in sys.stdin:
    m = json.loads(line)
    out = []
    if m["type"] == "init":
        me, peers, ts, want, inside, got, held = m["id"], m["peers"], 0, 0, False, set(), []
        out.append({"type": "done", "reinit": True})
    else:
        if m["type"] == "request":
            ts += 1; want = ts; got = set()
            for p in peers:
                body = [("type", "REQUEST"), ("ts", want), ("from", me), ("note", "é")]
                order.shuffle(body)
                out.append({"type": "send", "to": p, "body": dict(body)})
        elif m["type"] == "release":
            inside = False; want = 0
            out.append({"type": "exit", "resource": "cs"})
            out += [{"type": "send", "to": p, "body": {"type": "REPLY"}} for p in held]; held = []
        else:
            b, f = m["body"], m["from"]
            if b["type"] == "REQUEST":
                ts = max(ts, b["ts"]) + 1
                if want and not inside and (want, me) < (b["ts"], f):
                    held.append(f)
                else:  # the bug: inside, it replies at once
                    out.append({"type": "send", "to": f, "body": {"type": "REPLY"}})
            elif want and not inside:
                got.add(f)
                if len(got) == len(peers):
                    inside = True
                    out.append({"type": "enter", "resource": "cs"})
        out.append({"type": "done"})
    sys.stdout.write("".join(json.dumps(o) + "\n" for o in out)); sys.stdout.flush()
"""


@pytest.fixture(scope="module")
def perl() -> str:
    if shutil.which("perl") is None or subprocess.run(["perl", "-MJSON::PP", "-e", "1"]).returncode:
        missing("perl with JSON::PP (a core module) is not installed")
    return f"perl {PERL_RA}"


def left_running(marker: str) -> list[str]:
    ps = subprocess.run(["ps", "-eo", "pid,args"], capture_output=True, text=True).stdout
    return [line for line in ps.splitlines() if marker in line and "ps -eo" not in line]


def test_keys_in_another_order_are_the_same_answer(cli, tmp_path):
    # Before: answers were compared byte for byte, so the shrunk schedule played again "answered
    # differently" and the finding was [nondeterministic] instead of the violation.
    node = tmp_path / "shuffled.py"
    node.write_text(SHUFFLED)
    ran = cli("test", "mutex", "--node", f"{sys.executable} {node}", "--runs", "50", "--requests", "2")
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "nondeterministic" not in ran.stdout


def test_the_perl_node_passes_exhaustively_and_its_bug_is_found_and_replays(cli, perl, tmp_path):
    ran = cli("test", "mutex", "--node", perl, "--nodes", "2", "--requests", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "searched exhaustively" in ran.stdout, ran.stdout + ran.stderr
    scenario = tmp_path / "ra-pl.json"
    broken = f"{perl} --broken"
    found = cli("test", "mutex", "--node", broken, "--requests", "2", "--counterexample", str(scenario))
    assert found.returncode == 1 and "FINDING [violation]" in found.stdout, found.stdout + found.stderr
    again = cli("replay", str(scenario), "--node", broken)
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout


@pytest.mark.parametrize(
    ("flag", "rule", "says"),
    (
        ("--hang", "stalled", "did not answer request within 1 s"),
        ("--chatty", "garbage", "Ricart-Agrawala in Perl, ready"),
        ("--huge", "garbage", "longer than 65,536 bytes"),
        ("--die", "crashed", "exited with status 3"),
        ("--deaf --hang", "stalled", "did not answer request within 1 s"),
    ),
)
def test_misbehaving_perl_nodes_are_judged_and_none_is_left(cli, perl, flag, rule, says):
    ran = cli(
        "test", "mutex", "--node", f"{perl} {flag}", "--requests", "2", "--timeout", "1", "--runs", "20"
    )
    assert ran.returncode == 1 and f"FINDING [{rule}]" in ran.stdout and says in ran.stdout, ran.stdout
    assert not left_running(f"{PERL_RA} {flag}")


def test_a_node_deaf_to_sigterm_goes_with_mutexlab_stopped_by_sigterm(perl, tmp_path):
    # mutexlab itself stopped mid-search by SIGTERM: exit 143 (interrupted), its deaf nodes gone.
    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'shared'}:{ROOT}"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "mutexlab", "test", "mutex", "--node", f"{perl} --deaf", "--time", "60"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for _ in range(200):  # until its nodes are up
            if left_running(f"{PERL_RA} --deaf"):
                break
            subprocess.run(["sleep", "0.05"])
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 143
    for _ in range(100):
        if not left_running(f"{PERL_RA} --deaf"):
            break
        subprocess.run(["sleep", "0.05"])
    assert not left_running(f"{PERL_RA} --deaf")


@pytest.mark.parametrize(
    ("script", "why"),
    (
        (b"#!/no/such/interpreter\nprint 1\n", "an interpreter that is not there"),
        (b"#!/usr/bin/perl\r\nprint 1;\r\n", "Windows line endings"),  # "perl\r" is not found
        (b"this is no program\n", "a file that is no program"),
    ),
)
def test_a_command_that_cannot_be_run_is_exit_2_not_a_crash(cli, tmp_path, script, why):
    # Before: setpriv started, failed to run it and exited 127: [crashed], exit 1, a finding about
    # a program that never ran.
    node = tmp_path / "node"
    node.write_bytes(script)
    node.chmod(0o755)
    ran = cli("test", "mutex", "--node", str(node), "--runs", "2")
    assert ran.returncode == 2, ran.stdout + ran.stderr
    assert "it exited with status 127 before writing anything" in ran.stderr and why in ran.stderr


def test_a_node_killed_by_a_signal_is_named_by_it(cli, tmp_path):
    node = tmp_path / "segv.py"
    node.write_text(
        "import os, signal, sys\n"
        "for line in sys.stdin:\n"
        "    if '\"request\"' in line:\n"
        "        os.kill(os.getpid(), signal.SIGSEGV)\n"
        '    print(\'{"type": "done"}\', flush=True)\n'
    )
    ran = cli("test", "mutex", "--node", f"{sys.executable} {node}", "--runs", "2", "--no-shrink")
    assert ran.returncode == 1 and "was killed by signal 11 (SIGSEGV)" in ran.stdout, ran.stdout
