"""``mutexlab test elves``: the hamster killers played whole by one program — the mayor as node 0,
the elves as nodes 1..N — judged by the ``elves`` problem's own audit and rules (elves_rules,
elves_audit), not by mutexlab's solution's message checks.

The examples are examples/nodes/elves_ledger.py (the no-arbiter ledger design, importing nothing
of mutexlab) and its port to C, elves_ledger.c (built with gcc into a temporary directory: a skip
without gcc, a failure under CI); their broken twins answer every ledger request at once, so two
elves take the same contract: caught by every strategy, the shrunk scenario replays (exit 1).
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from conftest import build_c_nodes

from mutexlab.cli import main
from mutexlab.director.node import COMMAND_ENV
from mutexlab.director.problem import choices, make_problem
from mutexlab.director.solution import program_solution

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "nodes"
EXAMPLE = EXAMPLES / "elves_ledger.py"
LEDGER = shlex.join([sys.executable, str(EXAMPLE)])
BROKEN = LEDGER + " --broken"
SMALL = ("-o", "contracts=2", "-o", "rounds=1")  # one round of two contracts: quick runs
STRATEGIES = ("random", "pct", "systematic")
C_VARIANTS = {"elves": ("elves_ledger.c", []), "elves-eager": ("elves_ledger.c", ["-DBROKEN_EAGER"])}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    return build_c_nodes(tmp_path_factory.mktemp("elves"), EXAMPLES, C_VARIANTS)


def test_elves_are_offered_played_whole_the_mayor_node_0():
    assert "elves" in choices()
    problem = make_problem("elves", 2, 0, {"contracts": 2, "rounds": 1}, 7)
    assert problem.first == 0 and not problem.driven and problem.algorithm is None
    assert problem.names == {0: "mayor", 1: "elf-1", 2: "elf-2"}
    assert problem.capacities == {"contract:*": 1, "pins": 3, "poison": 10}
    plan = problem.params["plan"]
    assert len(plan) == 1 and len(plan[0]) == 2 and problem.params["seed"] == 7
    assert problem.options["plan"] == plan and "seed" not in problem.options  # init carries the seed
    header = problem.header(["elf"])
    assert "algorithm" not in header and header["problem"] == "elves"  # the problem's audit judges


@pytest.mark.parametrize(
    ("flags", "words"),
    [
        (("-o", "elves=3"), "give the elves with --nodes"),
        (("-o", "wands=1"), "elves takes no option wands"),
        (("-o", "pins_per_elf=9"), "an elf needs 9 pins but only 3 exist"),
        (("--crash", "1"), "act on their own"),
    ],
)
def test_what_could_never_run_is_refused_naming_it(cli, flags, words):
    ran = cli("test", "elves", "--node", LEDGER, *flags)
    assert ran.returncode == 2 and words in ran.stderr, ran.stderr


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_the_ledger_elves_pass_and_verify_reads_the_trace_alike(cli, tmp_path, strategy):
    trace = tmp_path / "elves.jsonl"
    ran = cli("test", "elves", "--node", LEDGER, "--strategy", strategy, "--runs", "15", "--trace", trace)
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[0]["processes"]["0"] == "mayor" and "algorithm" not in events[0]
    stops = [e for e in events if e["event"] == "send" and e["type"] == "STOP"]
    assert len(stops) == 3 * 2 and all(e["pid"] == "mayor" and "round" in e["msg"] for e in stops)
    done = [e for e in events if e["event"] == "contract_done"]
    assert len(done) == sum(len(r) for r in events[0]["params"]["plan"])
    verified = cli("verify", trace)
    assert verified.returncode == 0 and verified.stdout.startswith("elves: SAFE"), verified.stdout
    assert "STOP only after every contract of its round is done" in verified.stdout  # elves_audit
    assert "one contract at a time" in verified.stdout  # elves_rules


def test_two_elves_one_contract_are_searched_exhaustively(cli):
    flags = ("-N", "2", "-o", "contracts=1", "-o", "rounds=1", "--strategy", "systematic")
    ran = cli("test", "elves", "--node", LEDGER, *flags)
    assert ran.returncode == 0 and "searched exhaustively: 71 schedules" in ran.stdout, ran.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_broken_ledger_is_caught_and_its_scenario_replays(cli, tmp_path, strategy):
    scenario = tmp_path / "ce.json"
    flags = ("--strategy", strategy, "--counterexample", scenario)
    ran = cli("test", "elves", "--node", BROKEN, "-N", "3", *SMALL, *flags)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [violation]" in ran.stdout and "[contract-twice] contract:1." in ran.stdout, ran.stdout
    data = json.loads(scenario.read_text())
    assert data["problem"] == "elves" and data["finding"]["rule"] == "violation"
    assert data["nodes"] == 2  # two elves (and the mayor) suffice
    replayed = cli("replay", scenario, "--node", BROKEN)
    assert replayed.returncode == 1, replayed.stdout + replayed.stderr
    assert "the recorded finding reproduced" in replayed.stdout
    fixed = cli("replay", scenario, "--node", LEDGER)  # the fix: the finding is gone
    assert fixed.returncode in (0, 3) and "did NOT reproduce" in fixed.stdout, fixed.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_mayor_that_stops_a_round_early_is_caught_by_the_problems_audit(cli, tmp_path, strategy):
    """The STOP is the program's own message: the audit reads its body's round, as elves_audit
    does in any trace, and its happened-before with the round's last contract_done."""
    scenario = tmp_path / "ce.json"
    flags = ("--strategy", strategy, "--counterexample", scenario)
    ran = cli("test", "elves", "--node", LEDGER + " --broken-mayor", "-N", "2", *SMALL, *flags)
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "[stop-before-done] mayor sent STOP of round 1" in ran.stdout, ran.stdout
    assert "to 2 steps on 1 node " in ran.stdout  # one elf suffices
    replayed = cli("replay", scenario, "--node", LEDGER + " --broken-mayor")
    assert replayed.returncode == 1 and "the recorded finding reproduced" in replayed.stdout


