"""``mutexlab test``: programs as nodes, the director's strategies, findings and replays.

The C examples are built with gcc into a temporary directory (a skip without gcc, a failure
under CI); misbehaving nodes are small Python scripts written by the tests. Every test that
starts nodes checks that none is left running afterwards.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import build_c_nodes, missing

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "nodes"
VARIANTS = {
    "ra": ("ricart_agrawala.c", []),
    "ra-reply-in-cs": ("ricart_agrawala.c", ["-DBROKEN_REPLY_IN_CS"]),
    "ra-compare": ("ricart_agrawala.c", ["-DBROKEN_COMPARE"]),
    "ra-dup": ("ricart_agrawala.c", ["-DBROKEN_DUP"]),
    "bee": ("bee.c", []),
    "bee-broken": ("bee.c", ["-DBROKEN_FLOWERS"]),
}
BROKEN = ("ra-reply-in-cs", "ra-compare")
STRATEGIES = ("random", "pct", "systematic")


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    return build_c_nodes(tmp_path_factory.mktemp("nodes"), EXAMPLES, VARIANTS)


def gone(pids: list[int]) -> bool:
    """Whether none of ``pids`` is alive any more (zombies of other parents count as gone)."""
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        state = (
            Path(f"/proc/{pid}/stat").read_text().split()[2] if Path(f"/proc/{pid}/stat").exists() else "Z"
        )
        if state != "Z":
            return False
    return True


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("variant", BROKEN)
def test_a_broken_ricart_agrawala_is_caught_and_its_scenario_replays(cli, built, tmp_path, strategy, variant):
    scenario = tmp_path / "ce.json"
    ran = cli("test", "mutex", "--node", built[variant], "--strategy", strategy, "--counterexample", scenario)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [violation]" in ran.stdout and "cs (capacity 1) held by" in ran.stdout
    data = json.loads(scenario.read_text())
    assert data["finding"]["rule"] == "violation"
    # Replying in the section needs two nodes; the backward comparison a third one to wait for.
    assert data["nodes"] == (2 if variant == "ra-reply-in-cs" else 3)
    assert len(data["steps"]) < 18  # a whole run is 18 steps
    again = cli("replay", scenario, "--node", built[variant])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout
    fixed = cli("replay", scenario, "--node", built["ra"])  # another program: proves nothing
    assert fixed.returncode == 3 and "did NOT reproduce" in fixed.stdout


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_the_correct_ricart_agrawala_passes_the_same_budgets(cli, built, strategy):
    ran = cli("test", "mutex", "--node", built["ra"], "--strategy", strategy, "--json")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(ran.stdout) | {"verdict": "PASS", "runs": 300} == json.loads(ran.stdout)


def test_systematic_search_says_whether_it_was_exhaustive(cli, built):
    small = cli("test", "mutex", "--node", built["ra"], "--nodes", "2", "--strategy", "systematic")
    assert small.returncode == 0 and "searched exhaustively: 9 schedules" in small.stdout, small.stdout
    every = cli(
        "test", "mutex", "--node", built["ra"], "-N", "2", "--strategy", "systematic", "--no-reduction"
    )
    assert every.returncode == 0 and "searched exhaustively: 14 schedules" in every.stdout
    big = cli("test", "mutex", "--node", built["ra"], "--strategy", "systematic", "--runs", "300", "--json")
    assert big.returncode == 3, (
        big.stdout
    )  # no finding in 300 schedules, and the tree goes on: nothing proven
    assert json.loads(big.stdout)["verdict"] == "INCOMPLETE" and json.loads(big.stdout)["runs"] == 300


@pytest.mark.slow
def test_systematic_search_of_three_nodes_is_exhaustive_within_its_default_budget(cli, built):
    ran = cli("test", "mutex", "--node", built["ra"], "--strategy", "systematic", "--json")
    outcome = json.loads(ran.stdout)
    assert ran.returncode == 0 and outcome["exhaustive"] and outcome["runs"] == 7665, outcome


@pytest.mark.parametrize("variant", BROKEN)
def test_sleep_sets_miss_no_violation_an_unreduced_search_finds(cli, built, variant):
    """The same program, both searches: each finds the violation (the reduced one no later)."""
    runs = {}
    for flag in ((), ("--no-reduction",)):
        ran = cli(
            "test",
            "mutex",
            "--node",
            built[variant],
            "--strategy",
            "systematic",
            "--no-shrink",
            "--json",
            *flag,
        )
        assert ran.returncode == 1 and json.loads(ran.stdout)["finding"]["rule"] == "violation"
        runs[flag] = json.loads(ran.stdout)["runs"]
    assert runs[()] <= runs[("--no-reduction",)]


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_a_program_that_answers_duplicates_passes_under_duplicates(cli, built, strategy, tmp_path):
    """Each second receive is a delivery the header declares, not a forged message."""
    trace = tmp_path / "t.jsonl"
    argv = ("--duplicate", "2", "--strategy", strategy, "--runs", "100", "--trace", trace)
    ran = cli("test", "mutex", "--node", built["ra"], *argv)
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[0]["duplicates"] is True
    received = [e["id"] for e in events if e["event"] == "recv"]
    assert len(received) > len(set(received)), "the last run took some message twice"
    verified = cli("verify", trace)
    assert verified.returncode == 0 and "mutex: SAFE" in verified.stdout, verified.stdout
    # the same trace without the declaration: each second receive is a message nobody sent
    undeclared = tmp_path / "undeclared.jsonl"
    events[0].pop("duplicates")
    undeclared.write_text("".join(json.dumps(e) + "\n" for e in events))
    refused = cli("verify", undeclared)
    assert refused.returncode == 1 and "[recv-without-send]" in refused.stdout
    assert "received already: the run header declares no duplicates" in refused.stdout


def test_a_program_that_counts_a_duplicated_reply_twice_is_a_violation(cli, built, tmp_path):
    scenario = tmp_path / "dup.json"
    ran = cli("test", "mutex", "--node", built["ra-dup"], "--duplicate", "1", "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout + ran.stderr
    assert "[capacity] cs (capacity 1) held by" in ran.stdout and "recv-without-send" not in ran.stdout
    assert "duplicate node-" in ran.stdout  # the shrunk schedule still needs its duplicate
    without = cli("test", "mutex", "--node", built["ra-dup"], "--runs", "100")
    assert without.returncode == 0, without.stdout  # only a duplicate breaks it
    again = cli("replay", scenario, "--node", built["ra-dup"])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout
    fixed = cli("replay", scenario, "--node", built["ra"])  # played on past its steps, to the run's end
    assert fixed.returncode == 0 and "did NOT reproduce" in fixed.stdout, fixed.stdout
    assert "more, in the default order, to the run's end" in fixed.stdout and "mutex: SAFE" in fixed.stdout


def test_a_run_without_duplicates_declares_none(cli, built, tmp_path):
    trace = tmp_path / "t.jsonl"
    assert cli("test", "mutex", "--node", built["ra"], "--runs", "5", "--trace", trace).returncode == 0
    assert "duplicates" not in json.loads(trace.read_text().splitlines()[0])


def test_a_crash_and_restart_breaks_ricart_agrawala_and_replays(cli, built, tmp_path):
    # A restarted node forgets its clock: its new request can be earlier than one it answered.
    scenario = tmp_path / "crash.json"
    ran = cli("test", "mutex", "--node", built["ra"], "--crash", "1", "--counterexample", scenario)
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout and "crash 1" in ran.stdout, ran.stdout
    assert cli("replay", scenario, "--node", built["ra"]).returncode == 1
    refused = cli("replay", scenario)  # a file never chooses the program that runs
    assert refused.returncode == 2 and "give the program to play it on with --node" in refused.stderr
    assert cli("test", "bees", "--node", built["bee"], "--crash", "1").returncode == 2


def test_the_trace_is_a_mutexlab_trace_verify_decides(cli, built, tmp_path):
    trace = tmp_path / "t.jsonl"
    assert cli("test", "mutex", "--node", built["ra-reply-in-cs"], "--trace", trace).returncode == 1
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["problem"] == "mutex" and header["capacities"] == {"cs": 1}
    assert cli("verify", trace).returncode == 1
    assert cli("test", "mutex", "--node", built["ra"], "--runs", "3", "--trace", trace).returncode == 0
    assert cli("verify", trace).returncode == 0


@pytest.mark.parametrize(
    "program", ["python3 ricart_agrawala.py", "node ricart_agrawala.js"], ids=["python", "javascript"]
)
def test_the_other_languages_pass(cli, program):
    if shutil.which(program.split()[0]) is None:
        missing(f"{program.split()[0]} is not installed")
    argv = program.replace(" ", f" {EXAMPLES}/", 1)
    assert cli("test", "mutex", "--node", argv, "--runs", "40").returncode == 0
    assert cli("test", "mutex", "--node", argv, "--nodes", "2", "--strategy", "systematic").returncode == 0


# Two bees on two reeds at a time, one flower, two more waiting for a reed: every rule in play.
COLONY = ["--nodes", "4", "-o", "reeds=2", "-o", "flowers=1", "-o", "eggs=1", "-o", "cocoons=2"]


def test_a_c_bee_colony_is_safe_and_the_bees_audit_judges_it(cli, built, tmp_path):
    trace = tmp_path / "bees.jsonl"
    ran = cli("test", "bees", "--node", built["bee"], *COLONY, "--runs", "60", "--trace", trace)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    verified = cli("verify", trace)
    assert verified.returncode == 0 and verified.stdout.startswith("bees: SAFE")
    assert "every bee ends DEAD or RETIRED" in verified.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_bee_short_of_one_permission_is_caught(cli, built, tmp_path, strategy):
    scenario = tmp_path / "bees.json"
    ran = cli(
        "test",
        "bees",
        "--node",
        built["bee-broken"],
        *COLONY,
        "--strategy",
        strategy,
        "--counterexample",
        scenario,
    )
    assert ran.returncode == 1 and "flower (capacity 1) held by" in ran.stdout, ran.stdout
    assert cli("replay", scenario, "--node", built["bee-broken"]).returncode == 1


# -- programs that misbehave ------------------------------------------------------------------
MISBEHAVING = {
    # each answers init, then misbehaves on its first request; it records its pid (and a child's)
    "garbage": "print('this is not json', flush=True)",
    "huge": 'print(\'{"type":"log","x":"\' + \'x\' * 200000 + \'"}\', flush=True)',
    "crash": "sys.exit(7)",
    "raises": "raise KeyError('no such peer')",
    "babbler": "sys.stderr.write('x' * 1000000 + '\\nlast words\\n'); sys.stderr.flush(); sys.exit(5)",
    "flood": "[print(json.dumps({'type': 'state', 'state': 'S'})) for _ in range(5000)]; sys.stdout.flush()",
    "silent": "child = subprocess.Popen(['sleep', '60']); pids.write(f'{child.pid}\\n'); pids.flush(); time.sleep(60)",
    "stranger": "print(json.dumps({'type': 'send', 'to': 99, 'body': {}}), flush=True)",
    "deaf": "print(json.dumps({'type': 'done'}), flush=True)",  # never enters: a deadlock
}
RULES = {
    "garbage": ("garbage", "not JSON"),
    "huge": ("garbage", "longer than 65,536 bytes"),
    "crash": ("crashed", "exited with status 7"),
    # its last lines on standard error, read as it writes them (a megabyte does not block it)
    "raises": ("crashed", "exited with status 1 while handling request; its standard error ended with"),
    "babbler": ("crashed", "exited with status 5 while handling request; its standard error ended with"),
    "flood": ("flood", "more than 1000 lines"),
    "silent": ("stalled", "did not answer request within 3 s"),
    "stranger": ("garbage", "a send to 99"),
    "deaf": ("deadlock", "still wait"),
}
TEMPLATE = """import json, os, subprocess, sys, time
pids = open({pids!r}, 'a'); pids.write(f'{{os.getpid()}}\\n'); pids.flush()
for line in sys.stdin:
    kind = json.loads(line)['type']
    if kind == 'request':
        {action}
        continue
    print(json.dumps({{'type': 'done'}}), flush=True)
