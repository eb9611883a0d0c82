"""``mutexlab test philosophers``: a C philosopher (Chandy–Misra) as the nodes, its broken twins
caught under every strategy and replayed, the trace judged by the problem's own rules.

The C examples are built with gcc into a temporary directory (a skip without gcc, a failure
under CI). ``verify`` of a ``test`` trace needs no ``--algorithm``: its header names the problem.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import build_c_nodes

from mutexlab.cli import main
from mutexlab.director.node import COMMAND_ENV
from mutexlab.director.problem import choices, make_problem
from mutexlab.director.solution import program_solution
from mutexlab.protocol import Enter, Schedule

EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "nodes"
VARIANTS = {
    "phil": ("philosopher.c", []),
    "phil-one-fork": ("philosopher.c", ["-DBROKEN_ONE_FORK"]),
    "phil-greedy": ("philosopher.c", ["-DBROKEN_GREEDY"]),
    "ra": ("ricart_agrawala.c", []),
}
STRATEGIES = ("random", "pct", "systematic")
# What each broken twin does wrong, as the finding says it.
BROKEN = {
    "phil-one-fork": ("violation", "[eats-without-forks] philosopher-"),
    "phil-greedy": ("deadlock", "still wait"),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict[str, str]:
    return build_c_nodes(tmp_path_factory.mktemp("philosophers"), EXAMPLES, VARIANTS)


def test_philosophers_is_offered_with_its_names_resources_and_workload():
    assert "philosophers" in choices()
    problem = make_problem("philosophers", 3, 2, {}, 0)
    assert problem.driven and problem.resource == "meal"
    assert problem.names == {1: "philosopher-1", 2: "philosopher-2", 3: "philosopher-3"}
    assert problem.capacities == {"fork:*": 1, "meal": 3}
    assert problem.params == {"philosophers": 3, "meals": 2}  # what the problem's rules read
    assert problem.options == {"meals": 2, "resource": "meal"}
    mutex = make_problem("mutex", 3, 1, {}, 0)  # unchanged: node-<pid>, its one resource
    assert (
        mutex.resource == "cs" and mutex.names[1] == "node-1" and mutex.params == {"nodes": 3, "requests": 1}
    )


@pytest.mark.parametrize("strategy", ("random", "pct"))
def test_the_c_philosopher_passes_the_default_budgets(cli, built, strategy):
    ran = cli("test", "philosophers", "--node", built["phil"], "--strategy", strategy, "--json")
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(ran.stdout) | {"verdict": "PASS", "runs": 300} == json.loads(ran.stdout)


def test_two_philosophers_are_searched_exhaustively(cli, built):
    ran = cli("test", "philosophers", "--node", built["phil"], "-N", "2", "--strategy", "systematic")
    assert ran.returncode == 0 and "searched exhaustively: 18 schedules" in ran.stdout, ran.stdout


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("variant", tuple(BROKEN))
def test_a_broken_philosopher_is_caught_and_its_scenario_replays(cli, built, tmp_path, strategy, variant):
    rule, words = BROKEN[variant]
    scenario = tmp_path / "ce.json"
    ran = cli(
        "test", "philosophers", "--node", built[variant], "--strategy", strategy, "--counterexample", scenario
    )
    assert ran.returncode == 1, ran.stdout + ran.stderr
    assert f"FINDING [{rule}]" in ran.stdout and words in ran.stdout, ran.stdout
    data = json.loads(scenario.read_text())
    assert data["problem"] == "philosophers" and data["finding"]["rule"] == rule
    assert data["nodes"] == 2  # both faults need only two philosophers
    again = cli("replay", scenario, "--node", built[variant])
    assert again.returncode == 1 and "the recorded finding reproduced" in again.stdout, again.stdout
    fixed = cli("replay", scenario, "--node", built["phil"])  # the correct one: no finding
    assert fixed.returncode != 1 and "did NOT reproduce" in fixed.stdout, fixed.stdout


def test_a_run_of_two_philosophers_is_shrunk_without_trying_one(cli, built):
    ran = cli("test", "philosophers", "--node", built["phil-greedy"], "-N", "2", "--json")
    assert ran.returncode == 1, ran.stdout + ran.stderr  # one philosopher is no problem: not tried
    assert json.loads(ran.stdout)["shrunk"]["nodes"] == [2, 2]


def test_the_trace_is_judged_by_the_philosophers_rules_without_algorithm(cli, built, tmp_path):
    trace = tmp_path / "p.jsonl"
    ran = cli("test", "philosophers", "--node", built["phil"], "-R", "2", "--runs", "20", "--trace", trace)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    header = json.loads(trace.read_text().splitlines()[0])
    assert header["problem"] == "philosophers" and "algorithm" not in header
    verified = cli("verify", trace)
    assert verified.returncode == 0 and verified.stdout.startswith("philosophers: SAFE"), verified.stdout
    assert "a philosopher eats only holding both its forks" in verified.stdout
    assert "every philosopher ends thinking" in verified.stdout
    broken = tmp_path / "broken.jsonl"
    assert cli("test", "philosophers", "--node", built["phil-one-fork"], "--trace", broken).returncode == 1
    caught = cli("verify", broken)
    assert caught.returncode == 1 and "[eats-without-forks]" in caught.stdout, caught.stdout


def test_bad_philosophers_flags_are_exit_2(cli, built):
    for flags, words in (
        (["-N", "1"], "need at least 2 philosophers"),
        (["-o", "meals=3"], "give the meals per node with --requests"),
        (["--requests", "0"], "--requests must be at least 1"),
        (["-o", "forks=3"], "philosophers takes no option forks"),
    ):
        ran = cli("test", "philosophers", "--node", built["phil"], *flags)
        assert ran.returncode == 2 and words in ran.stderr and "Traceback" not in ran.stderr, (
            flags,
            ran.stderr,
        )


def test_a_ricart_agrawala_node_is_no_philosopher(cli, built):
    # It enters cs, which the philosophers' run does not declare: the audit says so.
    ran = cli("test", "philosophers", "--node", built["ra"], "--runs", "5")
    assert ran.returncode == 1 and "[unknown-resource]" in ran.stdout, ran.stdout


# -- as a participant's node (run philosophers --node) ----------------------------------------------
def test_a_program_philosopher_enters_its_forks_and_leaves_its_meal_after_eating(built):
    setup = program_solution("philosophers", built["phil"]).make_setup(2, {"meals": 1}, 0)
    assert setup.algorithm == "program-philosophers"
    assert setup.names == {1: "philosopher-1", 2: "philosopher-2"}
    assert setup.params == {"philosophers": 2, "meals": 1}
    assert setup.run_event()["problem"] == "philosophers"  # verify needs no --algorithm
    one = setup.protocols[1]
    try:
        assert one.start() == [Schedule("request", "think")]  # the problem's dwells: think, eat
        assert one.state == "THINKING"
        effects = one.on_local("request")  # philosopher 1 starts with both forks
        assert [e for e in effects if isinstance(e, (Enter, Schedule))] == [
            Enter("fork:1"),
            Enter("fork:2"),
            Enter("meal"),
            Schedule("exit", "eat"),  # only the meal is left after a dwell
        ]
        assert one.state == "EATING"
        one.on_local("exit")
        assert one.state == "THINKING" and one.finished
    finally:
        one.close()


@pytest.mark.broker
@pytest.mark.slow
def test_run_philosophers_on_the_c_philosopher(amqp_url, built, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(COMMAND_ENV, "")
    trace = tmp_path / "p.jsonl"
    argv = ["run", "philosophers", "--amqp-url", amqp_url, "--dwell", "0", "--json", "-N", "3", "-M", "2"]
    code = main([*argv, "--node", built["phil"], "--trace", str(trace)])
    summary = json.loads(capsys.readouterr().out)
    assert code == 0, summary
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    assert events[0]["algorithm"] == "program-philosophers" and events[0]["problem"] == "philosophers"
    assert sum(e["event"] == "enter" and e["resource"] == "meal" for e in events) == 6
    assert main(["verify", str(trace)]) == 0  # no --algorithm: the header names the problem
    assert "a philosopher eats only holding both its forks" in capsys.readouterr().out
    code = main([*argv, "--node", built["phil-one-fork"]])
    assert code == 1 and "eats-without-forks" in capsys.readouterr().out


# -- verify: a header naming no algorithm but a problem gets that problem's checks ------------------
def _trace(path: Path, header: dict) -> Path:
    """Node 1 enters cs twice, asking once: only the mutex problem's own audit minds."""
    events = [
        {"event": "run", "pid": "run", **header},
        {"event": "request", "pid": "node-1", "vc": {"node-1": 1}, "resource": "cs"},
        {"event": "enter", "pid": "node-1", "vc": {"node-1": 2}, "resource": "cs"},
        {"event": "exit", "pid": "node-1", "vc": {"node-1": 3}, "resource": "cs"},
        {"event": "enter", "pid": "node-1", "vc": {"node-1": 4}, "resource": "cs"},
        {"event": "exit", "pid": "node-1", "vc": {"node-1": 5}, "resource": "cs"},
    ]
    path.write_text("".join(json.dumps(e) + "\n" for e in events))
    return path