def test_the_c_port_passes_and_searches_the_same_schedules(cli, built):
    ran = cli("test", "elves", "--node", built["elves"], "--strategy", "pct", "--runs", "50")
    assert ran.returncode == 0 and "PASS" in ran.stdout, ran.stdout + ran.stderr
    flags = ("-N", "2", "-o", "contracts=1", "-o", "rounds=1", "--strategy", "systematic")
    ran = cli("test", "elves", "--node", built["elves"], *flags)
    assert ran.returncode == 0 and "searched exhaustively: 71 schedules" in ran.stdout, ran.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_the_eager_c_elf_is_caught_and_its_scenario_replays(cli, built, tmp_path, strategy):
    scenario = tmp_path / "ce.json"
    flags = ("--strategy", strategy, "--counterexample", scenario)
    ran = cli("test", "elves", "--node", built["elves-eager"], "-N", "3", *SMALL, *flags)
    assert ran.returncode == 1 and "[contract-twice] contract:1.1" in ran.stdout, ran.stdout + ran.stderr
    assert json.loads(scenario.read_text())["nodes"] == 2
    replayed = cli("replay", scenario, "--node", built["elves-eager"])
    assert replayed.returncode == 1 and "the recorded finding reproduced" in replayed.stdout


def test_a_program_that_does_nothing_is_judged_by_the_problems_progress_rules(cli, tmp_path):
    """Nothing happens: at rest, the problem's audit says what is missing — a deadlock."""
    idle = tmp_path / "idle.py"
    idle.write_text(
        'import sys\nfor line in sys.stdin:\n    sys.stdout.write(\'{"type": "done"}\\n\')\n    sys.stdout.flush()\n'
    )
    ran = cli(
        "test", "elves", "--node", shlex.join([sys.executable, str(idle)]), "-N", "2", *SMALL, "--runs", "1"
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert "FINDING [deadlock]" in ran.stdout and "the run is not finished" in ran.stdout
    for words in ("[not-finished] mayor", "[contract-not-done] contract 1.1", "[rounds-unfinished]"):
        assert words in ran.stdout, ran.stdout


def test_run_elves_node_is_the_problem_played_whole(monkeypatch):
    monkeypatch.setenv(COMMAND_ENV, "")
    spec = program_solution("elves")
    assert spec.name == "program-elves" and spec.fixed_roles == ("mayor",) and spec.role == "elf"
    setup = spec.make_setup(2, {"contracts": 2, "rounds": 1}, 3)
    assert setup.algorithm == "program-elves" and setup.names == {0: "mayor", 1: "elf-1", 2: "elf-2"}
    mayor, elf = setup.protocols[0], setup.protocols[1]
    assert mayor.peers == frozenset({1, 2}) and elf.peers == frozenset({0, 2})  # type: ignore[attr-defined]
    assert mayor.name == "mayor" and mayor.final_states == frozenset({"MAYOR_DONE", "ELF_DONE"})


@pytest.mark.broker
@pytest.mark.slow
def test_run_elves_over_rabbitmq_is_safe_and_traced_as_test_traces(amqp_url, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(COMMAND_ENV, "")
    trace = tmp_path / "elves.jsonl"
    argv = ["run", "elves", "--node", LEDGER, "--amqp-url", amqp_url, "--dwell", "0", "--json"]
    code = main([*argv, "-N", "3", "--rounds", "2", "--contracts", "3", "--trace", str(trace)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0, summary
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[0]["algorithm"] == "program-elves" and events[0]["problem"] == "elves"
    stops = [e for e in events if e["event"] == "send" and e["type"] == "STOP"]
    assert len(stops) == 2 * 3 and all(e["via"] == "PROGRAM" and "round" in e["msg"] for e in stops)
    assert sum(e["event"] == "contract_done" for e in events) == 6
