"""Problems and solutions: the kmutex and philosophers problems, solved by files a user writes.

The examples of examples/solutions/ are copied to a directory outside the checkout and named by
path in every command: simulate, verify of its trace, check (with --cross-check, --metrics,
--swarm), replay of the broken ones' counterexamples from elsewhere, compare with ``-o k=3``,
explore's session, and over RabbitMQ run. The problems' rules are planted broken in a trace and
in a solution: the audit and check both catch them. A built-in solution finds its problem by the
same path as a user's file.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mutexlab.audit import numbered, verify_events
from mutexlab.explore.session import Config, Session
from mutexlab.problems import PROBLEMS
from mutexlab.protocols import registry
from mutexlab.sim import SimConfig, Simulation
from mutexlab.trace import TraceWriter

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "solutions"
FILES = ["kmutex_ricart_agrawala", "kmutex_ricart_agrawala_broken", "chandy_misra", "chandy_misra_broken"]


@pytest.fixture(scope="module")
def solutions(tmp_path_factory) -> Path:
    where = tmp_path_factory.mktemp("my-solutions")
    assert not where.resolve().is_relative_to(ROOT)
    for stem in FILES:
        shutil.copy(EXAMPLES / f"{stem}.py", where / f"{stem}.py")
    return where


def said(done) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


# -- the unit ----------------------------------------------------------------------------------
def test_a_solution_names_its_problem_and_built_ins_take_the_same_path(solutions):
    assert list(PROBLEMS)[:3] == ["mutex", "kmutex", "philosophers"]
    kmutex = registry.resolve(str(solutions / "kmutex_ricart_agrawala.py"))
    philosophers = registry.resolve(str(solutions / "chandy_misra.py"))
    assert registry.problem_of(kmutex) is PROBLEMS["kmutex"]
    assert registry.problem_of(philosophers) is PROBLEMS["philosophers"]
    assert registry.problem_of(registry.SPECS["ricart-agrawala"]) is PROBLEMS["mutex"]
    assert registry.flags_of(kmutex) is PROBLEMS["kmutex"].flags
    setup = registry.build_setup(str(solutions / "kmutex_ricart_agrawala.py"), 4, {"k": 3}, 0)
    assert setup.capacities == {"cs": 3} and setup.params["k"] == 3
    setup = registry.build_setup(str(solutions / "chandy_misra.py"), 3, {"meals": 1}, 0)
    assert setup.capacities == {"fork:*": 1, "meal": 3}
    assert sorted(setup.names.values()) == ["philosopher-1", "philosopher-2", "philosopher-3"]


def test_a_mutex_solution_file_stays_short():
    assert len((EXAMPLES / "kmutex_ricart_agrawala.py").read_text().splitlines()) <= 150


def test_a_setup_that_misstates_the_problems_resources_is_refused(solutions, tmp_path, cli):
    liar = tmp_path / "liar.py"
    liar.write_text(
        "from kmutex_ricart_agrawala import SPEC as BASE\nfrom dataclasses import replace\n\n\n"
        "def make_setup(p, o, s=0):\n    setup = BASE.make_setup(p, o, s)\n    setup.algorithm = 'liar'\n"
        "    setup.capacities = {'cs': p}\n    return setup\n\n\n"
        "SPEC = replace(BASE, name='liar', make_setup=make_setup)\n"
    )
    shutil.copy(solutions / "kmutex_ricart_agrawala.py", tmp_path)
    done = cli("simulate", "kmutex", "-a", str(liar), "-N", "3", "-k", "2", cwd=tmp_path)
    assert done.returncode == 2, said(done)
    assert "declares the resources {'cs': 3}, but the problem kmutex states {'cs': 2}" in done.stderr


@pytest.mark.parametrize(
    "args, message",
    [
        (["kmutex", "-N", "3", "-k", "4"], "k (4) must not exceed the number of nodes (3)"),
        (["philosophers", "-N", "1"], "the dining philosophers need at least 2 philosophers, got 1"),
    ],
)
def test_a_configuration_the_problem_refuses_is_one_line_exit_2(solutions, args, message, cli, tmp_path):
    stem = "kmutex_ricart_agrawala" if args[0] == "kmutex" else "chandy_misra"
    done = cli("simulate", args[0], "-a", str(solutions / f"{stem}.py"), *args[1:], cwd=tmp_path)
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr, said(done)


def test_a_solution_run_under_another_problem_is_sent_to_its_own(solutions, cli, tmp_path):
    done = cli("simulate", "mutex", "-a", str(solutions / "chandy_misra.py"), "-N", "3", cwd=tmp_path)
    assert done.returncode == 2, said(done)
    assert "mutexlab simulate philosophers --algorithm" in done.stderr


# -- simulate, verify, report ------------------------------------------------------------------
@pytest.mark.parametrize(
    "stem, problem, args, name",
    [
        ("kmutex_ricart_agrawala", "kmutex", ["-N", "4", "-k", "2", "-M", "2"], "k-ricart-agrawala"),
        ("chandy_misra", "philosophers", ["-N", "5", "--meals", "2"], "chandy-misra"),
    ],
)
def test_simulate_then_verify_and_report_its_trace_by_file(
    solutions, stem, problem, args, name, tmp_path, cli
):
    path = str(solutions / f"{stem}.py")
    done = cli("simulate", problem, "-a", path, *args, "--seed", "2", "--trace", "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    done = cli("verify", "-a", path, "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith(f"{name}: SAFE"), said(done)
    if problem == "philosophers":
        assert "a philosopher eats only holding both its forks" in done.stdout
    done = cli("report", "-a", path, "t.jsonl", "-o", "t.html", cwd=tmp_path)
    assert done.returncode == 0 and "algorithm-unknown" not in (tmp_path / "t.html").read_text(), said(done)


def test_compare_passes_the_problems_option_to_every_solution(solutions, tmp_path, cli):
    files = [str(solutions / f"{stem}.py") for stem in FILES[:2]]
    done = cli("compare", "-N", "4", "--algorithms", ",".join(files), "-o", "k=3", "--json", cwd=tmp_path)
    assert done.returncode == 1, said(done)  # the broken one is unsafe
    runs = {r["algorithm"]: r for r in json.loads(done.stdout)["runs"]}
    assert runs["k-ricart-agrawala"]["verdict"] == "ok"
    assert runs["k-ricart-agrawala-broken"]["verdict"] == "UNSAFE"
    assert any("cs (capacity 3)" in v for v in runs["k-ricart-agrawala-broken"]["violations"])
    done = cli("compare", "-N", "4", "--algorithms", f"{files[0]},ricart-agrawala", cwd=tmp_path)
    assert done.returncode == 2 and "one problem at a time" in done.stderr, said(done)


# -- check and replay --------------------------------------------------------------------------
def checked(cli, tmp_path, problem: str, path: Path, *args: str):
    done = cli("check", problem, "-a", str(path), *args, "--json", cwd=tmp_path)
    return done, json.loads(done.stdout) if done.stdout.strip().startswith("{") else {}


def test_check_passes_chandy_misra_with_the_cross_check_agreeing(solutions, tmp_path, cli):
    done, outcome = checked(cli, tmp_path, "philosophers", solutions / "chandy_misra.py", "--cross-check")
    assert done.returncode == 0, said(done)
    assert outcome["verdict"] == "pass" and outcome["cross_check"]["agrees"] is True
    assert "a philosopher eats only holding both its forks" in outcome["properties"]
    done, outcome = checked(cli, tmp_path, "philosophers", solutions / "chandy_misra.py", "--metrics")
    assert done.returncode == 0 and outcome["verdict"] == "pass", said(done)


def test_check_passes_k_ricart_agrawala_small(solutions, tmp_path, cli):
    done, outcome = checked(
        cli, tmp_path, "kmutex", solutions / "kmutex_ricart_agrawala.py", "-N", "2", "-k", "1"
    )
    assert done.returncode == 0 and outcome["verdict"] == "pass", said(done)


@pytest.mark.slow
def test_check_passes_k_ricart_agrawala_with_the_cross_check_agreeing(solutions, tmp_path, cli):
    path = solutions / "kmutex_ricart_agrawala.py"
    done, outcome = checked(cli, tmp_path, "kmutex", path, "-N", "3", "-k", "2", "--cross-check")
    assert done.returncode == 0, said(done)
    assert outcome["verdict"] == "pass" and outcome["cross_check"]["agrees"] is True


@pytest.mark.parametrize(
    "stem, problem, args, finding, audited",
    [
        (
            "kmutex_ricart_agrawala_broken",
            "kmutex",
            ["-N", "3", "-k", "2"],
            "capacity: cs (capacity 2) held by",
            "[capacity] cs (capacity 2)",
        ),
        (
            "chandy_misra_broken",
            "philosophers",
            [],
            "invariant: eats-without-forks: philosopher-1 eats without fork:2",
            "[eats-without-forks] philosopher-1 eats without fork:2",
        ),
    ],
)
def test_check_finds_each_broken_solution_and_its_counterexample_replays_from_elsewhere(
    solutions, stem, problem, args, finding, audited, tmp_path, cli
):
    path = str(solutions / f"{stem}.py")
    done = cli("check", problem, "-a", path, *args, "--counterexample", "ce.json", cwd=tmp_path)
    assert done.returncode == 1, said(done)
    assert f"verdict:      VIOLATION — {finding}" in done.stdout
    assert "replay reproduces it: yes" in done.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = cli("replay", str(tmp_path / "ce.json"), "--trace", "ce.jsonl", cwd=elsewhere)
    assert done.returncode == 1 and audited in done.stdout, said(done)
    done = cli("verify", "-a", path, "ce.jsonl", cwd=elsewhere)
    assert done.returncode == 1 and audited in done.stdout, said(done)
    done = cli("check", problem, "-a", path, *args, "--swarm", "--json", cwd=tmp_path)
    assert done.returncode == 1, said(done)


# -- the rules, planted broken in a trace --------------------------------------------------------
def simulated(path: Path, processes: int, options: dict) -> list[dict]:
    setup = registry.build_setup(str(path), processes, options, 0)
    trace = TraceWriter(None, keep=True)
    Simulation(setup, SimConfig(seed=1, dwell={"think": 1.0, "eat": 1.0, "cs": 1.0}), trace).run()
    return numbered(trace.kept)


def test_the_audit_catches_a_meal_without_a_fork_planted_in_a_safe_trace(solutions):
    events = simulated(solutions / "chandy_misra.py", 3, {"meals": 1})
    assert verify_events(events).ok
    # philosopher-2 never picked its right fork up: drop that enter and its exit
    planted = [e for e in events if not (e["pid"] == "philosopher-2" and e.get("resource") == "fork:3")]
    verdict = verify_events(numbered([{k: v for k, v in e.items() if k != "_line"} for e in planted]))
    assert [v.rule for v in verdict.safety] == ["eats-without-forks"], verdict.render()
    assert "philosopher-2 eats without fork:3" in verdict.safety[0].message


def test_the_audit_catches_k_plus_one_inside_planted_in_a_safe_trace(solutions):
    events = simulated(solutions / "kmutex_ricart_agrawala.py", 3, {"k": 2, "requests": 2})
    assert verify_events(events).ok
    header = dict(events[0], capacities={"cs": 1})  # the same run, judged as if K were 1
    verdict = verify_events(
        numbered([{k: v for k, v in e.items() if k != "_line"} for e in [header, *events[1:]]])
    )
    assert any(v.rule == "capacity" and "cs (capacity 1)" in v.message for v in verdict.safety), (
        verdict.render()
    )


# -- explore ---------------------------------------------------------------------------------------
def test_explore_session_runs_each_solution_to_its_end(solutions):
    for stem, processes, options in (
        ("kmutex_ricart_agrawala", 3, {"k": 2, "requests": 1}),
        ("chandy_misra", 3, {"meals": 1}),
    ):
        session = Session(Config(str(solutions / f"{stem}.py"), processes, options))
        session.run_to_end(seed=1)
        findings = session.state()["findings"]
        assert findings["status"] == "end" and not findings.get("violations"), findings


def test_explore_session_shows_the_broken_philosopher(solutions):
    session = Session(Config(str(solutions / "chandy_misra_broken.py"), 3, {"meals": 1}))
    session.step("request:1")
    findings = session.state()["findings"]
    assert findings["status"] == "violation", findings
    assert any(v["rule"] == "eats-without-forks" for v in findings["violations"])


# -- over RabbitMQ -----------------------------------------------------------------------------------
RUN = ["--dwell", "0.05", "--stall-timeout", "10"]


@pytest.mark.broker
@pytest.mark.slow
@pytest.mark.parametrize(
    "stem, problem, args, entries",
    [
        ("kmutex_ricart_agrawala", "kmutex", ["-N", "3", "-k", "2", "-M", "2"], "entries: cs 6"),
        ("chandy_misra", "philosophers", ["-N", "3", "--meals", "2"], "entries: fork 12, meal 6"),
    ],
)
def test_run_over_rabbitmq_each_solution(solutions, stem, problem, args, entries, tmp_path, amqp_url):
    from test_your_algorithm import mutexlab

    path = str(solutions / f"{stem}.py")
    done = mutexlab(
        tmp_path, "run", problem, "-a", path, *args, "--amqp-url", amqp_url, *RUN, "--trace", "r.jsonl"
    )
    assert done.returncode == 0 and entries in done.stdout and ": SAFE" in done.stdout, said(done)
    done = mutexlab(tmp_path, "verify", "-a", path, "r.jsonl")
    assert done.returncode == 0, said(done)


def test_explore_of_a_problem_without_a_built_in_solution_asks_for_one(cli, tmp_path):
    done = cli("explore", "philosophers", "--no-browser", cwd=tmp_path)
    assert done.returncode == 2 and "name the solution: --algorithm FILE" in done.stderr, said(done)


def test_a_solution_naming_no_such_problem_is_one_line_exit_2(solutions, tmp_path, cli):
    odd = tmp_path / "odd.py"
    odd.write_text(
        "from dataclasses import replace\nfrom kmutex_ricart_agrawala import SPEC\n\n"
        "SPEC = replace(SPEC, name='odd', problem='barbers', flags=None)\n"
    )
    shutil.copy(solutions / "kmutex_ricart_agrawala.py", tmp_path)
    done = cli("simulate", "kmutex", "-a", str(odd), "-N", "3", cwd=tmp_path)
    assert (
        done.returncode == 2 and "unknown problem 'barbers'; choose one of: mutex, kmutex" in done.stderr
    ), said(done)


def test_the_file_in_place_of_the_problem_implies_it(solutions, tmp_path, cli):
    path = str(solutions / "chandy_misra.py")
    done = cli("simulate", path, "-N", "3", "--meals", "1", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("chandy-misra: 3 philosophers, 1 meal each"), said(
        done
    )
    done = cli(
        "check", str(solutions / "kmutex_ricart_agrawala_broken.py"), "-N", "3", "-k", "2", cwd=tmp_path
    )
    assert done.returncode == 1 and "capacity: cs (capacity 2)" in done.stdout, said(done)
    done = cli("simulate", str(tmp_path / "missing.py"), cwd=tmp_path)
    assert done.returncode == 2 and "missing.py does not exist" in done.stderr, said(done)