"""


@pytest.mark.parametrize("how", sorted(MISBEHAVING))
def test_a_misbehaving_node_is_a_finding_and_nothing_is_left_running(cli, tmp_path, how):
    pids = tmp_path / "pids"
    program = tmp_path / f"{how}.py"
    program.write_text(TEMPLATE.format(pids=str(pids), action=MISBEHAVING[how]))
    timeout = "3" if how == "silent" else "20"  # the others answer at once, however loaded the machine
    ran = cli("test", "mutex", "--node", f"{sys.executable} {program}", "--timeout", timeout, "--runs", "2")
    rule, words = RULES[how]
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert f"FINDING [{rule}]" in ran.stdout and words in ran.stdout, ran.stdout
    assert "Traceback" not in ran.stdout + ran.stderr
    said = {"raises": "KeyError: 'no such peer'", "babbler": "last words"}.get(how)
    assert said is None or said in ran.stdout, ran.stdout
    started = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while not gone(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(started), f"left running: {started}"


def test_a_program_that_cannot_start_or_bad_flags_are_exit_2(cli, tmp_path):
    ran = cli("test", "mutex", "--node", str(tmp_path / "nothing-here"))
    assert ran.returncode == 2 and "cannot start" in ran.stderr
    assert cli("test", "mutex", "--node", "").returncode == 2
    assert cli("test", "mutex", "--node", "'unbalanced").returncode == 2
    assert cli("test", "nonsense", "--node", "true").returncode == 2
    assert cli("test", "mutex", "--node", "true", "--runs", "0").returncode == 2
    for flag in ("--timeout", "--time"):  # a time select() cannot wait: bad input, not exit 4
        for value in ("1e300", "inf", "nan", "0"):
            ran = cli("test", "mutex", "--node", "true", flag, value)
            assert ran.returncode == 2 and f"argument {flag}:" in ran.stderr, (flag, value, ran.stderr)


@pytest.mark.parametrize(
    "given",
    [
        ["--regex", "in CS"],
        ["--regex-file", "/dev/null"],
        ["--sync-sends"],
        ["--np", "3"],
        ["--stdin", "/dev/null"],
    ],
)
def test_an_option_of_mpi_given_to_a_node_program_is_refused(cli, given):
    # before: --regex, --regex-file, --sync-sends and --np were silently ignored, the run went on
    ran = cli("test", "mutex", "--node", "true", "--runs", "1", *given)
    assert ran.returncode == 2 and f"{given[0]} is for --mpi" in ran.stderr, ran.stderr


NONDETERMINISTIC = """import json, random, sys
for line in sys.stdin:
    kind = json.loads(line)['type']
    if kind == 'request':
        print(json.dumps({'type': 'state', 'state': str(random.random())}))
        print(json.dumps({'type': 'enter', 'resource': 'cs'}))
    elif kind == 'release':
        print(json.dumps({'type': 'exit', 'resource': 'cs'}))
    print(json.dumps({'type': 'done'}), flush=True)
