"""The bees' rules are one definition (problems/bees_rules.py): for every rule that ``check``,
``simulate`` and ``verify`` say they check, a bee planted to break it is caught by each of them,
and what ``check`` says it checked is the rules' own list."""

from __future__ import annotations

import json

import pytest
from conftest import audited
from mutexlab_broken.bees_rules import (
    DiesAtOnce,
    EggInTheWrongReed,
    LaysBeyondTheLastReed,
    StopsAtRest,
)
from mutexlab_broken.bees_variants import (
    EggOnTheFlower,
    FliesOffItsReed,
    OneBeeTooManyPerReed,
    OneEggTooMany,
    SurplusWaits,
)

from mutexlab.check.engine import CheckConfig, run_check
from mutexlab.commands.check import properties_checked
from mutexlab.findings import SAFETY
from mutexlab.problems.bees_rules import CHECKS, RULES
from mutexlab.protocols import bees

SMALL = {"flowers": 1, "reeds": 1, "eggs": 1, "cocoons": 1}
TWO_REEDS = {**SMALL, "reeds": 2}

# rule planted, the bee that breaks it, P, options, what check reports (a rule, or the deadlock a
# bee left waiting is in a world), the seeds simulate tries
PLANTED = [
    ("reed-unknown", LaysBeyondTheLastReed, 2, SMALL, "[reed-unknown]"),
    # more eggs than min(eggs·P, cocoons·T) needs a reed beyond T or a reed over its cocoons:
    # check reports the first broken rule of the world, the reed
    ("too-many-eggs", LaysBeyondTheLastReed, 2, SMALL, "[reed-unknown]"),
    ("eggs-per-reed", OneBeeTooManyPerReed, 2, SMALL, "[eggs-per-reed]"),
    ("eggs-per-bee", OneEggTooMany, 2, SMALL, "[eggs-per-bee]"),
    ("egg-off-reed", EggInTheWrongReed, 2, TWO_REEDS, "[egg-off-reed]"),
    ("egg-without-nectar", EggOnTheFlower, 2, SMALL, "[egg-without-nectar]"),
    ("flower-without-reed", FliesOffItsReed, 2, SMALL, "[flower-without-reed]"),
    ("left-waiting", SurplusWaits, 2, SMALL, "deadlock"),
    ("unfinished", StopsAtRest, 1, SMALL, "[unfinished]"),
    ("too-few-eggs", DiesAtOnce, 2, SMALL, "[too-few-eggs]"),
]


def colony(cls, processes, options, seed=0):
    setup = bees.make_setup(processes, dict(options), seed)
    for bee in setup.protocols.values():
        bee.__class__ = cls
        bee.__init__(bee.pid, bee.n, bee.flowers, bee.reeds, bee.eggs, bee.cocoons, bee.clock.time)
    return setup


def test_every_rule_is_planted():
    assert {row[0] for row in PLANTED} == set(RULES.kinds)


def test_check_says_it_checked_the_rules_and_nothing_else():
    result, model = run_check(CheckConfig("bees", 2, dict(SMALL)))
    assert result.complete and not result.findings
    assert properties_checked(model) == [
        "capacity of every resource",
        ", ".join(CHECKS),
        "no rejected input",
        "deadlock",
        "liveness (every request served, weak fairness)",
    ]


@pytest.mark.parametrize("rule, cls, processes, options, shown", PLANTED, ids=[r[0] for r in PLANTED])
def test_check_catches_the_planted_bee(rule, cls, processes, options, shown):
    result, _ = run_check(
        CheckConfig("bees", processes, dict(options)), setup=colony(cls, processes, options)
    )
    assert result.findings, f"check passed {cls.__name__}"
    finding = result.findings[0]
    assert (finding.kind == "deadlock") if shown == "deadlock" else finding.message.startswith(shown)
    # the correct bees pass the same configuration
    ok, _ = run_check(CheckConfig("bees", processes, dict(options)))
    assert not ok.findings and ok.complete


@pytest.mark.parametrize("rule, cls, processes, options, shown", PLANTED, ids=[r[0] for r in PLANTED])
def test_simulate_and_verify_catch_the_planted_bee(rule, cls, processes, options, shown, tmp_path, cli):
    for seed in range(4):
        path = tmp_path / f"seed{seed}.jsonl"
        run = audited(colony(cls, processes, options, seed), seed, path=path)
        if rule in {v.rule for v in run.verdict.violations}:
            break
    else:
        pytest.fail(f"simulate never caught {rule} of {cls.__name__} on seeds 0-3")
    ran = cli("verify", str(path))
    # a safety rule broken is a violation (exit 1); a progress rule, a run left unfinished (exit 3)
    assert ran.returncode == (1 if RULES.kinds[rule] == SAFETY else 3), ran.stdout
    assert f"[{rule}]" in ran.stdout, ran.stdout
    assert audited(colony(bees.Bee, processes, options, seed), seed).verdict.ok


def test_the_bee_beyond_the_last_reed_is_caught_by_every_command(cli, tmp_path):
    """The report's configuration: ``check bees -P 2 -T 1 --eggs 1 --cocoons 1`` passed this bee."""
    flags = ["-P", "2", "-T", "1", "--eggs", "1", "--cocoons", "1"]
    algorithm = ["--algorithm", "mutexlab_broken.bees_beyond_last_reed"]
    scenario = tmp_path / "found.json"
    checked = cli("check", "bees", *algorithm, *flags, "--counterexample", str(scenario))
    assert checked.returncode == 1 and "[reed-unknown] bee-2 entered reed:2" in checked.stdout, checked.stdout
    assert "replay reproduces it: yes" in checked.stdout
    for more in (["--no-reduction"], ["--cross-check"], ["--exact"], ["--search", "bfs"]):
        again = cli("check", "bees", *algorithm, *flags, *more)
        assert again.returncode == 1 and "[reed-unknown]" in again.stdout, (more, again.stdout)
    trace = tmp_path / "t.jsonl"
    simulated = cli("simulate", "bees", *algorithm, *flags, "--trace", str(trace))
    assert (
        simulated.returncode == 1
        and "[reed-unknown]" in simulated.stdout
        and "[too-many-eggs]" in simulated.stdout
    )
    verified = cli("verify", str(trace))
    assert (
        verified.returncode == 1
        and "[reed-unknown]" in verified.stdout
        and "[too-many-eggs]" in verified.stdout
    )
    replayed = cli("replay", str(scenario))
    assert replayed.returncode == 1 and "[reed-unknown]" in replayed.stdout
    assert json.loads(scenario.read_text())["algorithm"] == "mutexlab_broken.bees_beyond_last_reed"
