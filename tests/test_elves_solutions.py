"""A user's own solution of the hamster killers, by file path from outside the checkout
(examples/solutions/elves_no_arbiter.py: no arbiter, a ledger every elf keeps under a
Ricart–Agrawala lock, copied to a temporary directory): every command of the ``elves`` problem
takes it, with the problem's rules and audit; its broken variant is caught by ``check`` with a
scenario ``replay`` plays again. mutexlab's own elves are a solution of the same problem."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mutexlab.explore.session import Config, Session
from mutexlab.problems import PROBLEMS
from mutexlab.protocols import registry

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "solutions"
STEMS = ("elves_no_arbiter", "elves_no_arbiter_broken")


@pytest.fixture(scope="module")
def mine(tmp_path_factory) -> Path:
    """One copy per module: a process loads a file once, and refuses a second file declaring
    the same algorithm."""
    where = tmp_path_factory.mktemp("my-elves")
    assert not where.resolve().is_relative_to(ROOT)
    for stem in STEMS:
        shutil.copy(EXAMPLES / f"{stem}.py", where / f"{stem}.py")
    return where


def said(done) -> str:
    return f"exit {done.returncode}\n{done.stdout}\n{done.stderr}"


def test_the_solution_file_stays_short():
    lines = (EXAMPLES / "elves_no_arbiter.py").read_text().splitlines()
    assert len(lines) <= 400


def test_both_solutions_solve_the_one_problem(mine):
    mayors = registry.resolve(str(mine / "elves_no_arbiter.py"))
    assert registry.problem_of(mayors) is PROBLEMS["elves"]
    assert registry.problem_of(registry.SPECS["elves"]) is PROBLEMS["elves"]
    assert registry.flags_of(mayors) is registry.flags_of(registry.SPECS["elves"]) is PROBLEMS["elves"].flags
    options = {"pins": 2, "poison": 5, "contracts": 3, "hamsters": [1, 4], "rounds": 2}
    theirs = registry.build_setup(str(mine / "elves_no_arbiter.py"), 3, dict(options), 7)
    ours = registry.build_setup("elves", 3, dict(options), 7)
    assert theirs.capacities == ours.capacities == {"contract:*": 1, "pins": 2, "poison": 5}
    assert theirs.params == ours.params  # the same town and the same plan for a seed


def test_check_passes_it_with_the_cross_check_agreeing(mine, cli, tmp_path):
    path = str(mine / "elves_no_arbiter.py")
    done = cli("check", "elves", "-a", path, "--cross-check", "--json", cwd=tmp_path)
    assert done.returncode == 0, said(done)
    outcome = json.loads(done.stdout)
    assert outcome["verdict"] == "pass" and outcome["complete"] and not outcome["findings"]
    assert outcome["cross_check"]["agrees"] is True
    # the problem's rules are what it is checked by
    assert "elves: one contract at a time, done by its holder with its tools, never abandoned" in " ".join(
        outcome["properties"]
    )


def test_simulate_verify_and_report_take_it_by_path(mine, cli, tmp_path):
    path = str(mine / "elves_no_arbiter.py")
    scarce = ["--elves", "4", "--pins", "2", "--pins-per-elf", "2", "--poison", "6", "--hamsters", "2-3"]
    done = cli("simulate", "elves", "-a", path, *scarce, "--seed", "3", "--trace", "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and "audit: SAFE" in done.stdout, said(done)
    assert "contracts done: 12 of 12" in done.stdout
    # the problem's audit, not mutexlab's solution's own checks of its messages
    assert "elves: all rounds begun and stopped" in done.stdout
    assert "contract positions" not in done.stdout
    assert json.loads((tmp_path / "t.jsonl").read_text().splitlines()[0])["algorithm"] == "elves-no-arbiter"
    done = cli("verify", "-a", path, "t.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.startswith("elves-no-arbiter: SAFE"), said(done)
    done = cli("report", "-a", path, "t.jsonl", "-o", "t.html", cwd=tmp_path)
    assert done.returncode == 0 and "algorithm-unknown" not in (tmp_path / "t.html").read_text(), said(done)


def test_a_configuration_that_could_never_finish_is_refused_as_for_every_solution(mine, cli, tmp_path):
    path = str(mine / "elves_no_arbiter.py")
    done = cli("simulate", "elves", "-a", path, "--pins", "2", "--pins-per-elf", "3", cwd=tmp_path)
    assert done.returncode == 2 and "an elf needs 3 pins but only 2 exist" in done.stderr, said(done)


def test_explore_session_runs_it_to_its_end_and_shows_the_broken_one(mine):
    session = Session(Config(str(mine / "elves_no_arbiter.py"), 3, {"contracts": 3, "rounds": 2}))
    session.run_to_end(seed=1)
    findings = session.state()["findings"]
    assert findings["status"] == "end" and not findings.get("violations"), findings
    session = Session(Config(str(mine / "elves_no_arbiter_broken.py"), 2, {}))
    session.run_to_end(seed=0)
    findings = session.state()["findings"]
    assert findings["status"] == "violation", findings
    assert "contract-twice" in {v["rule"] for v in findings["violations"]}


def test_compare_runs_both_solutions_on_the_same_town(mine, cli, tmp_path):
    path = str(mine / "elves_no_arbiter.py")
    done = cli(
        "compare", "--nodes", "3", "--algorithms", f"elves,{path}", "-o", "rounds=1", "--json", cwd=tmp_path
    )
    assert done.returncode == 0, said(done)
    runs = {r["algorithm"]: r for r in json.loads(done.stdout)["runs"]}
    assert set(runs) == {"elves", "elves-no-arbiter"}
    for run in runs.values():  # 6 contracts, each a contract, pins and poison entered
        assert run["verdict"] == "ok" and run["entries_by_resource"] == {
            "contract": 6,
            "pins": 6,
            "poison": 6,
        }
    done = cli(
        "compare", "--nodes", "2", "--algorithms", str(mine / "elves_no_arbiter_broken.py"), cwd=tmp_path
    )
    assert done.returncode == 1, said(done)
    done = cli("compare", "--algorithms", f"{path},ricart-agrawala", cwd=tmp_path)
    assert done.returncode == 2 and "one problem at a time" in done.stderr, said(done)
    # a run cut by its event limit is incomplete (exit 3), never ok, and says which limit
    done = cli("compare", "--nodes", "3", "--algorithms", path, "--max-events", "100", "--json", cwd=tmp_path)
    assert done.returncode == 3, said(done)
    (run,) = json.loads(done.stdout)["runs"]
    assert run["verdict"] == "INCOMPLETE" and "event limit (100 events)" in run["incomplete"], run


def test_check_finds_the_broken_variant_and_replay_plays_it_again(mine, cli, tmp_path):
    path = str(mine / "elves_no_arbiter_broken.py")
    done = cli("check", "elves", "-a", path, "--counterexample", "ce.json", cwd=tmp_path)
    assert done.returncode == 1 and "contract:1.1 (capacity 1) held by elf-1×1, elf-2×1" in done.stdout, said(
        done
    )
    assert "replay reproduces it: yes" in done.stdout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = cli("replay", str(tmp_path / "ce.json"), "--algorithm", path, cwd=elsewhere)
    assert done.returncode == 1 and "[capacity] contract:1.1" in done.stdout, said(done)
    assert "[contract-twice] contract:1.1 was taken 2 times" in done.stdout


@pytest.mark.parametrize(
    "algorithms, given, named",
    [
        ("elves", ["--requests", "3"], "--requests"),  # given as its default: refused all the same
        ("elves", ["-M", "2", "--cs", "2"], "--requests, --cs"),
        (str(EXAMPLES / "chandy_misra.py"), ["--think", "2"], "--think"),  # philosophers think too
    ],
)
def test_compare_refuses_the_measured_problems_flags_for_another_problem(algorithms, given, named, capsys):
    """``--requests`` and the dwell times are the measured problem's workload: another problem's
    solutions run on ``--nodes`` and ``-o`` alone, so a run that would ignore them is refused."""
    from mutexlab.cli import main

    assert main(["compare", "--nodes", "2", "--algorithms", algorithms, *given]) == 2
    err = capsys.readouterr().err
    assert f"mutexlab: error: {named}: " in err, err
    assert "--nodes and -o KEY=VALUE" in err, err
    flags = registry.flags_of(registry.solution(registry.canonical(algorithms)).spec)
    options = [f.key for f in flags.flags[1:]]
    assert ", ".join(options) in err, err