"""


def test_a_nondeterministic_program_is_named_where_it_diverged(cli, tmp_path):
    program = tmp_path / "dice.py"
    program.write_text(NONDETERMINISTIC)
    # Alone, no messages: the only schedules differ in the order of the workload's steps; the
    # second run replays the first's prefix and the answer to the same request differs.
    ran = cli(
        "test", "mutex", "--node", f"{sys.executable} {program}", "--nodes", "2", "--strategy", "systematic"
    )
    assert ran.returncode == 1, ran.stdout
    assert (
        "FINDING [nondeterministic]" in ran.stdout and "node 1 answered request cs differently" in ran.stdout
    )


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_an_interrupted_test_leaves_nothing_running(tmp_path, signal_name):
    import signal

    pids = tmp_path / "pids"
    program = tmp_path / "silent.py"
    program.write_text(TEMPLATE.format(pids=str(pids), action=MISBEHAVING["silent"]))
    command = [sys.executable, "-m", "mutexlab", "test", "mutex", "--node", f"{sys.executable} {program}"]
    env = {**os.environ, "PYTHONFAULTHANDLER": "1"}  # a hang shows where: SIGABRT prints the stacks
    # SIGINT as a terminal gives it: a test run started in the background (`cmd &`, nohup, CI
    # runners) ignores SIGINT, and a child inherits that, so the signal would never reach it
    proc = subprocess.Popen(
        command + ["--timeout", "60"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - a single-threaded start
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and (not pids.exists() or len(pids.read_text().split()) < 4):
        time.sleep(0.05)  # three nodes and the silent one's child
    proc.send_signal(getattr(signal, signal_name))
    try:
        out, err = proc.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        _, stacks = proc.communicate(timeout=30)
        pytest.fail(
            f"still running 30 s after {signal_name}; its threads:\n{stacks.decode(errors='replace')}"
        )
    # 128 + the signal, as a shell reports it: Ctrl-C 130, SIGTERM 143 (before: 130 for both)
    expected = 143 if signal_name == "SIGTERM" else 130
    assert proc.returncode == expected and b"interrupted" in err and b"Traceback" not in err, err
    started = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while not gone(started) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(started), f"left running: {started}"


def test_an_interrupted_systematic_search_says_how_far_it_got(built):
    # Before, Ctrl-C in a long search printed only "interrupted": the schedules it had run, and
    # that it proved nothing, went unsaid. Now the verdict line says both; the exit stays 130.
    import signal

    command = [sys.executable, "-m", "mutexlab", "test", "mutex", "--node", built["ra"]]
    proc = subprocess.Popen(
        [*command, "--strategy", "systematic"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),  # noqa: PLW1509 - a single-threaded start
    )
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (children.exists() and children.read_text().split()):
        time.sleep(0.1)  # mutexlab started (it interrupted while importing only says KeyboardInterrupt)
    time.sleep(2)  # its default budget runs 7,665 schedules: far from done
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err, err
    said = re.search(r"N=3: INCOMPLETE — interrupted, no finding in systematic: (\d+) runs?, ", out)
    assert said and int(said[1]) >= 1 and "nothing proven" in out, out


def test_a_line_past_done_is_a_protocol_finding(cli, tmp_path):
    program = tmp_path / "chatty.py"
    program.write_text(
        TEMPLATE.format(
            pids=str(tmp_path / "pids"),
            action="print(json.dumps({'type': 'done'}) + '\\n' + json.dumps({'type': 'state', 'state': 'X'}), flush=True)",
        )
    )
    ran = cli("test", "mutex", "--node", f"{sys.executable} {program}", "--runs", "1")
    assert ran.returncode == 1 and "FINDING [protocol]" in ran.stdout and "past its done line" in ran.stdout


NAMED_FIELDS = """import json, sys
for line in sys.stdin:
    kind = json.loads(line)['type']
    if kind == 'request':
        print(json.dumps({'type': 'event', 'event': 'note', 'node': 5, 'kind': 'k', 'self': 1}))
        print(json.dumps({'type': 'enter', 'resource': 'cs'}))
    elif kind == 'release':
        print(json.dumps({'type': 'exit', 'resource': 'cs'}))
    print(json.dumps({'type': 'done'}), flush=True)