BASE = {"processes": {"1": "node-1"}, "capacities": {"cs": 1}, "params": {"nodes": 1, "requests": 1}}


def test_verify_takes_the_checks_of_the_problem_a_header_names(cli, tmp_path):
    named = cli("verify", _trace(tmp_path / "named.jsonl", {"problem": "mutex", **BASE}), "--json")
    verdict = json.loads(named.stdout)
    assert named.returncode == 1 and "no entry without a request" in verdict["checks"], named.stdout
    assert [v["rule"] for v in verdict["violations"]] == ["enter-without-request"]
    # A program's run over RabbitMQ: an algorithm nobody else knows, of a problem mutexlab knows.
    program = _trace(tmp_path / "program.jsonl", {"algorithm": "program-mutex", "problem": "mutex", **BASE})
    rules = [v["rule"] for v in json.loads(cli("verify", program, "--json").stdout)["violations"]]
    assert rules == ["enter-without-request"]
    # Unchanged: no problem named (the generic checks; an unknown algorithm is undecided).
    plain = cli("verify", _trace(tmp_path / "plain.jsonl", BASE), "--json")
    assert plain.returncode == 0 and json.loads(plain.stdout)["violations"] == [], plain.stdout
    unknown = _trace(tmp_path / "unknown.jsonl", {"algorithm": "nobody-knows", **BASE})
    rules = [v["rule"] for v in json.loads(cli("verify", unknown, "--json").stdout)["violations"]]
    assert rules == ["algorithm-unknown"]
    stranger = cli("verify", _trace(tmp_path / "other.jsonl", {"problem": "no-such-problem", **BASE}))
    assert stranger.returncode == 0 and stranger.stdout.startswith("unknown algorithm: SAFE")