"""


def test_an_events_own_fields_may_be_named_like_anything(cli, tmp_path):
    # A node's event fields are its own: "node", "kind" or "self" are kept in the trace, not an
    # internal error (exit 4) of mutexlab's.
    program = tmp_path / "named.py"
    program.write_text(NAMED_FIELDS)
    trace = tmp_path / "t.jsonl"
    ran = cli(
        "test",
        "mutex",
        "--node",
        f"{sys.executable} {program}",
        "--nodes",
        "1",
        "--runs",
        "1",
        "--trace",
        str(trace),
    )
    assert ran.returncode == 0, ran.stdout + ran.stderr
    notes = [e for e in map(json.loads, trace.read_text().splitlines()) if e["event"] == "note"]
    assert notes and notes[0]["node"] == 5 and notes[0]["kind"] == "k" and notes[0]["self"] == 1


def test_a_budget_that_allows_no_run_is_not_a_pass(cli):
    # --time shorter than one run: nothing was checked, so no PASS (exit 3, INCOMPLETE).
    program = f"{sys.executable} {EXAMPLES / 'ricart_agrawala.py'}"
    ran = cli("test", "mutex", "--node", program, "--nodes", "2", "--time", "1e-9", "--json")
    outcome = json.loads(ran.stdout)
    assert outcome["runs"] == 0 and outcome["verdict"] == "INCOMPLETE" and ran.returncode == 3, ran.stdout


@pytest.mark.parametrize("finding", ['"boom"', "[1]", '{"rule": 7}'])
def test_a_scenario_whose_finding_is_no_finding_is_bad_input(cli, tmp_path, finding):
    scenario = tmp_path / "s.json"
    scenario.write_text(
        '{"kind": "mutexlab-program-scenario", "problem": "mutex", "nodes": 2, "requests": 1, '
        f'"program": [], "finding": {finding}, "steps": [], "answers": []}}'
    )
    program = f"{sys.executable} {EXAMPLES / 'ricart_agrawala.py'}"
    ran = cli("replay", str(scenario), "--node", program)
    assert ran.returncode == 2 and "malformed scenario" in ran.stderr, ran.stdout + ran.stderr


BAD_EGG = """import json, sys
for line in sys.stdin:
    if json.loads(line)['type'] == 'init':
        print(json.dumps({'type': 'event', 'event': 'egg', 'reed': [1], 'count': 1, 'in_reed': 1}))
    print(json.dumps({'type': 'done'}), flush=True)
"""


def test_an_event_whose_fields_the_audit_cannot_read_is_garbage(cli, tmp_path):
    # An egg in reed [1]: a finding about the node (exit 1), as verify refuses it in a trace
    # file (exit 2), never a TypeError inside the audit (exit 4).
    program = tmp_path / "bad_egg.py"
    program.write_text(BAD_EGG)
    ran = cli("test", "bees", "--node", f"{sys.executable} {program}", "--nodes", "2", "--runs", "1")
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [garbage]" in ran.stdout and "'reed' must be a whole number" in ran.stdout, ran.stdout


SAYS_HELLO = """import json, sys
for line in sys.stdin:
    message = json.loads(line)
    if message['type'] == 'init':
        peer = message['peers'][0]
    elif message['type'] == 'request':
        print(json.dumps({'type': 'send', 'to': peer, 'body': 'hello'}))
        print(json.dumps({'type': 'enter', 'resource': 'cs'}))
    elif message['type'] == 'release':
        print(json.dumps({'type': 'exit', 'resource': 'cs'}))
    print(json.dumps({'type': 'done'}), flush=True)
"""


def test_a_trace_with_a_body_that_is_no_object_is_read_by_verify(cli, tmp_path):
    # A body may be any JSON (docs/test-any-program.md); the trace written must still be one
    # that verify reads (its msg an object), not refused as bad input.
    program = tmp_path / "hello.py"
    program.write_text(SAYS_HELLO)
    trace = tmp_path / "t.jsonl"
    ran = cli(
        "test",
        "mutex",
        "--node",
        f"{sys.executable} {program}",
        "--nodes",
        "2",
        "--runs",
        "1",
        "--no-shrink",
        "--trace",
        str(trace),
    )
    assert ran.returncode == 1 and "FINDING [violation]" in ran.stdout, ran.stdout
    verified = cli("verify", str(trace))
    assert verified.returncode == 1 and "VIOLATION" in verified.stdout, verified.stdout + verified.stderr


def test_an_unwritable_counterexample_or_trace_is_refused_before_any_node_starts(cli, tmp_path):
    # Not after a whole search, its finding lost: nothing is started at all.
    started = tmp_path / "started"
    program = tmp_path / "marks.py"
    program.write_text(
        f"open({str(started)!r}, 'a').close()\n" + TEMPLATE.format(pids=str(tmp_path / "p"), action="pass")
    )
    for flag in ("--counterexample", "--trace"):
        ran = cli(
            "test",
            "mutex",
            "--node",
            f"{sys.executable} {program}",
            "--runs",
            "1",
            flag,
            str(tmp_path / "no" / "x"),
        )
        assert ran.returncode == 2 and f"cannot write the {flag[2:]}" in ran.stderr, ran.stderr
        assert not started.exists(), f"{flag}: the nodes were started before the path was refused"


@pytest.mark.parametrize(
    "scenario, words",
    [
        ('{"kind": "mutexlab-program-scenario", "problem": "mutex", "nodes": 2}', "it has no 'steps'"),
        ("[1]", "not a JSON object"),
        (
            '{"kind": "mutexlab-program-scenario", "problem": "mutex", "nodes": 99999999, "steps": []}',
            "its 'nodes' (99999999) are not a whole number from 1 to 100",
        ),
        (
            '{"kind": "mutexlab-program-scenario", "problem": "mutex", "nodes": 2, "steps": [["deliver", 1, "x"]]}',
            "step 1 is not a step (an object with 'do' and 'node'): ['deliver', 1, 'x']",
        ),
    ],
)
def test_a_malformed_scenario_says_what_is_wrong_in_its_own_words(cli, tmp_path, scenario, words):
    # Not a bare KeyError ("'steps'"), a Python TypeError, or a flag the user never gave (--nodes).
    path = tmp_path / "s.json"
    path.write_text(scenario)
    program = f"{sys.executable} {EXAMPLES / 'ricart_agrawala.py'}"
    ran = cli("replay", str(path), "--node", program)
    assert ran.returncode == 2 and f"malformed scenario: {words}" in ran.stderr, ran.stderr
